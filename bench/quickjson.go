package bench

import (
	"bytes"
	"strings"
)

// quickAccept reports whether msg is certainly a JSON-RPC response that
// [checkRPCResponse] accepts: one valid JSON object whose keys are spelled
// exactly, with a "jsonrpc" string, a non-null "result" holding no
// "isError" key, and no "error" other than null. It allocates nothing and
// reads the message once, at several times the speed of encoding/json.
//
// It only ever accepts: whatever it is unsure of (a key with an escape or
// a byte outside ASCII, a key that matches one of the four in another
// case, a non-null "error", deep nesting) it leaves to checkRPCResponse,
// which decides and words the error. FuzzQuickAccept holds it to that.
func quickAccept(msg []byte) bool {
	s := jsonScan{b: msg}
	s.space()
	if !s.eat('{') {
		return false
	}
	var result []byte
	s.space()
	if s.eat('}') {
		return false // no result
	}
	for {
		s.space()
		key, ok := s.key()
		if !ok {
			return false
		}
		s.space()
		if !s.eat(':') {
			return false
		}
		s.space()
		start := s.i
		if !s.value(0) {
			return false
		}
		val := msg[start:s.i]
		switch string(key) {
		case "jsonrpc":
			if val[0] != '"' {
				return false
			}
		case "id":
		case "result":
			result = val
		case "error":
			if string(val) != "null" {
				return false
			}
		default:
			for _, k := range rpcKeys {
				if strings.EqualFold(string(key), k) {
					return false // encoding/json matches keys in any case
				}
			}
		}
		s.space()
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			break
		}
		return false
	}
	s.space()
	if s.i != len(msg) {
		return false
	}
	return len(result) > 0 && string(result) != "null" && !bytes.Contains(result, isErrorKey)
}

var rpcKeys = [...]string{"jsonrpc", "id", "result", "error"}

// maxQuickDepth bounds the nesting quickAccept follows; deeper messages go
// to encoding/json.
const maxQuickDepth = 256

// jsonScan is a validating JSON scanner over b that only says whether what
// it reads is well-formed, as encoding/json's scanner would: strings may
// hold any byte from 0x20 up (invalid UTF-8 included), escapes are the
// eight of RFC 8259 and \uXXXX, numbers follow its grammar.
type jsonScan struct {
	b []byte
	i int
}

func (s *jsonScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScan) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// key reads an object key and returns its bytes between the quotes; ok is
// false when the key is malformed or holds an escape or a non-ASCII byte
// (its decoded form could then match another key).
func (s *jsonScan) key() ([]byte, bool) {
	if !s.eat('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c < 0x20 || c == '\\' || c >= 0x80:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// str reads the rest of a string after its opening quote.
func (s *jsonScan) str() bool {
	for {
		// Skip the plain bytes fast: most of a response is one long string.
		j := s.i
		for j < len(s.b) && plainStringByte[s.b[j]] {
			j++
		}
		s.i = j
		if s.i >= len(s.b) {
			return false
		}
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return true
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) {
					return false
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !isHex(h) {
						return false
					}
				}
				s.i += 6
			default:
				return false
			}
		default: // a control character
			return false
		}
	}
}

// plainStringByte marks the bytes a JSON string holds as they are.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func (s *jsonScan) value(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		s.i++
		return s.str()
	case c == '{':
		if depth >= maxQuickDepth {
			return false
		}
		s.i++
		s.space()
		if s.eat('}') {
			return true
		}
		for {
			s.space()
			if !s.eat('"') || !s.str() {
				return false
			}
			s.space()
			if !s.eat(':') {
				return false
			}
			s.space()
			if !s.value(depth + 1) {
				return false
			}
			s.space()
			if s.eat(',') {
				continue
			}
			return s.eat('}')
		}
	case c == '[':
		if depth >= maxQuickDepth {
			return false
		}
		s.i++
		s.space()
		if s.eat(']') {
			return true
		}
		for {
			s.space()
			if !s.value(depth + 1) {
				return false
			}
			s.space()
			if s.eat(',') {
				continue
			}
			return s.eat(']')
		}
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return false
}

func (s *jsonScan) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

func (s *jsonScan) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

func (s *jsonScan) number() bool {
	s.eat('-')
	if s.eat('0') {
		// no more integer digits after a leading zero
	} else if s.digits() == 0 {
		return false
	}
	if s.eat('.') && s.digits() == 0 {
		return false
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if !s.eat('+') {
			s.eat('-')
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}
