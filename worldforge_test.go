package worldforge_test

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
)

func TestErrorText(t *testing.T) {
	cases := []struct {
		err  *wf.Error
		want string
	}{
		{wf.ErrNotFound, "not_found"},
		{&wf.Error{Code: wf.ENotFound}, "not_found"},
		{wf.MissingScopes("a", "b"), "missing_scopes:a,b"},
		{wf.MissingScopes(wf.UnresolvedOwner), "missing_scopes:unresolved_owner"},
		{wf.BadRequest("too_far"), "bad_request: too_far"},
		{wf.BadRequest("limit %d > %d", 5, 3), "bad_request: limit 5 > 3"},
		{wf.Errorf(wf.EConflict, "no_presence"), "conflict: no_presence"},
		{&wf.Error{Code: wf.EInternal}, "internal"},
		{wf.ErrUnauthorized, "unauthorized"},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%#v.Error() = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestErrorIs(t *testing.T) {
	nf := wf.Errorf(wf.ENotFound, "world %s", "x")
	cases := []struct {
		name   string
		err    error
		target error
		want   bool
	}{
		{"same code, target without detail", nf, wf.ErrNotFound, true},
		{"same code and detail", nf, &wf.Error{Code: wf.ENotFound, Detail: "world x"}, true},
		{"same code, other detail", nf, &wf.Error{Code: wf.ENotFound, Detail: "world y"}, false},
		{"other code", nf, wf.ErrUnauthorized, false},
		{"detail-less error vs detailed target", wf.ErrNotFound, &wf.Error{Code: wf.ENotFound, Detail: "d"}, false},
		{"wrapped", fmt.Errorf("store: %w", nf), wf.ErrNotFound, true},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", wf.MissingScopes("x"))), &wf.Error{Code: wf.EMissingScopes}, true},
		{"wrapped, code+detail", fmt.Errorf("a: %w", wf.MissingScopes("x")), wf.MissingScopes("x"), true},
		{"joined", errors.Join(io.EOF, wf.BadRequest("b")), &wf.Error{Code: wf.EBadRequest}, true},
		{"plain error", io.EOF, wf.ErrNotFound, false},
		{"domain error vs plain target", nf, io.EOF, false},
		{"version conflict", &wf.Error{Code: wf.EVersionConflict, Detail: "v2"}, wf.ErrVersionConflict, true},
		{"proposal not found is not not_found", &wf.Error{Code: wf.EProposalNotFound}, wf.ErrNotFound, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := errors.Is(tc.err, tc.target); got != tc.want {
				t.Errorf("errors.Is(%v, %v) = %v, want %v", tc.err, tc.target, got, tc.want)
			}
		})
	}
}

func TestErrorCode(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"domain", wf.ErrNotFound, wf.ENotFound},
		{"domain with detail", wf.BadRequest("x"), wf.EBadRequest},
		{"wrapped", fmt.Errorf("ctx: %w", wf.MissingScopes("a")), wf.EMissingScopes},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", wf.ErrUnauthorized)), wf.EUnauthorized},
		{"plain", errors.New("boom"), wf.EInternal},
		{"plain wrapped", fmt.Errorf("x: %w", io.EOF), wf.EInternal},
		{"formatted without %w", fmt.Errorf("x: %v", wf.ErrNotFound), wf.EInternal},
	}
	for _, tc := range cases {
		if got := wf.ErrorCode(tc.err); got != tc.want {
			t.Errorf("%s: ErrorCode(%v) = %q, want %q", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestParseScopes(t *testing.T) {
	cases := []struct {
		in      string
		want    []string
		wantErr string // a part of the error text; "" = no error
	}{
		{"world:read", []string{"world:read"}, ""},
		{"world:read,quest:write", []string{"world:read", "quest:write"}, ""},
		{" world:read , quest:write ,", []string{"world:read", "quest:write"}, ""},
		{"world:read,world:read,lore:read,world:read", []string{"world:read", "lore:read"}, ""},
		{"*", []string{"*"}, ""},
		{"*,world:read", []string{"*", "world:read"}, ""},
		{",,\tatlas:read\t,,", []string{"atlas:read"}, ""},
		{strings.Join(wf.AllScopes, ","), wf.AllScopes, ""},
		{"world:read,dragons:tame", nil, `unknown scope "dragons:tame"`},
		{"World:Read", nil, "unknown scope"},
		{"world:read world:write", nil, "unknown scope"},
		{"", nil, "no scopes given"},
		{" , ,", nil, "no scopes given"},
	}
	for _, tc := range cases {
		got, err := wf.ParseScopes(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseScopes(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.wantErr)
			} else if wf.ErrorCode(err) != wf.EBadRequest {
				t.Errorf("ParseScopes(%q): code %q, want bad_request", tc.in, wf.ErrorCode(err))
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseScopes(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestActorScopes(t *testing.T) {
	reader := &wf.Actor{UserID: "user_a", Scopes: []string{wf.ScopeWorldRead, wf.ScopeWikiRead}}
	all := &wf.Actor{UserID: "user_b", Scopes: []string{wf.ScopeAll}}
	none := &wf.Actor{UserID: "user_c"}

	for _, s := range []string{wf.ScopeWorldRead, wf.ScopeWikiRead} {
		if !reader.HasScope(s) {
			t.Errorf("reader lacks %s", s)
		}
	}
	if reader.HasScope(wf.ScopeWorldWrite) || reader.HasScope(wf.ScopeAll) {
		t.Error("reader has scopes it was not given")
	}
	for _, s := range wf.AllScopes {
		if !all.HasScope(s) {
			t.Errorf("* lacks %s", s)
		}
		if none.HasScope(s) {
			t.Errorf("scopeless actor has %s", s)
		}
	}

	// RequireScopes names every missing scope, in the order asked.
	if err := reader.RequireScopes(wf.ScopeWorldRead, wf.ScopeWikiRead); err != nil {
		t.Errorf("RequireScopes(held) = %v", err)
	}
	if err := reader.RequireScopes(); err != nil {
		t.Errorf("RequireScopes() = %v", err)
	}
	err := reader.RequireScopes(wf.ScopeAtlasRead, wf.ScopeWorldRead, wf.ScopeLoreRead)
	if err == nil || err.Error() != "missing_scopes:atlas:read,lore:read" {
		t.Errorf("RequireScopes(partly held) = %v", err)
	}
	if !errors.Is(err, &wf.Error{Code: wf.EMissingScopes}) {
		t.Errorf("RequireScopes error %v is not missing_scopes", err)
	}
	if err := all.RequireScopes(wf.ScopeQuestCommit, wf.ScopeLorePropose); err != nil {
		t.Errorf("* RequireScopes = %v", err)
	}

	// RequireAnyScope passes with one; otherwise names them all.
	if err := reader.RequireAnyScope(wf.ScopeLoreRead, wf.ScopeWorldRead); err != nil {
		t.Errorf("RequireAnyScope(one held) = %v", err)
	}
	if err := reader.RequireAnyScope(wf.ScopeLoreRead, wf.ScopeAtlasRead); err == nil || err.Error() != "missing_scopes:lore:read,atlas:read" {
		t.Errorf("RequireAnyScope(none held) = %v", err)
	}
	if err := all.RequireAnyScope(wf.ScopeLoreRead); err != nil {
		t.Errorf("* RequireAnyScope = %v", err)
	}
	if err := none.RequireAnyScope(wf.ScopeLoreRead); err == nil || err.Error() != "missing_scopes:lore:read" {
		t.Errorf("scopeless RequireAnyScope = %v", err)
	}

	// Owner.
	if id, err := reader.Owner(); id != "user_a" || err != nil {
		t.Errorf("Owner() = %q, %v", id, err)
	}
	for name, a := range map[string]*wf.Actor{"nil actor": nil, "no user": {Scopes: []string{wf.ScopeAll}}} {
		id, err := a.Owner()
		if id != "" || err == nil || err.Error() != "missing_scopes:unresolved_owner" {
			t.Errorf("%s: Owner() = %q, %v; want missing_scopes:unresolved_owner", name, id, err)
		}
	}

	// String never shows more than the ids.
	if got := (&wf.Actor{UserID: "user_a", KeyID: "key_b"}).String(); got != "user=user_a key=key_b" {
		t.Errorf("String() = %q", got)
	}
	if got := (&wf.Actor{UserID: "user_a"}).String(); got != "user=user_a session" {
		t.Errorf("String() = %q", got)
	}
}

func TestNewIDValidID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := wf.NewID("world")
		if !strings.HasPrefix(id, "world_") || len(id) != len("world_")+20 {
			t.Fatalf("NewID = %q", id)
		}
		if !wf.ValidID("world", id) {
			t.Fatalf("ValidID(world, %q) = false", id)
		}
		if wf.ValidID("quest", id) {
			t.Fatalf("ValidID(quest, %q) = true", id)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
	}
	cases := []struct {
		prefix, s string
		want      bool
	}{
		{"world", "world_abc", true},
		{"world", "world_a-b_c9", true},
		{"world", "world_" + strings.Repeat("a", 64), true},
		{"world", "world_" + strings.Repeat("a", 65), false},
		{"world", "world_", false},
		{"world", "world", false},
		{"world", "", false},
		{"world", "worldabc", false},
		{"world", "quest_abc", false},
		{"world", "world_ABC", false},
		{"world", "world_ab c", false},
		{"world", "world_é", false},
		{"world", "world_ab\x00", false},
		{"world", "xworld_abc", false},
	}
	for _, tc := range cases {
		if got := wf.ValidID(tc.prefix, tc.s); got != tc.want {
			t.Errorf("ValidID(%q, %q) = %v, want %v", tc.prefix, tc.s, got, tc.want)
		}
	}
}

// TestPOISight pins the one POI visibility rule: the owner and GMs see
// every POI, players and observers the party's only, strangers none (and
// a POI of any other visibility is the GM's).
func TestPOISight(t *testing.T) {
	gm, party, odd := &wf.POI{Visibility: wf.AudienceGM}, &wf.POI{Visibility: wf.AudienceParty}, &wf.POI{Visibility: "secret"}
	for _, c := range []struct {
		role             string
		sight            wf.POISight
		gm, party, other bool
	}{
		{wf.RoleOwner, wf.SeesAllPOIs, true, true, true},
		{wf.RoleGM, wf.SeesAllPOIs, true, true, true},
		{wf.RolePlayer, wf.SeesPartyPOIs, false, true, false},
		{wf.RoleObserver, wf.SeesPartyPOIs, false, true, false},
		{"", wf.SeesNoPOIs, false, false, false},
		{"admin", wf.SeesNoPOIs, false, false, false},
	} {
		s := wf.POISightOf(c.role)
		if s != c.sight || s.Sees(gm) != c.gm || s.Sees(party) != c.party || s.Sees(odd) != c.other {
			t.Errorf("%q: sight %d, sees gm %v party %v other %v", c.role, s, s.Sees(gm), s.Sees(party), s.Sees(odd))
		}
	}
}
