package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// rest sends a REST request and returns the status and body.
func rest(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestPresenceRoute(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		url := s.URL + "/worlds/" + s.World.ID + "/presence"
		player, gm, stranger := s.Token(t, s.Player), s.Token(t, s.GM), s.Token(t, s.Stranger)
		readOnly := s.Key(t, s.Player, wf.ScopeWorldRead)
		cases := []struct {
			name, token, body string
			status            int
			want              string
		}{
			{"player places themselves", player, `{"x":3,"y":5}`, 200, `"x":3`},
			{"gm places the player", gm, `{"x":1,"y":1,"userId":"` + s.Player.ID + `"}`, 200, `"userId":"` + s.Player.ID + `"`},
			{"player cannot place the gm", player, `{"x":1,"y":1,"userId":"` + s.GM.ID + `"}`, 400, "bad_request"},
			{"gm cannot place a stranger", gm, `{"x":1,"y":1,"userId":"` + s.Stranger.ID + `"}`, 400, "bad_request"},
			{"stranger", stranger, `{"x":1,"y":1}`, 404, "not_found"},
			{"scope", readOnly, `{"x":1,"y":1}`, 403, "missing_scopes"},
			{"outside the grid", player, `{"x":16,"y":0}`, 400, "outside"},
			{"negative", player, `{"x":-1,"y":0}`, 400, "outside"},
			{"missing y", player, `{"x":1}`, 400, "x and y are required"},
			{"fraction", player, `{"x":1.5,"y":1}`, 400, "bad_request"},
			{"unknown field", player, `{"x":1,"y":1,"z":2}`, 400, "bad_request"},
			{"not an object", player, `[1,2]`, 400, "bad_request"},
			{"two values", player, `{"x":1,"y":1}{}`, 400, "bad_request"},
			{"no token", "", `{"x":1,"y":1}`, 401, "unauthorized"},
		}
		for _, c := range cases {
			before := s.AuditCount(t)
			status, body := rest(t, http.MethodPut, url, c.token, c.body)
			if status != c.status || !strings.Contains(body, c.want) {
				t.Errorf("%s: %d %s, want %d containing %q", c.name, status, body, c.status, c.want)
			}
			wantAudit := 0
			if status == 200 {
				wantAudit = 1
			}
			if got := s.AuditCount(t) - before; got != wantAudit {
				t.Errorf("%s: %d audit rows, want %d", c.name, got, wantAudit)
			}
		}
		if status, _ := rest(t, http.MethodPut, s.URL+"/worlds/world_nope0000000000000000/presence", player, `{"x":1,"y":1}`); status != 404 {
			t.Errorf("missing world: %d", status)
		}
		_, rt, err := db.ReadWorld(t.Context(), s.World.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(rt.Presence) != 1 || rt.Presence[0].X != 1 || rt.Presence[0].UserID != s.Player.ID {
			t.Errorf("presence: %+v", rt.Presence)
		}
	})
}

func TestPOISearchRoute(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		secret := &wf.POI{WorldID: s.World.ID, Name: "Hidden cache", Category: "container", Tags: []string{"loot"}, X: 5, Y: 5, Visibility: wf.AudienceGM}
		if err := db.CreatePOI(t.Context(), secret); err != nil {
			t.Fatal(err)
		}
		url := s.URL + "/worlds/" + s.World.ID + "/pois/search"
		owner, gm, player, stranger := s.Token(t, s.Owner), s.Token(t, s.GM), s.Token(t, s.Player), s.Token(t, s.Stranger)
		names := func(body string) string {
			var l wf.POIList
			if err := json.Unmarshal([]byte(body), &l); err != nil {
				t.Fatalf("decode %s: %v", body, err)
			}
			var out []string
			for _, p := range l.POIs {
				out = append(out, p.Name)
			}
			return strings.Join(out, ",")
		}
		cases := []struct {
			name, method, query, token, body string
			status                           int
			want                             string // names, or an error text
		}{
			{"owner sees all", "GET", "", owner, "", 200, "Hidden cache,Old chest"},
			{"gm sees all", "GET", "?category=container&tags=loot", gm, "", 200, "Hidden cache,Old chest"},
			{"player sees the party's", "GET", "", player, "", 200, "Old chest"},
			{"player cannot widen", "POST", "", player, `{"partyOnly":false,"PartyOnly":false}`, 200, "Old chest"},
			{"near first", "GET", "?x=170&y=170&radiusPx=20", owner, "", 200, "Hidden cache"},
			{"post body, extra keys", "POST", "", owner, `{"name":"chest","whatever":[1]}`, 200, "Old chest"},
			{"limit", "GET", "?limit=1", owner, "", 200, "Hidden cache"},
			{"stranger", "GET", "", stranger, "", 404, "not_found"},
			{"x without y", "GET", "?x=1", owner, "", 400, "go together"},
			{"radius without position", "POST", "", owner, `{"radiusPx":5}`, 400, "needs"},
			{"bad x", "GET", "?x=abc&y=1", owner, "", 400, "integer"},
			{"limit 0", "GET", "?limit=0", owner, "", 400, "limit"},
			{"limit too big", "POST", "", owner, `{"limit":500}`, 400, "limit"},
			{"wrong type", "POST", "", owner, `{"name":5}`, 400, "bad_request"},
			{"not an object", "POST", "", owner, `"x"`, 400, "bad_request"},
			{"no token", "GET", "", "", "", 401, "unauthorized"},
		}
		for _, c := range cases {
			before := s.AuditCount(t)
			status, body := rest(t, c.method, url+c.query, c.token, c.body)
			got := body
			if status == 200 {
				got = names(body)
			}
			if status != c.status || (status == 200 && got != c.want) || (status != 200 && !strings.Contains(got, c.want)) {
				t.Errorf("%s: %d %s, want %d %q", c.name, status, got, c.status, c.want)
			}
			wantAudit := 0
			if status == 200 {
				wantAudit = 1
			}
			if n := s.AuditCount(t) - before; n != wantAudit {
				t.Errorf("%s: %d audit rows, want %d", c.name, n, wantAudit)
			}
		}
	})
}
