package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/worldforge-go/worldforge/mcpkit"
)

// registry500 returns a registry of 500 tools whose schemas are those of a
// real WorldForge server's 31 tools, in turn.
func registry500(b *testing.B) *mcpkit.Registry {
	b.Helper()
	wfReg, _, _ := worldforge(b)
	real := wfReg.List()
	reg := mcpkit.NewRegistry()
	for i := range 500 {
		src := real[i%len(real)]
		err := reg.Add(mcpkit.Tool{
			Name: fmt.Sprintf("%s_%d", src.Name, i), Description: src.Description, InputSchema: src.InputSchema,
			Execute: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return nil, nil },
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return reg
}

// BenchmarkTools500 converts 500 tools to each format (the goal is under
// 5 ms an operation).
func BenchmarkTools500(b *testing.B) {
	reg := registry500(b)
	for _, bc := range []struct {
		name   string
		format Format
		opts   *Options
	}{
		{"openai", FormatOpenAI, nil},
		{"openai-strict", FormatOpenAI, &Options{Strict: true}},
		{"openai-responses", FormatOpenAIResponses, nil},
		{"anthropic", FormatAnthropic, nil},
		{"gemini", FormatGemini, nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				if _, _, err := Tools(reg, bc.format, bc.opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// BenchmarkConvert10KB converts a 10 KB text result to each provider's
// shape (the goal is under 50 µs an operation).
func BenchmarkConvert10KB(b *testing.B) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("0123456789abcdef", 640)}}}
	c := &Caller{}
	call := ToolCall{ID: "call_1", Name: "tool"}
	for _, bc := range []struct {
		name string
		to   func(r *Result) any
	}{
		{"openai", func(r *Result) any { return r.OpenAIMessage() }},
		{"openai-responses", func(r *Result) any { return r.OpenAIResponsesItem() }},
		{"anthropic", func(r *Result) any { return r.AnthropicBlock() }},
		{"gemini", func(r *Result) any { return r.GeminiPart() }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bc.to(c.Convert(call, res))
			}
		})
	}
}

// BenchmarkTools500Fresh converts 500 tools whose schemas the package has
// never seen (a fresh copy of each for every operation, made outside the
// timer): the first conversion after a server's tools arrive, with
// nothing cached (the goal is under 5 ms an operation).
func BenchmarkTools500Fresh(b *testing.B) {
	wfReg, _, _ := worldforge(b)
	real := wfReg.List()
	raws := make([][]byte, len(real))
	for i, t := range real {
		raws[i], _ = json.Marshal(t.InputSchema)
	}
	fresh := func(b *testing.B) *mcpkit.Registry {
		reg := mcpkit.NewRegistry()
		for i := range 500 {
			src := real[i%len(real)]
			s := new(jsonschema.Schema)
			if err := json.Unmarshal(raws[i%len(real)], s); err != nil {
				b.Fatal(err)
			}
			err := reg.Add(mcpkit.Tool{
				Name: fmt.Sprintf("%s_%d", src.Name, i), Description: src.Description, InputSchema: s,
				Execute: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return nil, nil },
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		return reg
	}
	for _, bc := range []struct {
		name   string
		format Format
		opts   *Options
	}{
		{"openai", FormatOpenAI, nil},
		{"openai-strict", FormatOpenAI, &Options{Strict: true}},
		{"openai-responses", FormatOpenAIResponses, nil},
		{"anthropic", FormatAnthropic, nil},
		{"gemini", FormatGemini, nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				reg := fresh(b)
				runtime.GC() // the setup's garbage is not the conversion's
				b.StartTimer()
				cpu0 := processCPU()
				if _, _, err := Tools(reg, bc.format, bc.opts); err != nil {
					b.Fatal(err)
				}
				cpu += processCPU() - cpu0
			}
			// The process's CPU time per conversion: on a busy machine,
			// steadier than ns/op.
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
