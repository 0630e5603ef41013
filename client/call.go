package client

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
)

// ToolError is a tool-level failure: the tool answered with isError true.
// Result is the failed envelope. A WorldForge error code in the text
// (not_found, missing_scopes:a,b, bad_request: …) is what Unwrap returns,
// as a *worldforge.Error.
type ToolError struct {
	Tool   string
	Result *mcp.CallToolResult
}

// Error reads "MCP tool <name> failed: <detail>".
func (e *ToolError) Error() string {
	return "MCP tool " + e.Tool + " failed: " + e.Detail()
}

// Detail is the failure's text: the result's text blocks joined with
// newlines, or "no detail" when it has none.
func (e *ToolError) Detail() string {
	if text, _ := joinText(e.Result); text != "" {
		return text
	}
	return "no detail"
}

// Unwrap returns the *worldforge.Error the detail names, or nil when the
// detail is not an error code.
func (e *ToolError) Unwrap() error {
	text, _ := joinText(e.Result)
	if we := parseCode(text); we != nil {
		return we
	}
	return nil
}

// codeRE is the shape of an error code: lower-case words joined by '_'.
var codeRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// parseCode reads the wire text of a *worldforge.Error back: "code",
// "code: detail" or "missing_scopes:a,b". Anything else is nil.
func parseCode(text string) *wf.Error {
	if text == "" || strings.ContainsAny(text, "\r\n") {
		return nil
	}
	code, detail := text, ""
	if c, d, ok := strings.Cut(text, ": "); ok {
		code, detail = c, d
	} else if d, ok := strings.CutPrefix(text, wf.EMissingScopes+":"); ok {
		code, detail = wf.EMissingScopes, d
	}
	if !codeRE.MatchString(code) {
		return nil
	}
	return &wf.Error{Code: code, Detail: detail}
}

// CallToolRaw calls a tool and returns its envelope untouched. args is any
// value that encodes as a JSON object (nil for none). A result with isError
// true is returned as a *ToolError holding it, so the result returned here
// never has IsError set. Transport failures are the go-sdk's errors.
func (c *Client) CallToolRaw(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, &ToolError{Tool: name, Result: res}
	}
	return res, nil
}

// CallTool calls a tool and returns its unwrapped result (see
// [UnwrapResult]): for WorldForge's tools, the result's JSON decoded into
// any. Failures are as for CallToolRaw.
func (c *Client) CallTool(ctx context.Context, name string, args any) (any, error) {
	res, err := c.CallToolRaw(ctx, name, args)
	if err != nil {
		return nil, err
	}
	return UnwrapResult(res), nil
}

// CallToolInto calls a tool and decodes its unwrapped result into out, a
// pointer. A single JSON text block is decoded directly; any other result
// is the unwrapped string, which decodes into a *string or *any.
func (c *Client) CallToolInto(ctx context.Context, name string, args, out any) error {
	res, err := c.CallToolRaw(ctx, name, args)
	if err != nil {
		return err
	}
	return decodeResult(name, res, out)
}

// CallTool calls a tool on c and decodes its unwrapped result into a T,
// as [Client.CallToolInto] does.
func CallTool[T any](ctx context.Context, c *Client, name string, args any) (T, error) {
	var v T
	err := c.CallToolInto(ctx, name, args, &v)
	return v, err
}

// UnwrapResult applies the envelope rules to a result: a single text block
// is parsed as JSON (into any), or returned as a string when it is not
// JSON; several text blocks are joined with newlines into a string;
// non-text blocks are ignored, so a result without text is "". IsError is
// not looked at.
func UnwrapResult(res *mcp.CallToolResult) any {
	text, single := joinText(res)
	if single {
		var v any
		if err := json.Unmarshal([]byte(text), &v); err == nil {
			return v
		}
	}
	return text
}

// joinText joins the text blocks of res with newlines; single reports
// that there was exactly one.
func joinText(res *mcp.CallToolResult) (text string, single bool) {
	if res == nil {
		return "", false
	}
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	return strings.Join(texts, "\n"), len(texts) == 1
}

// decodeResult decodes the unwrapped result of res into out.
func decodeResult(tool string, res *mcp.CallToolResult, out any) error {
	text, single := joinText(res)
	data := []byte(text)
	if !single || !json.Valid(data) {
		// The unwrapped value is the string itself.
		var err error
		if data, err = json.Marshal(text); err != nil {
			return fmt.Errorf("decode %s result: %w", tool, err)
		}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode %s result: %w", tool, err)
	}
	return nil
}

// call is CallTool for the helpers: the result decoded into a new T.
func call[T any](ctx context.Context, c *Client, name string, args any) (*T, error) {
	v := new(T)
	if err := c.CallToolInto(ctx, name, args, v); err != nil {
		return nil, err
	}
	return v, nil
}
