package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BaselinePayloadSize is the exact size in bytes of the JSON document the
// baseline read_world tool returns as its single text content block.
const BaselinePayloadSize = 2048

// BaselineTool is the name of the baseline server's only tool.
const BaselineTool = "read_world"

// BaselineInputSchema is the input schema of the baseline read_world tool.
const BaselineInputSchema = `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`

// baselinePayload is built once; every call returns the same string.
var baselinePayload = buildBaselinePayload()

// BaselinePayload returns the document the baseline read_world returns.
func BaselinePayload() string { return baselinePayload }

type benchCell struct {
	C       int    `json:"c"`
	R       int    `json:"r"`
	Terrain string `json:"terrain"`
	POI     string `json:"poi,omitempty"`
}

type benchWorldDoc struct {
	Grid struct {
		Cols  int         `json:"cols"`
		Rows  int         `json:"rows"`
		Cells []benchCell `json:"cells"`
	} `json:"grid"`
	POIs []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		C    int    `json:"c"`
		R    int    `json:"r"`
	} `json:"pois"`
	Notes string `json:"notes"`
}

// benchWorld has the JSON shape of a stored world row (worldforge.World);
// it is declared here so this package does not depend on the root package.
type benchWorld struct {
	ID        string          `json:"id"`
	OwnerID   string          `json:"ownerId"`
	Name      string          `json:"name"`
	Template  string          `json:"template"`
	Seed      int64           `json:"seed"`
	Cols      int             `json:"cols"`
	Rows      int             `json:"rows"`
	JSON      json.RawMessage `json:"json"`
	Version   int64           `json:"version"`
	CreatedAt string          `json:"createdAt"`
	UpdatedAt string          `json:"updatedAt"`
}

// buildBaselinePayload builds a world-row-shaped JSON document of exactly
// BaselinePayloadSize bytes: a 16×12 world whose document holds a few dozen
// cells and POIs, padded with a notes string.
func buildBaselinePayload() string {
	terrains := []string{"grass", "forest", "water", "hills", "road", "sand"}
	var doc benchWorldDoc
	doc.Grid.Cols, doc.Grid.Rows = 16, 12
	for i := range 34 {
		cell := benchCell{C: (i * 7) % 16, R: (i * 5) % 12, Terrain: terrains[i%len(terrains)]}
		if i%9 == 0 {
			cell.POI = fmt.Sprintf("poi_%02d", i/9)
		}
		doc.Grid.Cells = append(doc.Grid.Cells, cell)
	}
	for i, name := range []string{"Old Mill", "Watchtower", "Sunken Shrine", "Ferry"} {
		doc.POIs = append(doc.POIs, struct {
			ID   string `json:"id"`
			Name string `json:"name"`
			C    int    `json:"c"`
			R    int    `json:"r"`
		}{fmt.Sprintf("poi_%02d", i), name, (i * 7) % 16, (i * 5) % 12})
	}
	marshal := func() []byte {
		docJSON, err := json.Marshal(doc)
		if err != nil {
			panic(err)
		}
		b, err := json.Marshal(benchWorld{
			ID:        "w_bench00000001",
			OwnerID:   "u_bench00000001",
			Name:      "Benchmark Vale",
			Template:  "grid",
			Seed:      42,
			Cols:      doc.Grid.Cols,
			Rows:      doc.Grid.Rows,
			JSON:      docJSON,
			Version:   7,
			CreatedAt: "2025-01-01T00:00:00Z",
			UpdatedAt: "2025-01-02T03:04:05Z",
		})
		if err != nil {
			panic(err)
		}
		return b
	}
	n := len(marshal())
	if n > BaselinePayloadSize {
		panic(fmt.Sprintf("bench: baseline payload is %d bytes, more than %d", n, BaselinePayloadSize))
	}
	doc.Notes = strings.Repeat("x", BaselinePayloadSize-n)
	b := marshal()
	if len(b) != BaselinePayloadSize {
		panic(fmt.Sprintf("bench: baseline payload is %d bytes, want %d", len(b), BaselinePayloadSize))
	}
	return string(b)
}

// NewBaselineServer returns a bare go-sdk server whose only tool is
// read_world, registered with the low-level [mcp.Server.AddTool] (no
// reflection-built schema, no input validation, no output schema). The
// handler decodes the arguments, requires a non-empty id (a tool error
// otherwise) and returns one text content block holding the fixed
// [BaselinePayloadSize]-byte document. It is the floor: whatever a real
// server does per call comes on top of this.
func NewBaselineServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "worldforge-baseline", Version: "0"}, nil)
	s.AddTool(&mcp.Tool{
		Name:        BaselineTool,
		Description: "Read a world (benchmark baseline: always returns the same document).",
		InputSchema: json.RawMessage(BaselineInputSchema),
	}, readWorldBaseline)
	return s
}

func readWorldBaseline(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || args.ID == "" {
		return &mcp.CallToolResult{
			IsError: true,
			Content: []mcp.Content{&mcp.TextContent{Text: "read_world: id is required"}},
		}, nil
	}
	// A fresh result every call: for 2026-07-28 requests the SDK writes
	// serverInfo into the result's _meta, so results must not be shared.
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: baselinePayload}},
	}, nil
}

// NewBaselineHandler returns the baseline server behind a stateless,
// JSON-response streamable HTTP handler. One server is built and shared by
// all requests. Mount it at /mcp.
func NewBaselineHandler() http.Handler {
	shared := NewBaselineServer()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return shared },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}
