package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	wf "github.com/worldforge-go/worldforge"
)

// BenchmarkDecodeArgs measures argument validation and decoding for a
// one-id tool and for a tool with a nested request (which has no quick
// check), with and without the quick check.
func BenchmarkDecodeArgs(b *testing.B) {
	for _, tc := range []struct {
		name string
		fn   func(*jsonschema.Schema)
		raw  string
		dst  func() any
	}{
		{"read_world", idSchema, `{"id":"world_abcdefghijklmnopqrst"}`, func() any { return new(wf.IDArgs) }},
		{"search_pois", poiSchema, `{"world_id":"world_abcdefghijklmnopqrst","request":{"name":"chest","tags":["loot"],"x":3,"y":4,"radiusPx":64,"limit":10}}`, func() any { return new(wf.SearchPOIsArgs) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var schema *jsonschema.Schema
			var err error
			switch tc.dst().(type) {
			case *wf.IDArgs:
				schema, err = jsonschema.For[wf.IDArgs](nil)
			case *wf.SearchPOIsArgs:
				schema, err = jsonschema.For[wf.SearchPOIsArgs](nil)
			}
			if err != nil {
				b.Fatal(err)
			}
			tc.fn(schema)
			resolved, err := schema.Resolve(nil)
			if err != nil {
				b.Fatal(err)
			}
			raw := json.RawMessage(tc.raw)
			// quick: as the tools run; validator: the quick check left out.
			for _, check := range []struct {
				name string
				c    argChecker
			}{{"quick", argChecker{resolved: resolved, quick: compileQuick(schema)}}, {"validator", argChecker{resolved: resolved}}} {
				b.Run(check.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if err := decodeArgs(check.c, raw, tc.dst()); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
