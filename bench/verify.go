package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
)

// VerifyFunc checks one response. It gets the HTTP status, the response
// headers and the fully read body, and returns nil if the response counts as
// a success.
type VerifyFunc func(status int, header http.Header, body []byte) error

// DefaultVerify is the check [Load] applies when LoadConfig.Verify is nil:
// the status is 200, and the body (application/json, or a
// text/event-stream whose data: events hold JSON-RPC messages) contains a
// JSON-RPC response with a non-null "result" and no "error", whose
// result.isError is not true.
func DefaultVerify(status int, header http.Header, body []byte) error {
	if status != http.StatusOK {
		return fmt.Errorf("HTTP %d: %s", status, snippet(body))
	}
	msg, err := ResponseMessage(header, body)
	if err != nil {
		return err
	}
	if quickAccept(msg) {
		return nil
	}
	return checkRPCResponse(msg)
}

// ResponseMessage extracts the JSON-RPC response from an MCP HTTP response
// body. For application/json it is the body itself; for text/event-stream it
// is the data of the last event that is a JSON-RPC response (has an id and
// no method), skipping notifications and priming events.
func ResponseMessage(header http.Header, body []byte) ([]byte, error) {
	ct := header.Get("Content-Type")
	if ct == "application/json" {
		return body, nil // the common case, without parsing
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil && ct != "" {
		return nil, fmt.Errorf("bad Content-Type %q: %v", ct, err)
	}
	switch mt {
	case "application/json":
		return body, nil
	case "text/event-stream":
		return lastSSEResponse(body)
	default:
		return nil, fmt.Errorf("unexpected Content-Type %q: %s", ct, snippet(body))
	}
}

// lastSSEResponse scans an SSE stream and returns the data of the last event
// that looks like a JSON-RPC response. Multi-line data fields are joined
// with "\n" as the SSE spec says.
func lastSSEResponse(body []byte) ([]byte, error) {
	var (
		found []byte
		data  []byte
		has   bool
	)
	flush := func() {
		if has && isRPCResponse(data) {
			found = append(found[:0], data...)
		}
		data, has = data[:0], false
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), len(body)+1)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if len(line) == 0 {
			flush()
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue // event:, id:, retry:, or a comment
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if has {
			data = append(data, '\n')
		}
		data = append(data, value...)
		has = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading SSE stream: %v", err)
	}
	flush() // a final event without the trailing blank line
	if found == nil {
		return nil, fmt.Errorf("no JSON-RPC response in SSE stream: %s", snippet(body))
	}
	return found, nil
}

func isRPCResponse(data []byte) bool {
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(data, &probe) == nil && probe.Method == "" && len(probe.ID) > 0
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

var isErrorKey = []byte(`"isError"`)

func checkRPCResponse(msg []byte) error {
	var resp rpcResponse
	if err := json.Unmarshal(msg, &resp); err != nil {
		return fmt.Errorf("not a JSON-RPC response: %v: %s", err, snippet(msg))
	}
	if resp.Error != nil {
		return fmt.Errorf("JSON-RPC error %d: %s", resp.Error.Code, resp.Error.Message)
	}
	if len(resp.Result) == 0 || string(resp.Result) == "null" {
		return errors.New("JSON-RPC response has no result")
	}
	// Cheap prefilter: decode the result only if it has an "isError" key.
	// Quotes inside JSON strings are escaped, so text content cannot fake
	// the key; successful go-sdk results omit it altogether.
	if bytes.Contains(resp.Result, isErrorKey) {
		var r struct {
			IsError bool `json:"isError"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(resp.Result, &r); err != nil {
			return fmt.Errorf("bad result: %v", err)
		}
		if r.IsError {
			text := ""
			for _, c := range r.Content {
				if c.Type == "text" {
					text = c.Text
					break
				}
			}
			return fmt.Errorf("tool error (isError): %s", snippet([]byte(text)))
		}
	}
	return nil
}

func snippet(b []byte) string {
	const max = 200
	b = bytes.TrimSpace(b)
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// VerifyProposal checks the answer to a propose_* tool call: everything
// [DefaultVerify] checks, and the result's first content block is text
// holding a JSON object with a non-empty proposal_id.
func VerifyProposal(status int, header http.Header, body []byte) error {
	if err := DefaultVerify(status, header, body); err != nil {
		return err
	}
	msg, _ := ResponseMessage(header, body) // DefaultVerify read it already
	var resp struct {
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &resp); err != nil {
		return fmt.Errorf("bad result: %v", err)
	}
	if len(resp.Result.Content) == 0 || resp.Result.Content[0].Type != "text" {
		return fmt.Errorf("no text content in the proposal's result: %s", snippet(msg))
	}
	var p struct {
		ProposalID string `json:"proposal_id"`
	}
	if err := json.Unmarshal([]byte(resp.Result.Content[0].Text), &p); err != nil || p.ProposalID == "" {
		return fmt.Errorf("no proposal_id in the result: %s", snippet([]byte(resp.Result.Content[0].Text)))
	}
	return nil
}
