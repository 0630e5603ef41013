// Command mcpgo is the github.com/mark3labs/mcp-go v1.2.1 baseline of
// `worldforge-bench compare`: a stateless streamable-HTTP server on /mcp
// whose only tool, read_world, returns the bench payload as one text
// content block, the same work the go-sdk floor
// (bench.NewBaselineHandler) does.
//
// It is a separate module so that mcp-go and its dependencies never enter
// the worldforge module's build list: only bench builds it, from source,
// when it runs. For the same reason it does not import worldforge: the
// payload, which must be byte-identical to bench.BaselinePayload, comes in
// a file that bench writes (--payload).
//
// mcp-go has no JSON-response switch: a POST is answered with
// application/json unless the handler sends notifications, which read_world
// does not, so WithStateLess is all it takes to match the floor's
// stateless, JSON-response mode.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// inputSchema is the read_world input schema of every bench server.
const inputSchema = `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgo-baseline:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	payloadFile := flag.String("payload", "", "file holding the text read_world returns (required)")
	flag.Parse()
	if *payloadFile == "" || flag.NArg() > 0 {
		flag.Usage()
		return errors.New("want --payload FILE and no arguments")
	}
	payload, err := os.ReadFile(*payloadFile)
	if err != nil {
		return fmt.Errorf("read the payload: %w", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(newServer(string(payload)), server.WithStateLess(true)))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	// bench waits for exactly this line to learn the address.
	fmt.Fprintf(os.Stderr, "worldforge: listening on http://%s/mcp\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Loopback keep-alive connections only: closing them at once is what the
	// other bench servers do too.
	if err := srv.Close(); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newServer returns an mcp-go server whose only tool is read_world,
// registered with its raw schema (no input validation: mcp-go validates only
// with WithInputSchemaValidation, and the go-sdk floor does not validate
// either). The handler requires a non-empty id, like the floor's.
func newServer(payload string) *server.MCPServer {
	s := server.NewMCPServer("worldforge-bench-mcpgo", "0", server.WithToolCapabilities(false))
	tool := mcp.NewToolWithRawSchema("read_world",
		"Read a world (benchmark baseline: always returns the same document).", json.RawMessage(inputSchema))
	s.AddTool(tool, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if id, err := req.RequireString("id"); err != nil || id == "" {
			return mcp.NewToolResultError("read_world: id is required"), nil
		}
		return mcp.NewToolResultText(payload), nil
	})
	return s
}
