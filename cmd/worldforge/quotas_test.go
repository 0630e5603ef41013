package main

import (
	"errors"
	"io/fs"
	"os"
	"testing"

	wf "github.com/worldforge-go/worldforge"
)

// TestServeQuotaFlagsBad: a negative quota is a one-line usage error
// (exit 2) naming the flag, before the database is opened.
func TestServeQuotaFlagsBad(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"negative worlds", []string{"--quota-worlds", "-1"}, []string{"--quota-worlds", "-1"}},
		{"negative cells", []string{"--quota-cells", "-5"}, []string{"--quota-cells"}},
		{"negative lore entities", []string{"--quota-lore-entities", "-1"}, []string{"--quota-lore-entities"}},
		{"negative pending proposals", []string{"--quota-pending-proposals", "-2"}, []string{"--quota-pending-proposals"}},
		{"negative keys", []string{"--quota-keys", "-1"}, []string{"--quota-keys"}},
		{"negative even with quotas off", []string{"--quotas=false", "--quota-keys", "-1"}, []string{"--quota-keys"}},
		{"worlds not a number", []string{"--quota-worlds", "lots"}, []string{"-quota-worlds", "lots"}},
		{"fractional cells", []string{"--quota-cells", "1.5"}, []string{"-quota-cells", "1.5"}},
		{"quotas not a boolean", []string{"--quotas=maybe"}, []string{"-quotas", "maybe"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dsn, path := newDSN(t)
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", dsn}, tc.args...)
			r := runMain(t, nil, args...)
			checkOneLineError(t, r, 2, tc.want...)
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a usage error touched the database file (stat: %v)", err)
			}
		})
	}
}

// TestServeQuotas runs `worldforge serve --quota-worlds 1` and creates
// worlds over /mcp: the user's second is quota_exceeded: worlds; with
// --quotas=false on the same database it goes through.
func TestServeQuotas(t *testing.T) {
	t.Parallel()
	dsn, _ := newDSN(t)
	owner := mustValue(t, nil, userIDRe, "user", "create", "Owner", "--db", dsn)
	key := mustValue(t, nil, keyRe, "key", "create", "--user", owner, "--scopes", "world:write", "--db", dsn)
	create := func(s *server) (string, bool) {
		t.Helper()
		cs := connectMCP(t, s.url, key, "")
		return callText(t, cs, wf.ToolCreateWorld, map[string]any{"name": "W", "size": "small"})
	}
	s := startServe(t, dsn, "--log-level", "warn", "--quota-worlds", "1")
	if text, isErr := create(s); isErr {
		t.Fatalf("first world: %s", text)
	}
	if text, isErr := create(s); !isErr || text != "quota_exceeded: worlds" {
		t.Fatalf("second world: isError %v %q, want quota_exceeded: worlds", isErr, text)
	}
	s.stop(t)
	s = startServe(t, dsn, "--log-level", "warn", "--quota-worlds", "1", "--quotas=false")
	if text, isErr := create(s); isErr {
		t.Fatalf("quotas off: %s", text)
	}
	s.stop(t)
}

// TestKeyCreateQuota: key create holds the keys quota (--quota-keys,
// unrevoked keys only); 0 lifts it; a negative value is a usage error.
func TestKeyCreateQuota(t *testing.T) {
	t.Parallel()
	dsn, _ := newDSN(t)
	user := mustValue(t, nil, userIDRe, "user", "create", "Agent", "--db", dsn)
	create := func(extra ...string) result {
		return runMain(t, nil, append([]string{"key", "create", "--user", user, "--scopes", "world:read", "--db", dsn}, extra...)...)
	}
	first := mustValue(t, nil, keyRe, "key", "create", "--user", user, "--scopes", "world:read", "--db", dsn, "--quota-keys", "2")
	mustValue(t, nil, keyRe, "key", "create", "--user", user, "--scopes", "world:read", "--db", dsn, "--quota-keys", "2")
	r := create("--quota-keys", "2")
	checkOneLineError(t, r, 1, "key create", user, "quota_exceeded: keys", "--quota-keys")
	if r.stdout != "" {
		t.Errorf("a refused key create printed %q", r.stdout)
	}
	// Revoking one frees a place.
	if r := runMain(t, nil, "key", "revoke", first, "--db", dsn); r.err != nil {
		t.Fatalf("revoke: %v", r.err)
	}
	mustValue(t, nil, keyRe, "key", "create", "--user", user, "--scopes", "world:read", "--db", dsn, "--quota-keys", "2")
	checkOneLineError(t, create("--quota-keys", "2"), 1, "quota_exceeded: keys")
	mustValue(t, nil, keyRe, "key", "create", "--user", user, "--scopes", "world:read", "--db", dsn, "--quota-keys", "0")
	checkOneLineError(t, create("--quota-keys", "-1"), 2, "--quota-keys")
}
