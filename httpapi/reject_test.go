package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// TestRejectReason: POST /proposals/{id}/reject takes an optional body
// {"reason": …}, stored with the decision and shown in the proposal's
// JSON; a bad body is 400 and changes nothing.
func TestRejectReason(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		ownerTok := s.Token(t, s.Owner)
		gm := connect(t, s, s.Token(t, s.GM), "")
		file := func(name string) string {
			return propose(t, gm, wf.ToolProposeAtlasPlace, map[string]any{"world_id": s.World.ID,
				"payload": map[string]any{"name": name}, "diff_summary": "new place"}).ProposalID
		}
		reject := func(tok, id, body string) (int, string) {
			return rest(t, "POST", s.URL+"/proposals/"+id+"/reject", tok, body)
		}

		// Bad bodies: 400, the proposal stays pending, nothing changes.
		target := file("Somewhere")
		readKey := s.Key(t, s.Owner, wf.ScopeWorldRead)
		strangerTok := s.Token(t, s.Stranger)
		// A key's first use is recorded (its last use): use it once before.
		if status, got := rest(t, "GET", s.URL+"/me", readKey, ""); status != 200 {
			t.Fatalf("GET /me: %d %s", status, got)
		}
		before := s.Fingerprint(t)
		for name, body := range map[string]string{
			"unknown field":   `{"reason":"no","why":"because"}`,
			"truncated JSON":  `{"reason":`,
			"not an object":   `["no"]`,
			"reason a number": `{"reason":5}`,
			"reason too long": `{"reason":"` + strings.Repeat("x", 2001) + `"}`,
			"NUL character":   `{"reason":"a\u0000b"}`,
		} {
			if status, got := reject(ownerTok, target, body); status != 400 || !strings.Contains(got, "bad_request") {
				t.Errorf("%s: %d %s", name, status, got)
			}
		}
		// Admission comes before the body: a key without world:write is
		// refused for its scopes whatever it sends, a stranger sees 404.
		if status, got := reject(readKey, target, `{"reason":`); status != 403 || !strings.Contains(got, "missing_scopes") {
			t.Errorf("read-only key: %d %s", status, got)
		}
		if status, got := reject(strangerTok, target, `{"reason":"mine now"}`); status != 404 {
			t.Errorf("stranger: %d %s", status, got)
		}
		if changed := testserver.Changed(before, s.Fingerprint(t)); len(changed) > 0 {
			t.Errorf("refused rejections changed %v", changed)
		}
		if st := proposalStatus(t, db, target); st != wf.ProposalPending {
			t.Fatalf("proposal is %s after refused rejections", st)
		}

		// With a reason: in the answer, in the store and in GET.
		audit := s.AuditCount(t)
		status, body := reject(ownerTok, target, `{"reason":"The map has <no> room there."}`)
		var p wf.Proposal
		if status != 200 || json.Unmarshal([]byte(body), &p) != nil || p.Status != wf.ProposalRejected ||
			p.Reason != "The map has <no> room there." {
			t.Fatalf("reject with a reason: %d %s", status, body)
		}
		if n := s.AuditCount(t) - audit; n != 1 {
			t.Errorf("%d audit rows, want 1", n)
		}
		if status, body := rest(t, "GET", s.URL+"/proposals/"+target, ownerTok, ""); status != 200 ||
			!strings.Contains(body, `"reason":"The map has \u003cno\u003e room there."`) {
			t.Errorf("GET after reject: %d %s", status, body)
		}

		// Without a body, or an empty object: no reason.
		for _, body := range []string{"", "{}", "  \n"} {
			id := file("Elsewhere")
			status, got := reject(ownerTok, id, body)
			if status != 200 || !strings.Contains(got, `"status":"rejected"`) || strings.Contains(got, `"reason"`) {
				t.Errorf("reject with body %q: %d %s", body, status, got)
			}
		}
	})
}
