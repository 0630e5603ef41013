package mcpserver

import (
	"encoding/json"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/argjson"
)

// The world tools' argument schemas and preparation; their rules are in
// package app.

func createWorldSchema(s *jsonschema.Schema) {
	p := s.Properties["name"]
	p.MinLength, p.MaxLength = ptr(1), ptr(wf.MaxWorldNameLength)
	s.Properties["size"].Enum = []any{"small", "medium", "large"}
	s.Properties["populate"].Default = []byte("true")
	seed := s.Properties["seed"]
	seed.Type, seed.Types = "", []string{"null", "integer", "string"}
	seed.Description = "the generation seed: an integer from " + wf.SeedRangeText + ", or a string: digits (optionally after a minus sign) are that integer, any other text (a word such as \"dragon\") maps to a fixed integer (the top 54 bits of the 64-bit FNV-1a hash of its UTF-8 bytes, minus 2^53); absent for a random one. The integer used is returned as seed: passing it back gives the same world"
}

// argPrepares are the tools whose arguments need more than decoding, by
// name: each gets the arguments, numbers as json.Number, after unknown
// keys are dropped and before they are decoded.
var argPrepares = map[string]func(any) error{
	wf.ToolCreateWorld: prepareCreateWorldArgs,
}

// prepareCreateWorldArgs reads worldforge_create_world's seed: a string is
// read by wf.ParseSeed (digits are that integer, any other text maps to
// wf.SeedOfWord), and the integer must lie within ±2^53.
func prepareCreateWorldArgs(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	switch seed := m["seed"].(type) {
	case string:
		n, err := wf.ParseSeed(seed)
		if err != nil {
			return err
		}
		m["seed"] = json.Number(strconv.FormatInt(n, 10))
	case json.Number:
		n, err := strconv.ParseInt(string(seed), 10, 64)
		if err == nil {
			return wf.CheckSeed(n)
		}
		if _, ok := argjson.Integral(string(seed)); ok {
			return wf.BadRequest("seed %s is out of range: seeds are integers from %s, which JavaScript clients hold exactly", seed, wf.SeedRangeText)
		}
		// Not an integer: decoding says so.
	}
	return nil
}
