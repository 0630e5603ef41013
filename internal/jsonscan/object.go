package jsonscan

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Member is one member of a JSON object, pointing into the scanned text.
type Member struct {
	RawKey  []byte // the key as written, quotes included
	Value   []byte // the value as written, without the space around it
	escaped bool   // RawKey holds a backslash
}

// Key returns the member's key decoded as encoding/json decodes it.
func (m Member) Key() string {
	s := m.RawKey[1 : len(m.RawKey)-1]
	if !m.escaped && utf8.Valid(s) {
		return string(s)
	}
	return string(unquote(s))
}

// KeyIs reports whether the member's decoded key is key, without
// allocating when the key is written without escapes.
func (m Member) KeyIs(key string) bool {
	s := m.RawKey[1 : len(m.RawKey)-1]
	if !m.escaped && utf8.Valid(s) {
		return string(s) == key
	}
	return m.Key() == key
}

// Members is a scan of the members of an object, from Mode.Members:
//
//	it := jsonscan.Strict.Members(b)
//	for it.Next() {
//		m := it.Member()
//		…
//	}
//	if err := it.Err(); err != nil { … }
//
// Next returns false at the object's end or at the first error; Err is nil
// if the whole text was one object with only space around it.
type Members struct {
	b       []byte
	i       int // where the scan goes on
	ks, ke  int // the member's key, b[ks:ke]
	vs, ve  int // the member's value, b[vs:ve]
	escaped bool
	mode    Mode
	started bool
	done    bool
	err     error
}

// Members starts a scan of the members of the object b holds (space
// around it allowed). Err is ErrNotObject if b does not start with '{', a
// *SyntaxError if the object is malformed (in the mode's sense) or
// followed by anything but space.
func (m Mode) Members(b []byte) Members { return Members{b: b, mode: m} }

// Next scans the next member, reporting false at the end of the object or
// on an error.
func (it *Members) Next() bool {
	if it.done {
		return false
	}
	b := it.b
	i := it.i
	if !it.started {
		it.started = true
		i = SkipSpace(b, 0)
		if i >= len(b) || b[i] != '{' {
			return it.fail(ErrNotObject)
		}
		i = SkipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return it.end(i + 1)
		}
	} else {
		i = SkipSpace(b, i)
		if i >= len(b) {
			return it.fail(syntaxError(i, "unterminated object"))
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case '}':
			return it.end(i + 1)
		default:
			return it.fail(syntaxError(i, "want a comma or a closing brace"))
		}
	}
	if i >= len(b) || b[i] != '"' {
		return it.fail(syntaxError(i, "want a key"))
	}
	ke, esc, err := stringStrict(b, i)
	if err != nil {
		return it.fail(err)
	}
	it.ks, it.ke, it.escaped = i, ke, esc
	i = SkipSpace(b, ke)
	if i >= len(b) || b[i] != ':' {
		return it.fail(syntaxError(i, "want a colon"))
	}
	i = SkipSpace(b, i+1)
	var ve int
	if it.mode == Loose {
		ve, err = skipLoose(b, i)
	} else {
		ve, err = skipStrict(b, i, 1)
	}
	if err != nil {
		return it.fail(err)
	}
	it.vs, it.ve, it.i = i, ve, ve
	return true
}

func (it *Members) fail(err error) bool {
	it.err, it.done = err, true
	return false
}

// end checks that only space follows the closing brace at i-1.
func (it *Members) end(i int) bool {
	if j := SkipSpace(it.b, i); j != len(it.b) {
		return it.fail(syntaxError(j, "text after the object"))
	}
	it.done = true
	return false
}

// Member returns the member Next scanned.
func (it *Members) Member() Member {
	return Member{RawKey: it.b[it.ks:it.ke], Value: it.b[it.vs:it.ve], escaped: it.escaped}
}

// Err returns the error that ended the scan, or nil.
func (it *Members) Err() error { return it.err }

// Split returns the members of the object b holds, in order, duplicates
// included (see Members for the errors).
func (m Mode) Split(b []byte) ([]Member, error) {
	var ms []Member
	it := m.Members(b)
	for it.Next() {
		ms = append(ms, it.Member())
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return ms, nil
}

// Lookup returns the value of the member whose decoded key is key in the
// object b holds — the last one if the key repeats, as encoding/json keeps
// the last — and whether there is one. A nil error means b is an object
// (in the mode's sense): so Strict.Lookup answers "is this a JSON object
// whose members include key".
func (m Mode) Lookup(b []byte, key string) (value []byte, found bool, err error) {
	it := m.Members(b)
	for it.Next() {
		if mb := it.Member(); mb.KeyIs(key) {
			value, found = mb.Value, true
		}
	}
	if err := it.Err(); err != nil {
		return nil, false, err
	}
	return value, found, nil
}

// PlainString returns the text between the quotes of the JSON string raw
// (quotes included) if it is printable ASCII without escapes — the string's
// value byte for byte — and whether it is.
func PlainString(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	s := raw[1 : len(raw)-1]
	for _, c := range s {
		if c < 0x20 || c > 0x7e || c == '\\' || c == '"' {
			return nil, false
		}
	}
	return s, true
}

// Unquote returns the value of the JSON string raw (quotes included, no
// space around it) as json.Unmarshal decodes it into a string, or a
// *SyntaxError if raw is not one valid JSON string.
func Unquote(raw []byte) (string, error) {
	end, esc, err := stringStrict(raw, 0)
	if err != nil {
		return "", err
	}
	if end != len(raw) {
		return "", syntaxError(end, "text after the string")
	}
	s := raw[1 : len(raw)-1]
	if !esc && utf8.Valid(s) {
		return string(s), nil
	}
	return string(unquote(s)), nil
}

// unquote decodes the contents of a valid JSON string as encoding/json
// does: escapes decoded, a surrogate pair joined, a lone surrogate and
// each byte of invalid UTF-8 replaced by U+FFFD.
func unquote(s []byte) []byte {
	out := make([]byte, 0, len(s)+utf8.UTFMax)
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			switch e := s[r+1]; e {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				rr := hex4(s[r+2:])
				r += 6
				if utf16.IsSurrogate(rr) {
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if d := utf16.DecodeRune(rr, hex4(s[r+2:])); d != unicode.ReplacementChar {
							out = utf8.AppendRune(out, d)
							r += 6
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				out = utf8.AppendRune(out, rr)
				continue
			default: // " \ /
				out = append(out, e)
			}
			r += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			out = utf8.AppendRune(out, rr)
			r += size
		}
	}
	return out
}

// hex4 decodes the four hex digits at the start of s (checked by the scan).
func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
