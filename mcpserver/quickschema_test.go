package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/worldforge-go/worldforge/internal/dbtest"
)

// quickCorpus are argument objects meant to sit on every edge the quick
// check models: types, lengths in bytes against code points, bounds,
// enums, unknown and missing properties.
var quickCorpus = []string{
	`{}`,
	`{"id":"world_abc"}`,
	`{"id":""}`,
	`{"id":"é"}`,
	`{"id":1}`,
	`{"id":null}`,
	`{"id":true}`,
	`{"id":["a"]}`,
	`{"id":{"a":1}}`,
	`{"id":"a","other":1}`,
	`{"world_id":"w","limit":1}`,
	`{"world_id":"w","limit":0}`,
	`{"world_id":"w","limit":1000}`,
	`{"world_id":"w","limit":1001}`,
	`{"world_id":"w","limit":1.5}`,
	`{"world_id":"w","limit":2.0}`,
	`{"world_id":"w","limit":-1}`,
	`{"world_id":"w","limit":1e300}`,
	`{"world_id":"w","limit":"5"}`,
	`{"world_id":"w","kind":"faction"}`,
	`{"world_id":"w","kind":"nope"}`,
	`{"world_id":"w","kind":null}`,
	`{"world_id":"w","cursor":""}`,
	`{"world_id":"w","level":1}`,
	`{"q":"ward","limit":5}`,
	`{"campaign_id":"c"}`,
}

func init() {
	long := make([]byte, 0, 2*maxIDLength)
	for range maxIDLength {
		long = append(long, 'a')
	}
	quickCorpus = append(quickCorpus, `{"id":"`+string(long)+`"}`, `{"id":"`+string(long)+`a"}`)
	// maxIDLength code points of two bytes each: within the length.
	wide := ""
	for range maxIDLength {
		wide += "é"
	}
	quickCorpus = append(quickCorpus, `{"id":"`+wide+`"}`, `{"id":"`+wide+`é"}`)
}

// checkQuick fails if the quick check of any tool accepts args that the
// validator refuses.
func checkQuick(t *testing.T, s *Server, raw []byte) {
	t.Helper()
	var m any
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	obj, ok := m.(map[string]any)
	if !ok {
		return
	}
	for _, def := range s.tools {
		q := def.check.quick
		if q == nil || !q.accepts(obj) {
			continue
		}
		if err := def.check.resolved.Validate(obj); err != nil {
			t.Errorf("%s: the quick check accepts %s, the validator refuses it: %v", def.name, raw, err)
		}
	}
}

func TestQuickSchemaAgreesWithValidator(t *testing.T) {
	s, err := New(dbtest.Open(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	quick := 0
	for _, def := range s.tools {
		if def.check.quick != nil {
			quick++
		}
	}
	// The one-id reads and the simple lists at least (read_world among them).
	if quick < 10 {
		t.Errorf("only %d of %d tools have a quick check", quick, len(s.tools))
	}
	if s.byName["read_world"].check.quick == nil {
		t.Error("read_world has no quick check")
	}
	t.Logf("%d of %d tools have a quick check", quick, len(s.tools))
	accepted := 0
	for _, raw := range quickCorpus {
		checkQuick(t, s, []byte(raw))
		var obj map[string]any
		if json.Unmarshal([]byte(raw), &obj) == nil && s.byName["read_world"].check.quick.accepts(obj) {
			accepted++
		}
	}
	if accepted == 0 {
		t.Error("the quick check of read_world accepts nothing in the corpus")
	}
}

// FuzzQuickSchema: whatever object the quick check of a tool accepts, the
// validator accepts too.
func FuzzQuickSchema(f *testing.F) {
	for _, raw := range quickCorpus {
		f.Add([]byte(raw))
	}
	s, err := New(dbtest.Open(f), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkQuick(t, s, raw)
	})
}
