package httpapi_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// restBodyRoutes are the REST routes that read a JSON body, indexed by the
// fuzz input.
var restBodyRoutes = []struct {
	method, path string // path: %w is the world's id
}{
	{http.MethodPut, "/worlds/%w/presence"},
	{http.MethodPost, "/worlds/%w/pois/search"},
	{http.MethodPost, "/auto-accept-rules"},
}

// FuzzRESTBody sends arbitrary bodies to the REST routes that read one, as
// the world's owner. Whatever the body: no 5xx, no Go type or package
// named in the answer, and a refusal (4xx) changes nothing in the store.
func FuzzRESTBody(f *testing.F) {
	s := testserver.Start(f, dbtest.Open(f))
	token := s.Token(f, s.Owner)
	seeds := []struct {
		route int
		body  string
	}{
		{0, `{"x":3,"y":4}`},
		{0, `{"x":3,"y":4,"userId":"` + s.Player.ID + `"}`},
		{0, `{"x":-1,"y":99999999999}`},
		{0, `{"x":1.5,"y":"2"}`},
		{0, `{"x":1,"y":1,"extra":true}`},
		{0, `{"x":1.0,"y":1e0}`},
		{0, `{"x":1e400,"y":99999999999999999999}`},
		{1, `{"tags":[1],"LIMIT":5}`},
		{0, `[]`},
		{0, ``},
		{1, `{"name":"chest","tags":["loot"],"x":100,"y":100,"radiusPx":64,"limit":10}`},
		{1, `{"category":"container","unknown":[1,{}]}`},
		{1, `{"x":9223372036854775808,"y":0}`},
		{1, `{"limit":1e400}`},
		{1, `{"name":"\u0000"}`},
		{2, `{"worldId":"` + s.World.ID + `","actorId":"` + s.GM.ID + `","kinds":["quest"]}`},
		{2, `{"keyId":"key_aaaaaaaaaaaaaaaaaaaa"}`},
		{2, `{"worldId":"world_nope","actorId":"x"}`},
		{2, `{"kinds":["dragon"],"actorId":"` + s.GM.ID + `"}`},
		{2, `{}`},
		{2, `{"actorId":"a"} {"actorId":"b"}`},
		// One over the bounds (wf.Bounds) and far over them.
		{1, `{"tags":["t0"` + strings.Repeat(`,"t"`, wf.MaxPOITags) + `]}`},
		{1, `{"tags":["t0"` + strings.Repeat(`,"t"`, 3_000) + `]}`}, // within the fuzzer's 16 KB
		{1, `{"tags":["` + strings.Repeat("t", wf.MaxPOITagLength+1) + `"]}`},
		{1, `{"name":"` + strings.Repeat("n", wf.MaxQueryLength+1) + `"}`},
		{2, `{"actorId":"` + strings.Repeat("a", wf.MaxIDLength+1) + `"}`},
		{2, `{"keyId":"` + strings.Repeat("k", wf.MaxIDLength+1) + `"}`},
		{2, `{"worldId":"` + strings.Repeat("w", wf.MaxIDLength+1) + `","actorId":"a"}`},
		{2, `{"actorId":"a","kinds":["quest","encounter","wiki_page","wiki_edit","atlas_place","world","quest"]}`},
		{2, `{"actorId":"a","kinds":["quest","quest"]}`},
	}
	for _, sd := range seeds {
		f.Add(uint8(sd.route), []byte(sd.body))
	}
	f.Fuzz(func(t *testing.T, idx uint8, body []byte) {
		if len(body) > 16<<10 {
			return
		}
		rt := restBodyRoutes[int(idx)%len(restBodyRoutes)]
		path := bytes.ReplaceAll([]byte(rt.path), []byte("%w"), []byte(s.World.ID))
		req, err := http.NewRequest(rt.method, s.URL+string(path), bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		before := s.Fingerprint(t)
		resp, err := fuzzClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", rt.method, path, err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %s %q: %d %s", rt.method, path, body, resp.StatusCode, answer)
		}
		if leak := leaksGo(string(answer), string(body)); leak != "" {
			t.Fatalf("%s %s %q: the answer names Go internals (%s): %s", rt.method, path, body, leak, answer)
		}
		if resp.StatusCode >= 400 {
			if changed := testserver.Changed(before, s.Fingerprint(t)); len(changed) > 0 {
				t.Fatalf("%s %s %q answered %d %s but changed %v", rt.method, path, body, resp.StatusCode, answer, changed)
			}
		}
	})
}
