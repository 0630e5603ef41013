package httpapi

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkjson "github.com/segmentio/encoding/json"

	"github.com/worldforge-go/worldforge/internal/jsonscan"
)

// Decoding as the go-sdk decodes, without its per-call buffers.
//
// The go-sdk decodes every message with a fresh segmentio json.Decoder over
// a bytes.Reader (its internal/json package), and each Decoder allocates a
// 32 KiB read buffer before it parses anything: three of them for a
// tools/call (the envelope, the method, the params), about 100 KB of garbage
// per request, which was 83 % of the fast path's allocated bytes. A Decoder's
// Decode is its reader's first JSON value handed to json.Parse with the
// Decoder's flags; the input here is already in memory, so calling Parse on
// it directly decodes the same value the same way (Parse skips leading
// space, stops after the first value and ignores what follows, as Decode
// does; the flags it derives from its input only select faster routines
// for ASCII and escape-free text). The differential tests in
// fastpath_test.go hold both paths to identical answers.

// sdkMaxDepth is the go-sdk's limit on the nesting of a message
// (internal/json's defaultMaxDepth): deeper input is an error there, so the
// fast path leaves it to the SDK.
const sdkMaxDepth = 1000

// sdkParseFlags are the flags the go-sdk's decoder sets: struct fields match
// their JSON names exactly, not case-insensitively.
const sdkParseFlags = sdkjson.DontMatchCaseInsensitiveStructFields

// sdkUnmarshal decodes data into v as the go-sdk's internal JSON decoder
// does. data holds one JSON value whose depth the caller has bounded.
func sdkUnmarshal(data []byte, v any) error {
	_, err := sdkjson.Parse(data, v, sdkParseFlags)
	return err
}

// wireRequest has the shape the go-sdk decodes a JSON-RPC message into
// (jsonrpc2.wireDecode): method raw, so that a present "method" key is told
// apart from an absent one.
type wireRequest struct {
	VersionTag string          `json:"jsonrpc"`
	ID         any             `json:"id,omitempty"`
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// decodeRequest decodes body as jsonrpc.DecodeMessage does and returns the
// request it holds; ok is false when DecodeMessage would fail or would
// return something other than a request (a response), in which case the
// fast path leaves the body to the SDK.
func decodeRequest(body []byte) (req *jsonrpc.Request, ok bool) {
	if tooDeep(body, sdkMaxDepth) {
		return nil, false
	}
	if req := plainRequest(body); req != nil {
		return req, true
	}
	return decodeWireRequest(body)
}

// decodeWireRequest is decodeRequest with the go-sdk's decoder.
func decodeWireRequest(body []byte) (req *jsonrpc.Request, ok bool) {
	var w wireRequest
	if sdkUnmarshal(body, &w) != nil || w.VersionTag != "2.0" {
		return nil, false
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil || len(w.Method) == 0 {
		return nil, false
	}
	var method string
	if sdkUnmarshal(w.Method, &method) != nil {
		return nil, false
	}
	return &jsonrpc.Request{ID: id, Method: method, Params: w.Params}, true
}

// plainRequest reads the request in body, a valid JSON object, without
// decoding it, when it is written plainly: the keys jsonrpc ("2.0"),
// method (a string) and at most one each of id (a string or an integer
// of at most 15 digits) and params (not null), each once and without
// escapes, any other key but result and error (which the decoder ignores),
// strings without escapes in valid UTF-8. It returns what decodeRequest's
// decoding gives for such a body, or nil for any other body, which the
// decoder then reads. FuzzDecodeRequest holds the two to the same answers.
func plainRequest(body []byte) *jsonrpc.Request {
	var version, id, method, params []byte
	it := jsonscan.Loose.Members(body)
	for it.Next() {
		m := it.Member()
		key := m.RawKey[1 : len(m.RawKey)-1]
		var slot *[]byte
		switch string(key) {
		case "jsonrpc":
			slot = &version
		case "id":
			slot = &id
		case "method":
			slot = &method
		case "params":
			slot = &params
		case "result", "error":
			return nil
		default:
			if bytes.IndexByte(key, '\\') >= 0 {
				return nil // it may spell one of the keys above
			}
			continue
		}
		if *slot != nil {
			return nil // twice
		}
		*slot = m.Value
	}
	if it.Err() != nil || string(version) != `"2.0"` || isNull(params) {
		return nil
	}
	name, ok := plainString(method)
	if !ok {
		return nil
	}
	req := &jsonrpc.Request{Method: name, Params: params}
	switch {
	case id == nil:
	case id[0] == '"':
		s, ok := plainString(id)
		if !ok {
			return nil
		}
		req.ID, _ = jsonrpc.MakeID(s) // a string always makes an id
	default:
		digits := id
		if digits[0] == '-' {
			digits = digits[1:]
		}
		if len(digits) == 0 || len(digits) > 15 || slices.ContainsFunc(digits, func(c byte) bool { return c < '0' || c > '9' }) {
			return nil // a fraction, an exponent, null, a large number, …
		}
		n, err := strconv.ParseInt(string(id), 10, 64)
		if err != nil {
			return nil
		}
		req.ID, _ = jsonrpc.MakeID(float64(n)) // exact: at most 15 digits
	}
	return req
}

// tooDeep reports whether the JSON text b nests objects and arrays more
// than max levels deep, counting brackets outside strings (as the go-sdk's
// check does, before any parsing: unbalanced closers do not go below zero).
func tooDeep(b []byte, max int) bool {
	if len(b) <= max {
		return false // more than max levels take more than max bytes
	}
	depth := 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}
