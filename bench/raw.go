package bench

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// NewRawHandler returns the limit the endpoint is measured against: a
// plain net/http JSON-RPC handler with no MCP library. It answers every
// POSTed JSON-RPC request (an object with an id and a method) with the
// result a tools/call of the baseline read_world would give — one text
// block holding BaselinePayload — and anything else with a JSON-RPC error.
// It decodes the request with encoding/json and writes a response whose
// bytes are built once, except for the id.
func NewRawHandler() http.Handler {
	text, _ := json.Marshal(BaselinePayload())
	prefix := []byte(`{"jsonrpc":"2.0","id":`)
	suffix := append(append([]byte(`,"result":{"content":[{"type":"text","text":`), text...), []byte(`}]}}`)...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4<<20))
		if err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		var req struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.JSONRPC != "2.0" || len(req.ID) == 0 || req.Method == "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`))
			return
		}
		var out bytes.Buffer
		out.Grow(len(prefix) + len(req.ID) + len(suffix))
		out.Write(prefix)
		out.Write(req.ID)
		out.Write(suffix)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(out.Len()))
		w.Write(out.Bytes())
	})
}
