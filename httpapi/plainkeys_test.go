package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// plainKeysDecoder is plainKeys as it was, on encoding/json's tokenizer:
// the reference the scan is held to.
func plainKeysDecoder(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	var seen [3]bool
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		var i int
		switch t {
		case "name":
			i = 0
		case "arguments":
			i = 1
		case "_meta":
			i = 2
		default:
			return false
		}
		if seen[i] {
			return false
		}
		seen[i] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return true
}

var plainKeysCorpus = []string{
	`{}`, ` { } `, `{"name":"x"}`, `{"name":"x","arguments":{"id":"w"}}`,
	`{"name":"x","arguments":{"id":"w"},"_meta":{"a":[1,{"b":"}"}]}}`,
	`{ "name" : "x" , "arguments" : [ ] , "_meta" : null }`,
	`{"name":"x","name":"y"}`, `{"Name":"x"}`, `{"name":"x","other":1}`,
	`{"n\u0061me":"x"}`, `{"name":"a\"b\\","arguments":"\\"}`, `{"arguments":1e5,"name":true}`,
	`{"arguments":{"arguments":{"name":1}},"name":"x"}`, `{"name":"x","arguments":{"x":"]}"}}`,
	`[]`, `"name"`, `null`, `{"name":"x"} `, `{"_meta":{},"_meta":{}}`,
	`{"arguments":"{","name":"}"}`, `{"name":"x","arguments":null}`, `{"name":"\u00e9x","arguments": {"a" : 1} }`, `{"name":"é","arguments":[1]}`, `{"name":7}`, `{"name":"x"`, `{"name"}`, `{"name":}`, `{"name":"x",}`,
}

func TestPlainKeysMatchesDecoder(t *testing.T) {
	for _, raw := range plainKeysCorpus {
		checkPlainKeys(t, []byte(raw))
	}
}

// checkPlainKeys: on a valid JSON value the scan says what the decoder
// says, except that a key spelled with an escape is never plain.
func checkPlainKeys(t *testing.T, raw []byte) {
	t.Helper()
	if !json.Valid(raw) {
		return // the request's decoding refused it before plainKeys runs
	}
	vals, got := plainKeys(raw)
	want := plainKeysDecoder(raw)
	if got && vals.meta != nil && !json.Valid(vals.meta) {
		t.Fatalf("plainKeys(%s): _meta %q is not a JSON value", raw, vals.meta)
	}
	if got {
		// The values taken as written are what the go-sdk's decoder gives.
		var p nameArgs
		if err := sdkUnmarshal(raw, &p); err == nil {
			if name, ok := plainString(vals.name); ok && name != p.Name {
				t.Fatalf("plainKeys(%s): name %q, the decoder %q", raw, name, p.Name)
			}
			if !isNull(vals.arguments) && !bytes.Equal(vals.arguments, p.Arguments) {
				t.Fatalf("plainKeys(%s): arguments %q, the decoder %q", raw, vals.arguments, p.Arguments)
			}
		} else if _, ok := plainString(vals.name); ok {
			t.Fatalf("plainKeys(%s): name %q, the decoder fails: %v", raw, vals.name, err)
		}
	}
	if got && !want {
		t.Fatalf("plainKeys(%s) = true, the decoder says not plain", raw)
	}
	if !got && want && !bytes.Contains(raw, []byte(`\`)) {
		t.Fatalf("plainKeys(%s) = false, the decoder says plain", raw)
	}
}

func FuzzPlainKeys(f *testing.F) {
	for _, raw := range plainKeysCorpus {
		f.Add([]byte(raw))
	}
	f.Fuzz(checkPlainKeys)
}

// BenchmarkPlainKeys is the fast path's scan of a tools/call's params.
func BenchmarkPlainKeys(b *testing.B) {
	for _, tc := range []struct{ name, raw string }{
		{"read_world", `{"name":"read_world","arguments":{"id":"world_0123456789abcdef"}}`},
		{"meta", `{"name":"search_pois","arguments":{"world_id":"w-1","query":"a \"quoted\" tavern","limit":50,"tags":["inn","road"]},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`},
	} {
		raw := []byte(tc.raw)
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, ok := plainKeys(raw); !ok {
					b.Fatal("not plain")
				}
			}
		})
	}
}

// TestDecodeCallParamsRemembered: a request whose _meta passed before
// (decoded through metaVerdicts) gets what the whole check gives it, on
// both revisions, for params that pass, that fail on their _meta and that
// fail elsewhere with a _meta that passed.
func TestDecodeCallParamsRemembered(t *testing.T) {
	const okMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	corpus := []string{
		`{"name":"read_world","arguments":{"id":"w"},"_meta":` + okMeta + `}`,
		`{"_meta":` + okMeta + `,"name":"read_world"}`,
		`{"name":"read_world","arguments":{"id":"w"},"_meta":` + okMeta + `}`,
		`{"name":7,"arguments":{"id":"w"},"_meta":` + okMeta + `}`,
		`{"name":"x","arguments":"str","_meta":` + okMeta + `}`,
		`{"name":"x","arguments":null,"_meta":` + okMeta + `}`,
		`{"name":"x","arguments":{"id":"w"}}`,
		`{"name":"x","arguments":{"id":"w"},"_meta":null}`,
		`{"name":"x","arguments":{"id":"w"},"_meta":{}}`,
		`{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`,
		`{"name":"x","_meta":{"progressToken":1}}`,
		`{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":7}}`,
		`{"name":"x","_meta":7}`,
		`{"name":"x\u00e9","arguments":[1,2],"_meta":` + okMeta + `}`,
	}
	same := func(a, b *mcp.CallToolParamsRaw) bool {
		if (a == nil) != (b == nil) {
			return false
		}
		return a == nil || a.Name == b.Name && bytes.Equal(a.Arguments, b.Arguments)
	}
	for _, isNew := range []bool{false, true} {
		for round := range 2 { // the second round meets remembered verdicts
			for _, raw := range corpus {
				if !json.Valid([]byte(raw)) {
					t.Fatalf("corpus: %s is not JSON", raw)
				}
				want, wantOK := checkCallParams([]byte(raw), isNew)
				got, gotOK := decodeCallParams([]byte(raw), isNew)
				if gotOK != wantOK || gotOK && !same(got, want) {
					t.Errorf("new=%v round %d: decodeCallParams(%s) = %+v, %v; the whole check: %+v, %v", isNew, round, raw, got, gotOK, want, wantOK)
				}
			}
		}
	}
}
