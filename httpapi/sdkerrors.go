package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// The go-sdk words some of its refusals with Go internals: a tools/call
// whose params do not decode is answered "handling 'tools/call': invalid
// params: unmarshaling "…" into a *mcp.CallToolParamsRaw: json: cannot
// unmarshal "5}" into Go struct field mcp.CallToolParamsRaw.name of type
// string", a malformed message "malformed payload: … into Go struct field
// jsonrpc2.wireDecode.jsonrpc of type string". sdkErrorWriter sits between
// the go-sdk handler and the client and rewords those texts — the message
// of a JSON-RPC error, or the text of a plain-text refusal — as a JSON
// path and what it should have been ("handling 'tools/call': invalid
// params: name must be a string"). Everything else passes byte for byte.

// sdkErrorWriter rewords the go-sdk's error texts that name Go types (see
// above). The go-sdk writes each JSON answer (and each plain-text refusal)
// in one Write, which is what it rewords.
type sdkErrorWriter struct {
	http.ResponseWriter
}

func (w *sdkErrorWriter) Write(p []byte) (int, error) {
	if !goInternals(p) {
		return w.ResponseWriter.Write(p)
	}
	q := cleanSDKOutput(w.Header().Get("Content-Type"), p)
	if _, err := w.ResponseWriter.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *sdkErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes a flush on.
func (w *sdkErrorWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// goMarkers are the phrases of the go-sdk's (and encoding/json's) error
// texts that name Go types.
var goMarkers = [][]byte{
	[]byte("Go struct field"),
	[]byte("Go value of type"),
	[]byte("json: cannot unmarshal"),
	[]byte("invalid ID type"),
}

func goInternals(p []byte) bool {
	for _, m := range goMarkers {
		if bytes.Contains(p, m) {
			return true
		}
	}
	return false
}

// cleanSDKOutput rewords the error texts in one write of the go-sdk's:
// JSON-RPC messages (one, or a batch), server-sent events carrying them,
// or a plain-text refusal.
func cleanSDKOutput(contentType string, p []byte) []byte {
	switch baseMediaType(contentType) {
	case "application/json":
		return cleanRPC(p)
	case "text/event-stream":
		var out bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(p))
		sc.Buffer(nil, len(p)+1)
		for sc.Scan() {
			line := sc.Bytes()
			if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				out.WriteString("data: ")
				out.Write(cleanRPC(data))
			} else {
				out.Write(line)
			}
			out.WriteByte('\n')
		}
		if !bytes.HasSuffix(p, []byte("\n")) {
			out.Truncate(out.Len() - 1)
		}
		return out.Bytes()
	default:
		text := strings.TrimSuffix(string(p), "\n")
		out := cleanSDKText(text)
		if len(text) < len(p) {
			out += "\n"
		}
		return []byte(out)
	}
}

// cleanRPC rewords the error messages of a JSON-RPC message or batch,
// leaving every other byte as it was; anything it cannot read passes
// unchanged.
func cleanRPC(p []byte) []byte {
	var batch []json.RawMessage
	if json.Unmarshal(p, &batch) == nil {
		for _, m := range batch {
			p = cleanRPCMessage(p, m)
		}
		return p
	}
	return cleanRPCMessage(p, p)
}

// cleanRPCMessage rewords the error message of msg, a JSON-RPC message
// inside p, and returns p with it replaced.
func cleanRPCMessage(p, msg []byte) []byte {
	var m struct {
		Error *struct {
			Message json.RawMessage `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Error == nil {
		return p
	}
	var text string
	if json.Unmarshal(m.Error.Message, &text) != nil || !goInternals([]byte(text)) {
		return p
	}
	clean, err := json.Marshal(cleanSDKText(text))
	if err != nil {
		return p
	}
	old := append([]byte(`"message":`), m.Error.Message...)
	i := bytes.Index(p, old)
	if i < 0 {
		return p
	}
	out := make([]byte, 0, len(p)-len(m.Error.Message)+len(clean))
	out = append(out, p[:i+len(`"message":`)]...)
	out = append(out, clean...)
	return append(out, p[i+len(old):]...)
}

// cleanSDKText rewords one error text that names Go types: what precedes
// the failed decoding ("handling 'tools/call': invalid params: ") is kept,
// the rest becomes "<path> must be <kind>".
func cleanSDKText(text string) string {
	if !goInternals([]byte(text)) {
		return text
	}
	if i := strings.Index(text, "invalid ID type"); i >= 0 {
		return text[:i] + "invalid ID type: an id is a string or a number"
	}
	j := strings.Index(text, "json: cannot unmarshal")
	if j < 0 {
		return sdkFallback(text)
	}
	prefix := text[:j]
	if i := strings.Index(prefix, "unmarshaling "); i >= 0 {
		prefix = prefix[:i]
	}
	tail := text[j:]
	var detail string
	if i := strings.LastIndex(tail, " into Go struct field "); i >= 0 {
		spec := tail[i+len(" into Go struct field "):]
		field, goType, ok := cutLast(spec, " of type ")
		if !ok {
			return sdkFallback(text)
		}
		// field is pkg.Type.path: the path is what follows the type.
		path := ""
		if _, rest, ok := strings.Cut(field, "."); ok {
			if _, p, ok := strings.Cut(rest, "."); ok {
				path = p
			}
		}
		if path == "" {
			path = "a member"
		}
		detail = path + " " + goKind(goType)
	} else if i := strings.LastIndex(tail, " into Go value of type "); i >= 0 {
		goType := tail[i+len(" into Go value of type "):]
		switch {
		case strings.Contains(goType, ".") && strings.Contains(prefix, "params"):
			detail = "params must be an object"
		case strings.Contains(goType, "."):
			detail = "the message must be an object"
		default:
			detail = "a member " + goKind(goType)
		}
	} else {
		return sdkFallback(text)
	}
	out := prefix + detail
	if goInternals([]byte(out)) {
		return sdkFallback(text)
	}
	return out
}

// sdkFallback is the text for an error naming Go types that cleanSDKText
// cannot read: what precedes the decoding, and that a value has the wrong
// type.
func sdkFallback(text string) string {
	prefix := text
	for _, cut := range []string{"unmarshaling ", "json: cannot", "invalid ID type"} {
		if i := strings.Index(prefix, cut); i >= 0 {
			prefix = prefix[:i]
		}
	}
	return prefix + "a value has the wrong type"
}

func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// goKind says what JSON a Go type (as encoding/json prints it) decodes
// from: "must be a string", "must be an object", or "has the wrong type".
func goKind(t string) string {
	t = strings.TrimLeft(t, "*")
	switch {
	case t == "string":
		return "must be a string"
	case t == "bool":
		return "must be true or false"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "must be an integer"
	case strings.HasPrefix(t, "float"):
		return "must be a number"
	case strings.HasPrefix(t, "[]"):
		return "must be an array"
	case strings.HasPrefix(t, "map["):
		return "must be an object"
	}
	return "has the wrong type"
}
