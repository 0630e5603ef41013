package mcpkit

// Request timeouts that progress restarts (ServerConfig, ClientOptions,
// WithRequestTimeout), bounded by a maximum total time, against real
// servers: the stdio fixture as a child process and the same server over
// streamable HTTP on 127.0.0.1.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The long tool's run and the timeouts it is called with: it works 4 s
// and reports progress every 0.5 s, so a 1.5 s timeout that progress
// restarts never runs out, one that progress does not restart does, and
// a maximum total of 2.5 s ends the call before the tool is done.
const (
	longTimeout  = 1500 * time.Millisecond
	longMaxTotal = 2500 * time.Millisecond
)

var longArgs = map[string]any{"ms": 4000, "everyMs": 500}

// outcomes of a call of the long tool
const (
	outDone     = "done"      // it answered
	outTimeout  = "timeout"   // TIMEOUT: no answer or progress within the timeout
	outMaxTotal = "max total" // TIMEOUT: the maximum total time ran out
)

// longOutcome calls the long tool and classifies what came back; an
// unexpected answer or error is returned as the outcome's text.
func longOutcome(c *Client, ctx context.Context) string {
	res, err := c.CallTool(ctx, "long", longArgs)
	var e *Error
	switch {
	case err == nil && resultText(res) == "done":
		return outDone
	case err == nil:
		return fmt.Sprintf("answer %q", resultText(res))
	case !errors.As(err, &e) || e.Code != CodeTimeout || e.Kind != FaultTimeout:
		return fmt.Sprintf("error %v", err)
	case strings.Contains(e.Message, "maximum total timeout"):
		return outMaxTotal
	}
	return outTimeout
}

// longServers returns the configurations of the two servers with the
// long tool.
func longServers(t *testing.T) map[string]ServerConfig {
	srv := newFixtureServer(false)
	addLongTool(srv)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return map[string]ServerConfig{
		"stdio": newFixture(t, "long", fxLong).cfg,
		"http":  {Name: "long", URL: hs.URL},
	}
}

func TestTimeoutResetOnProgress(t *testing.T) {
	t.Parallel()
	for transport, base := range longServers(t) {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			// The calls run together (each takes up to 4 s).
			type outcome struct{ name, got, want string }
			results := make(chan outcome, 16)
			var wg sync.WaitGroup
			run := func(name, want string, c *Client, ctx context.Context) {
				wg.Go(func() { results <- outcome{name, longOutcome(c, ctx), want} })
			}

			// Per server (ServerConfig) and for every server
			// (ClientOptions): a client each.
			perServer := []struct {
				name string
				cfg  func(*ServerConfig)
				opts func(*ClientOptions)
				want string
			}{
				{"server reset", func(c *ServerConfig) { c.Timeout, c.ResetTimeoutOnProgress = longTimeout, true }, nil, outDone},
				{"server no reset", func(c *ServerConfig) { c.Timeout = longTimeout }, nil, outTimeout},
				{"server max total", func(c *ServerConfig) {
					c.Timeout, c.ResetTimeoutOnProgress, c.MaxTotalTimeout = longTimeout, true, longMaxTotal
				}, nil, outMaxTotal},
				{"options max total", nil, func(o *ClientOptions) {
					o.Timeout, o.ResetTimeoutOnProgress, o.MaxTotalTimeout = longTimeout, true, longMaxTotal
				}, outMaxTotal},
			}
			for _, tt := range perServer {
				cfg := base
				if tt.cfg != nil {
					tt.cfg(&cfg)
				}
				o := opts()
				if tt.opts != nil {
					tt.opts(o)
				}
				run(tt.name, tt.want, connected(t, cfg, o), context.Background())
			}

			// Per call, on one client that restarts timeouts on progress,
			// with the calls in flight together so that progress must
			// reach the right one.
			cfg := base
			cfg.Timeout, cfg.ResetTimeoutOnProgress = longTimeout, true
			c := connected(t, cfg, opts())
			bg := context.Background()
			run("call reset", outDone, c, WithRequestTimeout(bg, RequestTimeout{Timeout: longTimeout, ResetOnProgress: true}))
			run("call no reset", outTimeout, c, WithRequestTimeout(bg, RequestTimeout{Timeout: longTimeout}))
			run("call max total", outMaxTotal, c, WithRequestTimeout(bg, RequestTimeout{Timeout: longTimeout, ResetOnProgress: true, MaxTotal: longMaxTotal}))
			run("call reset under a caller's deadline", outDone, c, WithRequestTimeout(ctxTimeout(t, time.Minute), RequestTimeout{Timeout: longTimeout, ResetOnProgress: true}))
			run("caller's deadline rules over the server's reset", outTimeout, c, ctxTimeout(t, longTimeout))
			run("server's settings without a caller's deadline", outDone, c, bg)

			wg.Wait()
			close(results)
			for r := range results {
				if r.got != r.want {
					t.Errorf("%s: outcome = %s, want %s", r.name, r.got, r.want)
				}
			}
		})
	}
}

// TestRequestTimeoutBad: a RequestTimeout with a negative duration fails
// the request with CONFIG_ERROR before anything is sent, and the client
// stays usable.
func TestRequestTimeoutBad(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "fx", fxNormal)
	c := connected(t, fx.cfg, opts())
	tests := []struct {
		name string
		rt   RequestTimeout
		want string
	}{
		{"negative timeout", RequestTimeout{Timeout: -time.Second}, "negative Timeout"},
		{"negative max total", RequestTimeout{ResetOnProgress: true, MaxTotal: -1}, "negative MaxTotal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.CallTool(WithRequestTimeout(ctxTimeout(t, 10*time.Second), tt.rt), "block", nil)
			e := wantError(t, err, CodeConfigError, "")
			if !strings.Contains(e.Message, tt.want) {
				t.Errorf("message = %q, want it to say %q", e.Message, tt.want)
			}
		})
	}
	// The block tool notes each call it gets (a call that reached it
	// would have blocked until the context's deadline rather than fail
	// at once); the client still answers.
	res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "echo", map[string]any{"text": "still here"})
	if err != nil || resultText(res) != "still here" {
		t.Fatalf("echo = %v, %v", res, err)
	}
	if n := fx.blocked(); n != 0 {
		t.Errorf("block tool called %d times, want 0", n)
	}
}
