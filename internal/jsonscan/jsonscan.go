// Package jsonscan finds the parts of JSON text without decoding it: where
// a value ends, the members of an object, whether an object has a key, and
// a string's value. It copies nothing but decoded keys: what it returns
// points into its input.
//
// What it promises: it agrees with encoding/json. In Strict mode a value is
// accepted exactly when encoding/json accepts it (json.Valid, including its
// nesting limit of 10000), and a value ends where a json.Decoder ends it.
// Unquote decodes a string as json.Unmarshal does (invalid UTF-8 and lone
// surrogates become U+FFFD). An object's members come in the order written,
// duplicates included, each key decoded as encoding/json decodes it; where
// keys repeat, the last one is what encoding/json keeps (Lookup returns that
// one).
//
// Loose mode checks only the structure of the text it is asked about — an
// object's braces, keys, colons and commas, and the space around them —
// and delimits its values without checking them: a string runs to its
// closing quote (its escapes unchecked), an object or array to the bracket
// that balances its opening one (strings inside skipped, brackets of either
// kind counted), anything else to the next space, comma, colon or closing
// bracket. On text that encoding/json accepts, Loose and Strict report the
// same values, ends and members; on other text Loose may accept what Strict
// refuses, so that a caller that checks the values it keeps can say which
// one is wrong. Keys are checked strictly in both modes.
//
// FuzzScan holds both modes, and Unquote, to encoding/json on arbitrary
// input.
package jsonscan

import (
	"bytes"
	"errors"
	"fmt"
)

// Mode is how much of the text a scan checks: Strict or Loose (see the
// package comment).
type Mode uint8

const (
	// Strict accepts what encoding/json accepts and nothing else.
	Strict Mode = iota
	// Loose checks structure only and delimits values (see the package
	// comment).
	Loose
)

// MaxDepth is encoding/json's limit on the nesting of objects and arrays:
// deeper text is not valid to it, nor to Strict.
const MaxDepth = 10000

// ErrNotObject is the error for text that does not start (after space) with
// '{' where an object is wanted.
var ErrNotObject = errors.New("jsonscan: not a JSON object")

// SyntaxError is the error for text that is not what the scan wants; Offset
// is the index of the byte where the scan stopped.
type SyntaxError struct {
	Offset int
	msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("jsonscan: %s at offset %d", e.msg, e.Offset)
}

func syntaxError(i int, msg string) error { return &SyntaxError{Offset: i, msg: msg} }

// IsSpace reports whether c is JSON whitespace: space, tab, newline or
// carriage return.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace returns the index of the first byte at or after i that is not
// JSON whitespace, or len(b).
func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// TrimSpace returns b without the JSON whitespace around it.
func TrimSpace(b []byte) []byte {
	i := SkipSpace(b, 0)
	j := len(b)
	for j > i && IsSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// Valid reports whether b is one JSON value with only space around it, as
// the mode checks it: in Strict mode, exactly json.Valid(b).
func (m Mode) Valid(b []byte) bool {
	i := SkipSpace(b, 0)
	end, err := m.Skip(b, i)
	return err == nil && SkipSpace(b, end) == len(b)
}

// Skip returns the index just past the value that starts at b[i] (no space
// before it). Bytes after the value are not looked at, as a json.Decoder
// leaves them for its next value: Strict.Skip of "12x" is 2.
func (m Mode) Skip(b []byte, i int) (int, error) {
	if m == Loose {
		return skipLoose(b, i)
	}
	return skipStrict(b, i, 0)
}

// String scans the string that starts at b[i] (a quote) and returns the
// index just past its closing quote and whether it holds a backslash (an
// escape, which Unquote decodes). Strict checks the string's escapes and
// that it holds no control characters; Loose only finds its end.
func (m Mode) String(b []byte, i int) (end int, escaped bool, err error) {
	if m == Loose {
		return stringLoose(b, i)
	}
	return stringStrict(b, i)
}

// stringLoose finds the quote that closes the string at b[i]: the first
// one after an even number of backslashes (a backslash escapes whatever
// byte follows it). Short strings are walked byte by byte; past that,
// bytes.IndexByte finds the next quote.
func stringLoose(b []byte, i int) (end int, escaped bool, err error) {
	if i >= len(b) || b[i] != '"' {
		return 0, false, syntaxError(i, "want a string")
	}
	j := i + 1
	for n := min(len(b), j+16); j < n; j++ {
		switch b[j] {
		case '"':
			return j + 1, escaped, nil
		case '\\':
			escaped = true
			j++
		}
	}
	for j < len(b) {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			break
		}
		q := j + k
		if bytes.IndexByte(b[j:q], '\\') >= 0 {
			escaped = true
		}
		n := 0
		for p := q - 1; p >= j && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, escaped, nil
		}
		j = q + 1
	}
	return 0, false, syntaxError(len(b), "unterminated string")
}

// plainByte marks the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func stringStrict(b []byte, i int) (end int, escaped bool, err error) {
	if i >= len(b) || b[i] != '"' {
		return 0, false, syntaxError(i, "want a string")
	}
	j := i + 1
	for {
		for j < len(b) && plainByte[b[j]] {
			j++
		}
		if j >= len(b) {
			return 0, false, syntaxError(len(b), "unterminated string")
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, escaped, nil
		case c == '\\':
			escaped = true
			if j+1 >= len(b) {
				return 0, false, syntaxError(len(b), "unterminated string")
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				for k := j + 2; k < j+6; k++ {
					if k >= len(b) {
						return 0, false, syntaxError(len(b), "unterminated string")
					}
					if !isHex(b[k]) {
						return 0, false, syntaxError(k, `invalid \u escape`)
					}
				}
				j += 6
			default:
				return 0, false, syntaxError(j+1, "invalid escape")
			}
		default:
			return 0, false, syntaxError(j, "control character in string")
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skipLoose delimits the value at b[i] (see the package comment).
func skipLoose(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, syntaxError(i, "want a value")
	}
	switch b[i] {
	case '"':
		end, _, err := stringLoose(b, i)
		return end, err
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, _, err := stringLoose(b, i)
				if err != nil {
					return 0, err
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, syntaxError(len(b), "unterminated object or array")
	case '}', ']', ',', ':':
		return 0, syntaxError(i, "want a value")
	default:
		j := i
		for j < len(b) && !IsSpace(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ':' {
			j++
		}
		return j, nil
	}
}

// skipStrict returns the end of the value at b[i], which sits depth levels
// deep in the text encoding/json would check, validating it as
// encoding/json does.
func skipStrict(b []byte, i, depth int) (int, error) {
	var buf [64]byte
	open := buf[:0] // the brackets open inside the value
	var err error
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return 0, syntaxError(i, "want a value")
		}
		closed := true // the value ended at i (false: it opened a bracket)
		switch c := b[i]; {
		case c == '"':
			if i, _, err = stringStrict(b, i); err != nil {
				return 0, err
			}
		case c == '{' || c == '[':
			if depth+len(open)+1 > MaxDepth {
				return 0, syntaxError(i, "nested too deep")
			}
			open = append(open, c)
			i = SkipSpace(b, i+1)
			switch {
			case c == '{' && i < len(b) && b[i] == '}',
				c == '[' && i < len(b) && b[i] == ']':
				open = open[:len(open)-1]
				i++
			case c == '{':
				if i, err = strictKey(b, i); err != nil {
					return 0, err
				}
				closed = false
			default:
				closed = false
			}
		case c == '-' || '0' <= c && c <= '9':
			if i, err = skipNumber(b, i); err != nil {
				return 0, err
			}
		case c == 't':
			i, err = skipLiteral(b, i, "true")
		case c == 'f':
			i, err = skipLiteral(b, i, "false")
		case c == 'n':
			i, err = skipLiteral(b, i, "null")
		default:
			return 0, syntaxError(i, "want a value")
		}
		if err != nil {
			return 0, err
		}
		if !closed {
			continue
		}
		// A value ended at i: close brackets until another value is due.
		for {
			if len(open) == 0 {
				return i, nil
			}
			i = SkipSpace(b, i)
			if i >= len(b) {
				return 0, syntaxError(i, "unterminated object or array")
			}
			top := open[len(open)-1]
			if c := b[i]; c == ',' {
				i = SkipSpace(b, i+1)
				if top == '{' {
					if i, err = strictKey(b, i); err != nil {
						return 0, err
					}
				}
				break
			} else if top == '{' && c == '}' || top == '[' && c == ']' {
				open = open[:len(open)-1]
				i++
				continue
			}
			return 0, syntaxError(i, "want a comma or a closing bracket")
		}
	}
}

// strictKey scans `"key" :` and the space after it from b[i], returning
// the index where the member's value starts.
func strictKey(b []byte, i int) (int, error) {
	end, _, err := stringStrict(b, i)
	if err != nil {
		return 0, err
	}
	i = SkipSpace(b, end)
	if i >= len(b) || b[i] != ':' {
		return 0, syntaxError(i, "want a colon")
	}
	return SkipSpace(b, i+1), nil
}

// skipNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? from
// b[i]; the number ends at the first byte that cannot continue it.
func skipNumber(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return 0, syntaxError(i, "want a digit")
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return 0, syntaxError(i+1, "want a digit")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if j := digits(b, i); j > i {
			i = j
		} else {
			return 0, syntaxError(i, "want a digit")
		}
	}
	return i, nil
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(b) || b[i+k] != lit[k] {
			return 0, syntaxError(i+k, "want "+lit)
		}
	}
	return i + len(lit), nil
}
