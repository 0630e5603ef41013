package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"
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
	`{"arguments":"{","name":"}"}`, `{"name":"x"`, `{"name"}`, `{"name":}`, `{"name":"x",}`,
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
	got, want := plainKeys(raw), plainKeysDecoder(raw)
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
				if !plainKeys(raw) {
					b.Fatal("not plain")
				}
			}
		})
	}
}
