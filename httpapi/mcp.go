package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/jsonscan"
	"github.com/worldforge-go/worldforge/internal/obs"
)

// sseKeepAlive is how often an open GET /mcp stream sends a comment line,
// so that proxies and clients see it alive.
const sseKeepAlive = 25 * time.Second

// sseWriteTimeout bounds one keep-alive write of an open stream. The
// server's WriteTimeout (ConnLimits), which would fail the first keep-alive
// written after it, is lifted for the stream, which is meant to stay open;
// a client that stops reading is still cut off. (net/http itself lifts the
// read deadline once a request without a body is read.)
const sseWriteTimeout = 10 * time.Second

// serveMCP is the /mcp endpoint (after authentication):
//
//	POST    JSON-RPC, handled by the go-sdk's stateless streamable handler
//	GET     406 unless the client accepts text/event-stream; 429 over the
//	        stream caps (streams.go); otherwise an SSE stream that stays
//	        open and quiet (a stateless server never initiates messages)
//	        until the client or the server closes it, or its credential
//	        stops verifying
//	DELETE  200: there is no session to end
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		s.serveMCPPost(w, r)
	case http.MethodGet:
		s.serveMCPStream(w, r)
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method_not_allowed"})
	}
}

// serveMCPPost bounds and checks the body before the go-sdk sees it: an
// oversized body is 413 and a body that is not JSON is a JSON-RPC parse
// error (-32700), both as JSON-RPC error responses, and neither reaches a
// tool. Everything else is the go-sdk's, with its error texts reworded
// where they name Go types.
func (s *Server) serveMCPPost(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r, s.opts.MaxBodyBytes)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("request body exceeds %d bytes", mbe.Limit))
			return
		}
		writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "could not read the request body")
		return
	}
	if !jsonscan.Strict.Valid(body) { // json.Valid's verdict, in a third of its time
		writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "Parse error: the body is not valid JSON")
		return
	}
	declined := s.fastToolCall(w, r, body)
	s.noteMCPPath(r, declined)
	if declined == fastServed {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	// The go-sdk names Go types in some refusals; the client sees them
	// reworded (sdkerrors.go).
	s.mcp.ServeHTTP(&sdkErrorWriter{w}, r)
}

// readBody reads r's body, at most max bytes (more is a
// *http.MaxBytesError), into one buffer of its declared length when it has
// one: io.ReadAll would start small and grow.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, max)
	if n := r.ContentLength; n > 0 && n <= max {
		buf := make([]byte, n)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(body)
}

// MCP paths, as the request log (mcp_path) and the metrics (path) name
// them.
const (
	mcpPathFast = "fast"
	mcpPathSDK  = "sdk"
)

// noteMCPPath records in the request's observability record and metrics
// which path answers r: the fast path (declined is fastServed) or the
// go-sdk handler, and why the fast path declined. Constants only, no
// allocation.
func (s *Server) noteMCPPath(r *http.Request, declined fastDecline) {
	path := mcpPathSDK
	if declined == fastServed {
		path = mcpPathFast
	}
	obs.FromContext(r.Context()).SetMCPPath(path, declined.String())
	if s.metrics != nil {
		s.mcpRequests[declined].Inc()
	}
}

// writeRPCError writes a JSON-RPC error response with a null id.
func writeRPCError(w http.ResponseWriter, status int, code int64, msg string) {
	writeJSON(w, status, map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": msg},
	})
}

func (s *Server) serveMCPStream(w http.ResponseWriter, r *http.Request) {
	if !acceptsEventStream(r.Header.Values("Accept")) {
		writeJSON(w, http.StatusNotAcceptable, map[string]string{
			"error":  "not_acceptable",
			"detail": "GET /mcp needs Accept: text/event-stream",
		})
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal"})
		return
	}
	actor := worldforge.ActorFromContext(r.Context())
	key := credentialKey(actor, r)
	if ok, detail := s.streams.acquire(key); !ok {
		writeRateLimited(w, streamRetryAfter, detail)
		return
	}
	defer s.streams.release(key)
	token, _ := bearerToken(r.Header.Get("Authorization"))
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	tick := time.NewTicker(sseKeepAlive)
	defer tick.Stop()
	recheck := time.NewTicker(streamRecheck)
	defer recheck.Stop()
	verified := time.Now() // the last time the credential verified
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		case <-recheck.C:
			switch v, err := s.streamCredential(r.Context(), token, actor); v {
			case streamValid:
				verified = time.Now()
			case streamRefused:
				return
			case streamUnknown:
				if r.Context().Err() != nil {
					return // the client left
				}
				if time.Since(verified) > streamUnverifiedGrace {
					s.log.WarnContext(r.Context(), "stream closed: its credential could not be re-verified", "user_id", actor.UserID, "key_id", actor.KeyID, "err", err)
					return
				}
			}
		case <-tick.C:
			_ = rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

func acceptsEventStream(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			mt = strings.ToLower(strings.TrimSpace(mt))
			if mt == "text/event-stream" {
				return true
			}
		}
	}
	return false
}
