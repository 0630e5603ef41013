package main

// End-to-end tests of the command line: run is called in-process with a
// fake environment, the SQLite store in a temporary directory, and the
// results are checked both on stdout/stderr (the contract scripts rely on)
// and in the database.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/internal/cli"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

var (
	userIDRe = regexp.MustCompile(`^user_[a-z2-7]{20}$`)
	keyRe    = regexp.MustCompile(`^wk_live_[a-z2-7]{32}$`)
	jwtRe    = regexp.MustCompile(`^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$`)
	worldRe  = regexp.MustCompile(`^world_[a-z2-7]{20}$`)
	// loginLinkRe is a login link printed by login-link.
	loginLinkRe = regexp.MustCompile(`^https?://[^/\s]+/login/wfl_[a-z2-7]{32}$`)
)

// unreachablePG is a PostgreSQL DSN nobody answers on: port 1 refuses at
// once, and connect_timeout bounds it anyway.
const unreachablePG = "postgres://nobody@127.0.0.1:1/x?sslmode=disable&connect_timeout=2"

// cmdTimeout bounds one admin command. It is far above what any command
// needs; a command that only ends because of it has failed (see runMain).
const cmdTimeout = 30 * time.Second

// exitCode and usageError are main's view of an error.
var exitCode = cli.ExitCode

type usageError = cli.UsageError

// result is what one run of the program produced.
type result struct {
	stdout, stderr string
	err            error
}

// getenvFrom turns a map into a getenv function; a nil map is an empty
// environment (no HOME, no WORLDFORGE_DB: nothing leaks in from the host).
func getenvFrom(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// runMain runs the program in-process with env as its environment.
func runMain(t testing.TB, env map[string]string, args ...string) result {
	t.Helper()
	return runMainWithin(t, cmdTimeout, env, args...)
}

// runMainWithin is runMain with another bound on how long the command may
// take, for a command that builds or starts other programs.
func runMainWithin(t testing.TB, limit time.Duration, env map[string]string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, args, getenvFrom(env), &stdout, &stderr)
	if ctx.Err() != nil {
		// The command only ended because the test gave up on it: it hung
		// (a server that started, a database it kept waiting for).
		t.Fatalf("worldforge %s: still running after %s (returned %v)", strings.Join(args, " "), limit, err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// MustRunMain runs the program and fails the test unless it succeeded
// without writing anything to stderr. It returns stdout.
func MustRunMain(t testing.TB, env map[string]string, args ...string) string {
	t.Helper()
	r := runMain(t, env, args...)
	if r.err != nil {
		t.Fatalf("worldforge %s: %v (exit %d)\nstdout: %q\nstderr: %q", strings.Join(args, " "), r.err, exitCode(r.err), r.stdout, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("worldforge %s: wrote to stderr on success: %q", strings.Join(args, " "), r.stderr)
	}
	return r.stdout
}

// mustValue runs a command that prints one value and checks that stdout is
// exactly that value on one line, matching re.
func mustValue(t testing.TB, env map[string]string, re *regexp.Regexp, args ...string) string {
	t.Helper()
	out := MustRunMain(t, env, args...)
	v, ok := strings.CutSuffix(out, "\n")
	if !ok || strings.ContainsAny(v, "\r\n") || !re.MatchString(v) {
		t.Fatalf("worldforge %s: stdout = %q, want one line matching %s", strings.Join(args, " "), out, re)
	}
	return v
}

// mustQuiet runs a command that prints nothing on success.
func mustQuiet(t testing.TB, env map[string]string, args ...string) {
	t.Helper()
	if out := MustRunMain(t, env, args...); out != "" {
		t.Fatalf("worldforge %s: stdout = %q, want nothing", strings.Join(args, " "), out)
	}
}

// newDSN returns the DSN of a fresh SQLite database in a temporary
// directory, and the file's path.
func newDSN(t testing.TB) (dsn, path string) {
	path = filepath.Join(t.TempDir(), "wf.db")
	return "sqlite:" + path, path
}

// openStore opens the store the way the server does; it is closed with the
// test.
func openStore(t testing.TB, dsn string) *sqlstore.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	db, err := sqlstore.Open(ctx, dsn, &sqlstore.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("open store %s: %v", dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// createWorld makes a world owned by ownerID directly in the store.
func createWorld(t testing.TB, db *sqlstore.DB, ownerID string) string {
	t.Helper()
	w := &wf.World{OwnerID: ownerID, Name: "Test World", Seed: 7, Cols: 4, Rows: 4,
		JSON: json.RawMessage(`{"grid":{"type":"hex","cols":4,"rows":4}}`)}
	if err := db.CreateWorld(context.Background(), w); err != nil {
		t.Fatalf("create world: %v", err)
	}
	return w.ID
}

// snapshot counts the rows a command could change, read straight from the
// SQLite file (read-only), so that a failed command can be shown to have
// changed nothing.
type snapshot map[string]int

func takeSnapshot(t testing.TB, path string) snapshot {
	t.Helper()
	raw, err := sql.Open("sqlite", path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer raw.Close()
	s := snapshot{}
	for name, q := range map[string]string{
		"users":            "SELECT COUNT(*) FROM users",
		"api_keys":         "SELECT COUNT(*) FROM api_keys",
		"revoked api_keys": "SELECT COUNT(*) FROM api_keys WHERE revoked_at IS NOT NULL",
		"worlds":           "SELECT COUNT(*) FROM worlds",
		"world_members":    "SELECT COUNT(*) FROM world_members",
		"secrets":          "SELECT COUNT(*) FROM secrets",
	} {
		var n int
		if err := raw.QueryRow(q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		s[name] = n
	}
	return s
}

// authenticator returns a fresh Authenticator on db (no cached verdicts).
func authenticator(t testing.TB, db *sqlstore.DB) *auth.Authenticator {
	t.Helper()
	a, err := auth.New(context.Background(), db, &auth.Options{CacheTTL: -1})
	if err != nil {
		t.Fatalf("auth.New: %v", err)
	}
	return a
}

// TestAdminChain walks the admin commands end to end on one database and
// checks each printed value against the rows it made.
func TestAdminChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, _ := newDSN(t)
	env := map[string]string{} // nothing but --db

	alice := mustValue(t, env, userIDRe, "user", "create", "Alice", "--db", dsn)
	bob := mustValue(t, env, userIDRe, "user", "create", "--db", dsn, "Bob the GM")
	carol := mustValue(t, env, userIDRe, "user", "create", "Carol", "--db", dsn)
	if alice == bob || bob == carol || alice == carol {
		t.Fatalf("user ids repeat: %s %s %s", alice, bob, carol)
	}
	// NAME is limited in characters, not bytes: 120 two-byte runes fit.
	longName := strings.Repeat("é", 120)
	long := mustValue(t, env, userIDRe, "user", "create", longName, "--db", dsn)

	db := openStore(t, dsn)
	for id, name := range map[string]string{alice: "Alice", bob: "Bob the GM", carol: "Carol", long: longName} {
		u, err := db.FindUserByID(ctx, id)
		if err != nil {
			t.Fatalf("FindUserByID(%s): %v", id, err)
		}
		if u.Name != name {
			t.Errorf("user %s: name %q, want %q", id, u.Name, name)
		}
	}

	// key create: the key is stored (by hash) for alice, with those scopes.
	key := mustValue(t, env, keyRe, "key", "create", "--db", dsn, "--user", alice, "--scopes", "world:read, wiki:read,world:read")
	k, err := db.FindAPIKeyByHash(ctx, auth.HashKey(key))
	if err != nil {
		t.Fatalf("FindAPIKeyByHash: %v", err)
	}
	if k.UserID != alice || !slices.Equal(k.Scopes, []string{"world:read", "wiki:read"}) || k.RevokedAt != nil {
		t.Errorf("stored key = user %s scopes %v revoked %v; want user %s scopes [world:read wiki:read], not revoked", k.UserID, k.Scopes, k.RevokedAt, alice)
	}
	key2 := mustValue(t, env, keyRe, "key", "create", "--db", dsn, "--user", alice, "--scopes", "*")
	if key2 == key {
		t.Fatal("two key create calls printed the same key")
	}
	a := authenticator(t, db)
	if actor, err := a.Authenticate(ctx, key); err != nil || actor.UserID != alice || actor.Kind != wf.CredentialAPIKey {
		t.Fatalf("Authenticate(new key) = %+v, %v; want alice's API key", actor, err)
	}

	// key create --name, key list: one line per key, tab-separated; the
	// key just used shows when.
	named := mustValue(t, env, keyRe, "key", "create", "--db", dsn, "--user", alice, "--scopes", "world:read,world:write", "--name", "  CI runner ")
	listed := keyLines(t, env, dsn, alice)
	if len(listed) != 3 {
		t.Fatalf("key list: %d lines, want 3: %q", len(listed), listed)
	}
	for i, secret := range []string{named, key2, key} {
		k, err := db.FindAPIKeyByHash(ctx, auth.HashKey(secret))
		if err != nil {
			t.Fatal(err)
		}
		f, ok := listed[k.ID]
		if !ok {
			t.Fatalf("key list has no line for %s: %q", k.ID, listed)
		}
		wantName, wantScopes, wantUsed := "-", "*", "-"
		switch i {
		case 0:
			wantName, wantScopes = "CI runner", "world:read,world:write"
		case 2:
			wantScopes, wantUsed = "world:read,wiki:read", k.LastUsedAt.UTC().Format(time.RFC3339)
		}
		want := []string{k.ID, wantName, secret[:len(auth.KeyPrefix)+4], wantScopes, k.CreatedAt.UTC().Format(time.RFC3339), wantUsed, "-"}
		if !slices.Equal(f, want) {
			t.Errorf("key list line of key %d = %q, want %q", i, f, want)
		}
		if strings.Contains(strings.Join(f, "\t"), secret) {
			t.Errorf("key list shows a whole key")
		}
	}
	if out := MustRunMain(t, env, "key", "list", "--user", bob, "--db", dsn); out != "" {
		t.Errorf("key list of a user without keys: %q, want nothing", out)
	}

	// token: a JWT this database's authenticator accepts, for alice.
	for _, args := range [][]string{
		{"token", "--db", dsn, "--user", alice},
		{"token", "--db", dsn, "--user", alice, "--ttl", "2h"},
		{"token", "--user=" + alice, "--ttl=90s", "-db", dsn},
	} {
		jwt := mustValue(t, env, jwtRe, args...)
		actor, err := a.Authenticate(ctx, jwt)
		if err != nil || actor.UserID != alice || actor.Kind != wf.CredentialSession {
			t.Fatalf("Authenticate(token from %v) = %+v, %v; want alice's session", args, actor, err)
		}
	}

	// token rotate-key: a new key id; tokens minted before are refused,
	// tokens minted after pass.
	before := mustValue(t, env, jwtRe, "token", "--db", dsn, "--user", alice)
	kid := mustValue(t, env, regexp.MustCompile(`^[0-9a-f]{16}$`), "token", "rotate-key", "--db", dsn)
	after := mustValue(t, env, jwtRe, "token", "--db", dsn, "--user", alice)
	rotated := authenticator(t, db)
	if _, err := rotated.Authenticate(ctx, before); !errors.Is(err, wf.ErrUnauthorized) {
		t.Errorf("token minted before rotate-key: %v, want unauthorized", err)
	}
	if actor, err := rotated.Authenticate(ctx, after); err != nil || actor.UserID != alice {
		t.Errorf("token minted after rotate-key (key %s): %+v, %v", kid, actor, err)
	}

	// world add-gm / add-member on a world alice owns.
	world := createWorld(t, db, alice)
	mustQuiet(t, env, "world", "add-gm", world, bob, "--db", dsn)
	mustQuiet(t, env, "world", "add-member", "--db", dsn, world, carol)
	for user, want := range map[string]string{alice: wf.RoleOwner, bob: wf.RoleGM, carol: wf.RolePlayer} {
		if got, err := db.WorldRole(ctx, world, user); err != nil || got != want {
			t.Errorf("WorldRole(%s) = %q, %v; want %q", user, got, err, want)
		}
	}
	// A second call replaces the role.
	mustQuiet(t, env, "world", "add-member", world, bob, "--db", dsn)
	if got, err := db.WorldRole(ctx, world, bob); err != nil || got != wf.RolePlayer {
		t.Errorf("after add-member, WorldRole(bob) = %q, %v; want player", got, err)
	}
	mustQuiet(t, env, "world", "add-gm", world, bob, "--db", dsn)
	if got, err := db.WorldRole(ctx, world, bob); err != nil || got != wf.RoleGM {
		t.Errorf("after add-gm, WorldRole(bob) = %q, %v; want gm", got, err)
	}

	// key revoke: revoked_at set, the key refused, the other key untouched.
	mustQuiet(t, env, "key", "revoke", key, "--db", dsn)
	k, err = db.FindAPIKeyByHash(ctx, auth.HashKey(key))
	if err != nil {
		t.Fatalf("FindAPIKeyByHash after revoke: %v", err)
	}
	if k.RevokedAt == nil {
		t.Fatal("key revoke: revoked_at is still empty")
	}
	if _, err := authenticator(t, db).Authenticate(ctx, key); !errors.Is(err, wf.ErrUnauthorized) {
		t.Errorf("Authenticate(revoked key) err = %v, want unauthorized", err)
	}
	if k2, err := db.FindAPIKeyByHash(ctx, auth.HashKey(key2)); err != nil || k2.RevokedAt != nil {
		t.Errorf("the other key: %+v, %v; want it not revoked", k2, err)
	}
	if f := keyLines(t, env, dsn, alice)[k.ID]; len(f) != 7 || f[6] != k.RevokedAt.UTC().Format(time.RFC3339) {
		t.Errorf("key list after revoke: %q, want revoked at %v", f, k.RevokedAt)
	}
	// Revoking again succeeds and keeps the first revocation time.
	first := *k.RevokedAt
	mustQuiet(t, env, "key", "revoke", "--db", dsn, key)
	if k, err = db.FindAPIKeyByHash(ctx, auth.HashKey(key)); err != nil || k.RevokedAt == nil || !k.RevokedAt.Equal(first) {
		t.Errorf("second revoke: revoked_at %v (err %v), want %v kept", k.RevokedAt, err, first)
	}
}

// keyLines runs key list for the user and returns its lines' fields by
// key id, checking that keys come newest first.
func keyLines(t *testing.T, env map[string]string, dsn, user string) map[string][]string {
	t.Helper()
	out := MustRunMain(t, env, "key", "list", "--user", user, "--db", dsn)
	lines := map[string][]string{}
	var prev time.Time
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 7 {
			t.Fatalf("key list line %q: %d fields, want 7", line, len(f))
		}
		created, err := time.Parse(time.RFC3339, f[4])
		if err != nil {
			t.Fatalf("key list line %q: created: %v", line, err)
		}
		if i > 0 && created.After(prev) {
			t.Errorf("key list: %q is newer than the line before", line)
		}
		prev = created
		lines[f[0]] = f
	}
	return lines
}

// TestDatabaseSelection checks where the commands find their database:
// --db, else WORLDFORGE_DB, else the data directory.
func TestDatabaseSelection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("env fallback and --db wins", func(t *testing.T) {
		t.Parallel()
		dsnEnv, _ := newDSN(t)
		dsnFlag, _ := newDSN(t)
		env := map[string]string{"WORLDFORGE_DB": dsnEnv}

		viaEnv := mustValue(t, env, userIDRe, "user", "create", "Env")
		viaFlag := mustValue(t, env, userIDRe, "user", "create", "Flag", "--db", dsnFlag)

		dbEnv, dbFlag := openStore(t, dsnEnv), openStore(t, dsnFlag)
		if _, err := dbEnv.FindUserByID(ctx, viaEnv); err != nil {
			t.Errorf("user made with WORLDFORGE_DB is not in that database: %v", err)
		}
		if _, err := dbFlag.FindUserByID(ctx, viaEnv); !errors.Is(err, wf.ErrNotFound) {
			t.Errorf("user made with WORLDFORGE_DB is in the --db database too (err %v)", err)
		}
		if _, err := dbFlag.FindUserByID(ctx, viaFlag); err != nil {
			t.Errorf("user made with --db is not in that database: %v", err)
		}
		if _, err := dbEnv.FindUserByID(ctx, viaFlag); !errors.Is(err, wf.ErrNotFound) {
			t.Errorf("--db did not win over WORLDFORGE_DB: the user is in the env database (err %v)", err)
		}

		// The rest of the chain on the env database, flags after arguments.
		key := mustValue(t, env, keyRe, "key", "create", "--user", viaEnv, "--scopes", "lore:read")
		mustValue(t, env, jwtRe, "token", "--user", viaEnv)
		world := createWorld(t, dbEnv, viaEnv)
		other := mustValue(t, env, userIDRe, "user", "create", "Other")
		mustQuiet(t, env, "world", "add-member", world, other)
		if role, err := dbEnv.WorldRole(ctx, world, other); err != nil || role != wf.RolePlayer {
			t.Errorf("WorldRole = %q, %v; want player", role, err)
		}
		mustQuiet(t, env, "key", "revoke", key)
		if k, err := dbEnv.FindAPIKeyByHash(ctx, auth.HashKey(key)); err != nil || k.RevokedAt == nil {
			t.Errorf("key revoked via WORLDFORGE_DB: %+v, %v; want revoked", k, err)
		}
	})

	t.Run("a name that starts with a dash after --", func(t *testing.T) {
		t.Parallel()
		dsn, _ := newDSN(t)
		id := mustValue(t, nil, userIDRe, "user", "create", "--db", dsn, "--", "-dash")
		if u, err := openStore(t, dsn).FindUserByID(ctx, id); err != nil || u.Name != "-dash" {
			t.Errorf("user = %+v, %v; want name -dash", u, err)
		}
	})

	// Without --db or WORLDFORGE_DB: the data directory.
	for _, tc := range []struct {
		name string
		env  func(dir string) map[string]string
		file func(dir string) string
	}{
		{"WORLDFORGE_DATA_DIR",
			func(d string) map[string]string {
				return map[string]string{"WORLDFORGE_DATA_DIR": filepath.Join(d, "data"), "XDG_DATA_HOME": filepath.Join(d, "xdg"), "HOME": d}
			},
			func(d string) string { return filepath.Join(d, "data", "worldforge.db") }},
		{"XDG_DATA_HOME",
			func(d string) map[string]string {
				return map[string]string{"XDG_DATA_HOME": filepath.Join(d, "xdg"), "HOME": d}
			},
			func(d string) string { return filepath.Join(d, "xdg", "worldforge", "worldforge.db") }},
		{"HOME",
			func(d string) map[string]string { return map[string]string{"HOME": d} },
			func(d string) string { return filepath.Join(d, ".local", "share", "worldforge", "worldforge.db") }},
	} {
		t.Run("default database via "+tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			id := mustValue(t, tc.env(dir), userIDRe, "user", "create", "Default")
			if _, err := openStore(t, "sqlite:"+tc.file(dir)).FindUserByID(ctx, id); err != nil {
				t.Errorf("user not in %s: %v", tc.file(dir), err)
			}
		})
	}

	t.Run("no database anywhere", func(t *testing.T) {
		t.Parallel()
		for _, args := range [][]string{{"user", "create", "Nobody"}, {"serve", "--addr", "127.0.0.1:0"}} {
			r := runMain(t, nil, args...)
			checkOneLineError(t, r, 1, "data directory", "--db")
		}
	})
}

// checkOneLineError checks a failed run: the exit code, an error of one
// line containing each of want, nothing on stdout, and nothing on stderr
// (main prints the error itself: one line in all).
func checkOneLineError(t testing.TB, r result, wantCode int, want ...string) {
	t.Helper()
	if r.err == nil {
		t.Fatalf("succeeded (stdout %q, stderr %q), want an error", r.stdout, r.stderr)
	}
	msg := r.err.Error()
	if code := exitCode(r.err); code != wantCode {
		t.Errorf("exit code %d, want %d (error %q)", code, wantCode, msg)
	}
	if msg == "" || strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error %q is not one line", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not mention %q", msg, w)
		}
	}
	if r.stdout != "" {
		t.Errorf("stdout = %q, want nothing", r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("stderr = %q, want nothing besides the error main prints", r.stderr)
	}
}

// TestBadInput runs every kind of mistake against a database with a user,
// a key and a world in it, and checks that each fails with a one-line
// error and changes nothing.
func TestBadInput(t *testing.T) {
	t.Parallel()
	const (
		ghostUser  = "user_aaaaaaaaaaaaaaaaaaaa"
		ghostWorld = "world_aaaaaaaaaaaaaaaaaaaa"
		ghostKey   = "wk_live_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	)
	// Placeholders in args: {db} {user} {world} {key} {file} {garbage}.
	cases := []struct {
		name string
		args []string
		code int
		want []string // substrings of the error
	}{
		{"unknown command", []string{"frobnicate", "--db", "{db}"}, 2, []string{"unknown command", "frobnicate"}},
		{"user without subcommand", []string{"user"}, 2, []string{"user create NAME"}},
		{"user unknown subcommand", []string{"user", "delete", "{user}", "--db", "{db}"}, 2, []string{"user create NAME"}},
		{"user create without name", []string{"user", "create", "--db", "{db}"}, 2, []string{"NAME", "0 argument"}},
		{"user create two names", []string{"user", "create", "Ann", "Bea", "--db", "{db}"}, 2, []string{"NAME", "2 argument"}},
		{"user create empty name", []string{"user", "create", "", "--db", "{db}"}, 2, []string{"NAME"}},
		{"user create blank name", []string{"user", "create", "  \t ", "--db", "{db}"}, 2, []string{"NAME"}},
		{"user create name too long", []string{"user", "create", strings.Repeat("é", 121), "--db", "{db}"}, 2, []string{"NAME", "120"}},
		{"user create undefined flag", []string{"user", "create", "Ann", "--nope", "--db", "{db}"}, 2, []string{"-nope"}},
		{"user create flag without value", []string{"user", "create", "Ann", "--db"}, 2, []string{"-db"}},

		{"key without subcommand", []string{"key"}, 2, []string{"key create", "key revoke"}},
		{"key flag before subcommand", []string{"key", "--db", "{db}", "create"}, 2, []string{"create, list or revoke"}},
		{"key unknown subcommand", []string{"key", "delete", "--db", "{db}"}, 2, []string{"delete"}},
		{"key create name too long", []string{"key", "create", "--user", "{user}", "--scopes", "*", "--name", strings.Repeat("n", 101), "--db", "{db}"}, 2, []string{"--name", "100"}},
		{"key create name with a line break", []string{"key", "create", "--user", "{user}", "--scopes", "*", "--name", "a\nb", "--db", "{db}"}, 2, []string{"--name", "control"}},
		{"key create name without value", []string{"key", "create", "--user", "{user}", "--scopes", "*", "--name"}, 2, []string{"-name"}},
		{"key list without --user", []string{"key", "list", "--db", "{db}"}, 2, []string{"key list", "--user"}},
		{"key list unknown user", []string{"key", "list", "--user", ghostUser, "--db", "{db}"}, 1, []string{"key list", ghostUser, "not found"}},
		{"key list positional argument", []string{"key", "list", "{user}", "--db", "{db}"}, 2, []string{"key list"}},
		{"key list undefined flag", []string{"key", "list", "--user", "{user}", "--scopes", "*", "--db", "{db}"}, 2, []string{"-scopes"}},
		{"key create without --user", []string{"key", "create", "--scopes", "world:read", "--db", "{db}"}, 2, []string{"--user"}},
		{"key create without --scopes", []string{"key", "create", "--user", "{user}", "--db", "{db}"}, 2, []string{"--scopes"}},
		{"key create empty --scopes", []string{"key", "create", "--user", "{user}", "--scopes", " , ", "--db", "{db}"}, 2, []string{"--scopes"}},
		{"key create unknown scope", []string{"key", "create", "--user", "{user}", "--scopes", "world:read,bogus", "--db", "{db}"}, 2, []string{"--scopes", `"bogus"`}},
		{"key create unknown user", []string{"key", "create", "--user", ghostUser, "--scopes", "world:read", "--db", "{db}"}, 1, []string{"user", ghostUser, "not found"}},
		{"key create positional argument", []string{"key", "create", "extra", "--user", "{user}", "--scopes", "*", "--db", "{db}"}, 2, []string{"key create"}},
		{"key create undefined flag", []string{"key", "create", "--user", "{user}", "--scopes", "*", "--nope", "--db", "{db}"}, 2, []string{"-nope"}},
		{"key revoke not a key", []string{"key", "revoke", "notakey", "--db", "{db}"}, 2, []string{"notakey", "not an API key"}},
		{"key revoke without key", []string{"key", "revoke", "--db", "{db}"}, 2, []string{"KEY"}},
		{"key revoke two keys", []string{"key", "revoke", "{key}", ghostKey, "--db", "{db}"}, 2, []string{"KEY"}},
		{"key revoke unknown key", []string{"key", "revoke", ghostKey, "--db", "{db}"}, 1, []string{"key revoke", "no API key"}},

		{"token without --user", []string{"token", "--db", "{db}"}, 2, []string{"--user"}},
		{"token rotate-key with an argument", []string{"token", "rotate-key", "now", "--db", "{db}"}, 2, []string{"rotate-key"}},
		{"token rotate-key undefined flag", []string{"token", "rotate-key", "--user", "{user}", "--db", "{db}"}, 2, []string{"-user"}},
		{"token negative ttl", []string{"token", "--user", "{user}", "--ttl", "-1h", "--db", "{db}"}, 2, []string{"--ttl"}},
		{"token zero ttl", []string{"token", "--user", "{user}", "--ttl", "0s", "--db", "{db}"}, 2, []string{"--ttl"}},
		{"token sub-second ttl", []string{"token", "--user", "{user}", "--ttl", "500ms", "--db", "{db}"}, 2, []string{"--ttl"}},
		{"token ttl too long", []string{"token", "--user", "{user}", "--ttl", "9000h", "--db", "{db}"}, 2, []string{"--ttl"}},
		{"token ttl not a duration", []string{"token", "--user", "{user}", "--ttl", "banana", "--db", "{db}"}, 2, []string{"-ttl", "banana"}},
		{"token unknown user", []string{"token", "--user", ghostUser, "--db", "{db}"}, 1, []string{"user", ghostUser, "not found"}},
		{"token positional argument", []string{"token", "{user}", "--db", "{db}"}, 2, []string{"token"}},
		{"token undefined flag", []string{"token", "--user", "{user}", "--scopes", "*", "--db", "{db}"}, 2, []string{"-scopes"}},

		{"login-link without --user", []string{"login-link", "--db", "{db}"}, 2, []string{"--user"}},
		{"login-link unknown user", []string{"login-link", "--user", ghostUser, "--db", "{db}"}, 1, []string{"user", ghostUser, "not found"}},
		{"login-link zero ttl", []string{"login-link", "--user", "{user}", "--ttl", "0s", "--db", "{db}"}, 2, []string{"--ttl"}},
		{"login-link ttl too long", []string{"login-link", "--user", "{user}", "--ttl", "200h", "--db", "{db}"}, 2, []string{"--ttl"}},
		{"login-link not a URL", []string{"login-link", "--user", "{user}", "--url", "ftp://x", "--db", "{db}"}, 2, []string{"--url", "ftp://x"}},
		{"login-link URL with a query", []string{"login-link", "--user", "{user}", "--url", "http://x/?a=1", "--db", "{db}"}, 2, []string{"--url"}},
		{"login-link positional argument", []string{"login-link", "{user}", "--db", "{db}"}, 2, []string{"login-link"}},
		{"sessions without subcommand", []string{"sessions"}, 2, []string{"sessions revoke"}},
		{"sessions unknown subcommand", []string{"sessions", "list", "--db", "{db}"}, 2, []string{"sessions revoke"}},
		{"sessions revoke without --user", []string{"sessions", "revoke", "--db", "{db}"}, 2, []string{"--user"}},
		{"sessions revoke positional argument", []string{"sessions", "revoke", "{user}", "--db", "{db}"}, 2, []string{"sessions revoke"}},

		{"world without subcommand", []string{"world"}, 2, []string{"add-gm", "add-member"}},
		{"world unknown subcommand", []string{"world", "add-owner", "{world}", "{user}", "--db", "{db}"}, 2, []string{"add-owner"}},
		{"world add-gm one argument", []string{"world", "add-gm", "{world}", "--db", "{db}"}, 2, []string{"WORLD_ID USER_ID", "1 argument"}},
		{"world add-member three arguments", []string{"world", "add-member", "{world}", "{user}", "{user}", "--db", "{db}"}, 2, []string{"WORLD_ID USER_ID"}},
		{"world add-gm unknown world", []string{"world", "add-gm", ghostWorld, "{user}", "--db", "{db}"}, 1, []string{"world", ghostWorld, "not found"}},
		{"world add-gm unknown user", []string{"world", "add-gm", "{world}", ghostUser, "--db", "{db}"}, 1, []string{"user", ghostUser, "not found"}},
		{"world add-member unknown user", []string{"world", "add-member", "{world}", ghostUser, "--db", "{db}"}, 1, []string{"user", ghostUser, "not found"}},
		{"world add-gm undefined flag", []string{"world", "add-gm", "{world}", "{user}", "--nope", "--db", "{db}"}, 2, []string{"-nope"}},

		{"world create without --user", []string{"world", "create", "--name", "W", "--db", "{db}"}, 2, []string{"--user"}},
		{"world create without --name", []string{"world", "create", "--user", "{user}", "--db", "{db}"}, 2, []string{"--name"}},
		{"world create unknown user", []string{"world", "create", "--user", ghostUser, "--name", "W", "--db", "{db}"}, 1, []string{"user", ghostUser, "not found"}},
		{"world create unknown template", []string{"world", "create", "--user", "{user}", "--name", "W", "--template", "starter-moon", "--db", "{db}"}, 2, []string{"unknown_template"}},
		{"world create bad size", []string{"world", "create", "--user", "{user}", "--name", "W", "--size", "huge", "--db", "{db}"}, 2, []string{"bad_request", "size"}},
		{"world create name too long", []string{"world", "create", "--user", "{user}", "--name", strings.Repeat("n", 121), "--db", "{db}"}, 2, []string{"bad_request"}},
		{"world create seed out of range", []string{"world", "create", "--user", "{user}", "--name", "W", "--seed", "9007199254740993", "--db", "{db}"}, 2, []string{"--seed", "out of range"}},
		{"world create positional argument", []string{"world", "create", "W", "--user", "{user}", "--name", "W", "--db", "{db}"}, 2, []string{"world create"}},
		{"world render without -o", []string{"world", "render", "{world}", "--db", "{db}"}, 2, []string{"-o"}},
		{"world render without world", []string{"world", "render", "-o", "{file}", "--db", "{db}"}, 2, []string{"WORLD_ID"}},
		{"world render unknown world", []string{"world", "render", ghostWorld, "-o", "{file}", "--db", "{db}"}, 1, []string{"world", ghostWorld, "not found"}},
		{"world render cell size", []string{"world", "render", "{world}", "-o", "{file}", "--cell-px", "65", "--db", "{db}"}, 2, []string{"--cell-px"}},

		{"serve undefined flag", []string{"serve", "--nope", "--addr", "127.0.0.1:0", "--db", "{db}"}, 2, []string{"-nope"}},
		{"serve bad addr", []string{"serve", "--addr", "nonsense", "--db", "{db}"}, 2, []string{"--addr", "nonsense"}},
		{"serve bad log level", []string{"serve", "--log-level", "loud", "--addr", "127.0.0.1:0", "--db", "{db}"}, 2, []string{"--log-level", "loud"}},
		{"serve bad log format", []string{"serve", "--log-format", "xml", "--addr", "127.0.0.1:0", "--db", "{db}"}, 2, []string{"--log-format", "xml"}},
		{"serve zero shutdown timeout", []string{"serve", "--shutdown-timeout", "0s", "--addr", "127.0.0.1:0", "--db", "{db}"}, 2, []string{"--shutdown-timeout"}},
		{"serve bad shutdown timeout", []string{"serve", "--shutdown-timeout", "soon", "--addr", "127.0.0.1:0", "--db", "{db}"}, 2, []string{"-shutdown-timeout"}},
		{"serve zero oauth access ttl", []string{"serve", "--oauth-access-ttl", "0s", "--addr", "127.0.0.1:0", "--db", "{db}"}, 2, []string{"--oauth-access-ttl"}},
		{"serve oauth refresh shorter than access", []string{"serve", "--oauth-access-ttl", "1h", "--oauth-refresh-ttl", "1m", "--addr", "127.0.0.1:0", "--db", "{db}"}, 2, []string{"--oauth-refresh-ttl"}},
		{"serve positional argument", []string{"serve", "now", "--addr", "127.0.0.1:0", "--db", "{db}"}, 2, []string{"serve"}},

		{"user create unreachable postgres", []string{"user", "create", "Ann", "--db", unreachablePG}, 1, []string{"database"}},
		{"key create unreachable postgres", []string{"key", "create", "--user", "{user}", "--scopes", "*", "--db", unreachablePG}, 1, []string{"database"}},
		{"serve unreachable postgres", []string{"serve", "--addr", "127.0.0.1:0", "--db", unreachablePG}, 1, []string{"database"}},
		{"serve --demo unreachable postgres", []string{"serve", "--demo", "--addr", "127.0.0.1:0", "--db", unreachablePG}, 1, []string{"database"}},
		{"db under a regular file", []string{"user", "create", "Ann", "--db", "sqlite:{file}/wf.db"}, 1, []string{"database", "not a directory"}},
		{"serve db under a regular file", []string{"serve", "--addr", "127.0.0.1:0", "--db", "sqlite:{file}/sub/wf.db"}, 1, []string{"database", "not a directory"}},
		{"db is not a database", []string{"user", "create", "Ann", "--db", "sqlite:{garbage}"}, 1, []string{"database"}},
		{"db with an unsupported scheme", []string{"user", "create", "Ann", "--db", "mysql://root@127.0.0.1/x"}, 1, []string{"database", "dsn"}},

		{"serve bad sqlite-sync", []string{"serve", "--sqlite-sync", "always", "--db", "{db}"}, 2, []string{"--sqlite-sync"}},
		{"serve bench-noop", []string{"serve", "--bench-noop", "--addr", "127.0.0.1:0", "--db", "{db}"}, 2, []string{"-bench-noop"}},

		{"bench moved", []string{"bench", "-c", "0"}, 2, []string{"bench moved", "go run ./cmd/worldforge-bench compare"}},
		{"soak moved", []string{"soak", "-rate", "0"}, 2, []string{"soak moved", "go run ./cmd/worldforge-bench soak"}},
		{"soak large-world moved", []string{"soak", "-large-world", "64"}, 2, []string{"soak moved", "go run ./cmd/worldforge-bench soak"}},
		{"plot moved", []string{"plot", "-in", "x.txt"}, 2, []string{"plot moved", "go run ./cmd/worldforge-bench plot"}},
		{"bench-raw moved", []string{"bench-raw", "--addr", "127.0.0.1:0"}, 2, []string{"go run ./cmd/worldforge-bench raw"}},
		{"bench-baseline moved", []string{"bench-baseline", "--addr", "127.0.0.1:0"}, 2, []string{"go run ./cmd/worldforge-bench baseline"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dsn, path := newDSN(t)
			db := openStore(t, dsn)
			u := &wf.User{Name: "Fixture"}
			if err := db.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			key, _, err := authenticator(t, db).CreateKey(ctx, u.ID, []string{wf.ScopeAll})
			if err != nil {
				t.Fatal(err)
			}
			world := createWorld(t, db, u.ID)
			dir := t.TempDir()
			file := filepath.Join(dir, "plain-file")
			garbage := filepath.Join(dir, "garbage.db")
			if err := os.WriteFile(file, []byte("not a directory\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(garbage, bytes.Repeat([]byte("this is not a SQLite file. "), 200), 0o600); err != nil {
				t.Fatal(err)
			}
			repl := strings.NewReplacer("{db}", dsn, "{user}", u.ID, "{world}", world, "{key}", key, "{file}", file, "{garbage}", garbage)
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = repl.Replace(a)
			}

			before := takeSnapshot(t, path)
			r := runMain(t, nil, args...)
			checkOneLineError(t, r, tc.code, tc.want...)
			if strings.Contains(r.err.Error(), key) || strings.Contains(r.err.Error(), ghostKey) {
				t.Errorf("error %q shows a whole API key", r.err)
			}
			if after := takeSnapshot(t, path); !mapsEqual(before, after) {
				t.Errorf("the database changed: before %v, after %v", before, after)
			}
			if k, err := db.FindAPIKeyByHash(ctx, auth.HashKey(key)); err != nil || k.RevokedAt != nil {
				t.Errorf("the fixture key: %+v, %v; want it there, not revoked", k, err)
			}
			if _, err := os.Stat(filepath.Join(file, "wf.db")); err == nil {
				t.Errorf("a database appeared under the regular file %s", file)
			}
		})
	}
}

func mapsEqual(a, b snapshot) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestHelp checks the usage paths that are not mistakes in a value.
func TestHelp(t *testing.T) {
	t.Parallel()
	r := runMain(t, nil, "help")
	if r.err != nil || !strings.Contains(r.stdout, "usage: worldforge") || r.stderr != "" {
		t.Errorf("help: err %v, stdout %q, stderr %q; want the usage on stdout", r.err, r.stdout, r.stderr)
	}

	r = runMain(t, nil)
	if r.err == nil || exitCode(r.err) != 2 || !strings.Contains(r.stderr, "usage: worldforge") || r.stdout != "" {
		t.Errorf("no command: err %v (exit %d), stdout %q, stderr %q; want exit 2 and the usage on stderr", r.err, exitCode(r.err), r.stdout, r.stderr)
	}

	// -h on a command prints its flags and is the empty usage error that
	// main turns into exit 0.
	r = runMain(t, nil, "key", "create", "-h")
	var u usageError
	if !errors.As(r.err, &u) || u.Msg != "" || !strings.Contains(r.stderr, "-scopes") || r.stdout != "" {
		t.Errorf("key create -h: err %#v, stdout %q, stderr %q; want an empty usageError and the flags on stderr", r.err, r.stdout, r.stderr)
	}
}

// syncBuffer is a bytes.Buffer safe to write from the server's goroutine
// while the test reads it.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{} // closed at the next Write; nil until next asks
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written != nil {
		close(b.written)
		b.written = nil
	}
	return b.buf.Write(p)
}

// next returns a channel closed at the buffer's next write.
func (b *syncBuffer) next() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written == nil {
		b.written = make(chan struct{})
	}
	return b.written
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until cond, a condition on what the server writes to out,
// holds, looking again at each write; it fails the test after timeout or
// if the server stopped.
func waitFor(t testing.TB, what string, timeout time.Duration, done <-chan error, out *syncBuffer, cond func() bool) {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		written := out.next() // before looking: a write meanwhile is not missed
		if cond() {
			return
		}
		select {
		case <-written:
		case err := <-done:
			t.Fatalf("waiting for %s: the server stopped: %v", what, err)
		case <-timer.C:
			t.Fatalf("waiting for %s: gave up after %s", what, timeout)
		}
	}
}

// demoOutput is what `serve --demo` printed.
type demoOutput struct {
	endpoint, owner, gm, player, world, key, jwt, login string
	config                                              string
}

var (
	listeningRe = regexp.MustCompile(`(?m)^worldforge: listening on (http://127\.0\.0\.1:[0-9]+/mcp)$`)
	demoFieldRe = map[string]*regexp.Regexp{
		"endpoint": regexp.MustCompile(`(?m)^  MCP endpoint:  (\S+)$`),
		"owner":    regexp.MustCompile(`(?m)^  owner: +(\S+)$`),
		"gm":       regexp.MustCompile(`(?m)^  GM: +(\S+)$`),
		"player":   regexp.MustCompile(`(?m)^  player: +(\S+)$`),
		"world":    regexp.MustCompile(`(?m)^  world: +(\S+)$`),
		"key":      regexp.MustCompile(`(?m)^  API key \(owner, every scope\): (\S+)$`),
		"jwt":      regexp.MustCompile(`(?m)^  session JWT \(owner, [^)]+\): (\S+)$`),
		"login":    regexp.MustCompile(`(?m)^  web console sign-in link \(owner, works once, [^)]+\): (\S+)$`),
	}
)

func parseDemo(t testing.TB, out string) demoOutput {
	t.Helper()
	field := func(name string) string {
		m := demoFieldRe[name].FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("demo output has no %s line:\n%s", name, out)
		}
		return m[1]
	}
	d := demoOutput{
		endpoint: field("endpoint"), owner: field("owner"), gm: field("gm"), player: field("player"),
		world: field("world"), key: field("key"), jwt: field("jwt"), login: field("login"),
	}
	_, cfg, ok := strings.Cut(out, "\nMCP client config:\n")
	if !ok {
		t.Fatalf("demo output has no MCP client config:\n%s", out)
	}
	d.config = cfg
	for _, c := range []struct {
		name, v string
		re      *regexp.Regexp
	}{
		{"owner", d.owner, userIDRe}, {"gm", d.gm, userIDRe}, {"player", d.player, userIDRe},
		{"world", d.world, worldRe}, {"key", d.key, keyRe}, {"jwt", d.jwt, jwtRe},
	} {
		if !c.re.MatchString(c.v) {
			t.Errorf("demo %s = %q, want %s", c.name, c.v, c.re)
		}
	}
	return d
}

// server is a `worldforge serve` running in a goroutine.
type server struct {
	stdout, stderr *syncBuffer
	cancel         context.CancelFunc
	done           chan error
	url            string // the MCP endpoint from the "listening on" line
}

// startServe runs `serve --addr 127.0.0.1:0 --db dsn` plus extra and waits
// until it listens. It is stopped with the test if the test does not stop
// it first.
func startServe(t testing.TB, dsn string, extra ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{stdout: &syncBuffer{}, stderr: &syncBuffer{}, cancel: cancel, done: make(chan error, 1)}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", dsn}, extra...)
	go func() { s.done <- run(ctx, args, getenvFrom(nil), s.stdout, s.stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Errorf("serve did not stop within 30s of its context ending")
		}
	})
	waitFor(t, "the listening line", 10*time.Second, s.done, s.stderr, func() bool { return listeningRe.MatchString(s.stderr.String()) })
	s.url = listeningRe.FindStringSubmatch(s.stderr.String())[1]
	return s
}

// stop cancels the server's context and checks that it shuts down cleanly.
func (s *server) stop(t testing.TB) {
	t.Helper()
	s.cancel()
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("serve returned %v after its context ended, want nil (a graceful shutdown)\nstderr:\n%s", err, s.stderr.String())
		}
		s.done <- nil // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not return within 30s of its context ending\nstderr:\n%s", s.stderr.String())
	}
}

// connectMCP opens a go-sdk client session on the endpoint with a bearer
// token; protocol "" is the SDK's newest revision.
var connectMCP = testserver.Connect

// callText calls a tool and returns its one text block and isError.
var callText = testserver.CallText

var readTools = []string{
	wf.ToolReadWorld, wf.ToolReadCampaign, wf.ToolListCampaigns, wf.ToolReadQuest, wf.ToolListQuests,
	wf.ToolReadEncounter, wf.ToolListEncounters, wf.ToolListWikiPages, wf.ToolReadWikiPage,
	wf.ToolSearchWikiPages, wf.ToolWikiPageHistory, wf.ToolListFactions, wf.ToolGetWorldSummary,
	wf.ToolListAtlasPlaces, wf.ToolReadAtlasNode, wf.ToolSearchAtlasNodes, wf.ToolSearchPOIs, wf.ToolListLore,
}

// TestServeDemo runs `serve --demo`, uses the credentials it prints with
// the go-sdk client, shuts it down, and runs it again on the same database.
func TestServeDemo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, _ := newDSN(t)

	s := startServe(t, dsn, "--demo")
	// The demo block is printed before the server says it listens.
	d := parseDemo(t, s.stdout.String())
	if d.endpoint != s.url {
		t.Errorf("demo endpoint %q, listening line %q", d.endpoint, s.url)
	}
	if n := strings.Count(s.stderr.String(), "listening on"); n != 1 {
		t.Errorf("stderr has %d listening lines, want 1:\n%s", n, s.stderr.String())
	}

	// The client config pastes as is.
	var cfg struct {
		MCPServers map[string]struct {
			Type    string            `json:"type"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	// (Unmarshal also rejects anything printed after the object.)
	if err := json.Unmarshal([]byte(d.config), &cfg); err != nil {
		t.Fatalf("MCP client config is not valid JSON: %v\n%s", err, d.config)
	}
	wfCfg, ok := cfg.MCPServers["worldforge"]
	if !ok || len(cfg.MCPServers) != 1 {
		t.Fatalf("MCP client config servers = %v, want just worldforge", cfg.MCPServers)
	}
	if wfCfg.Type != "http" || wfCfg.URL != s.url || wfCfg.Headers["Authorization"] != "Bearer "+d.key || len(wfCfg.Headers) != 1 {
		t.Errorf("MCP client config = %+v; want type http, url %s, Authorization: Bearer %s", wfCfg, s.url, d.key)
	}

	// The demo rows are in the database.
	db := openStore(t, dsn)
	for user, want := range map[string]string{d.owner: wf.RoleOwner, d.gm: wf.RoleGM, d.player: wf.RolePlayer} {
		if got, err := db.WorldRole(ctx, d.world, user); err != nil || got != want {
			t.Errorf("WorldRole(demo %s) = %q, %v; want %q", want, got, err, want)
		}
	}

	// The API key, on the SDK's newest protocol revision.
	cs := connectMCP(t, s.url, d.key, "")
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	tools, err := cs.ListTools(lctx, nil)
	cancel()
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if len(names) < len(readTools) {
		t.Errorf("%d tools listed, want at least %d: %v", len(names), len(readTools), names)
	}
	for _, want := range readTools {
		if !slices.Contains(names, want) {
			t.Errorf("tool %s is not listed (got %v)", want, names)
		}
	}
	text, isErr := callText(t, cs, wf.ToolReadWorld, wf.IDArgs{ID: d.world})
	if isErr || !strings.Contains(text, d.world) {
		t.Fatalf("read_world(%s) = %q (isError %v); want the world", d.world, text, isErr)
	}
	var world struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(text), &world); err != nil || world.ID != d.world || world.Name != "Demo World" {
		t.Errorf("read_world JSON = %+v (err %v), want id %s, name Demo World", world, err, d.world)
	}

	// The session JWT, on an initialize-based revision (which also opens
	// the quiet GET stream the shutdown below must end).
	cs2 := connectMCP(t, s.url, d.jwt, "2025-11-25")
	text, isErr = callText(t, cs2, wf.ToolGetWorldSummary, wf.WorldArgs{WorldID: d.world})
	var sum wf.WorldSummary
	if isErr || json.Unmarshal([]byte(text), &sum) != nil || sum.WorldID != d.world || sum.Name != "Demo World" || sum.WikiTotal == 0 {
		t.Fatalf("get_world_summary(%s) with the JWT = %q (isError %v); want the demo world's summary", d.world, text, isErr)
	}

	// The sign-in link opens the web console as the owner, once.
	if !loginLinkRe.MatchString(d.login) || !strings.HasPrefix(d.login, strings.TrimSuffix(s.url, "/mcp")+"/login/") {
		t.Errorf("sign-in link %q", d.login)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	resp, err := browser.Get(d.login)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("sign-in link page: %d\n%s", resp.StatusCode, page)
	}
	resp, err = browser.PostForm(d.login, url.Values{"csrf": {string(m[1])}})
	if err != nil {
		t.Fatal(err)
	}
	home, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(home), "Demo World") || !strings.Contains(string(home), "Demo Owner") {
		t.Errorf("console home after the sign-in link: %d\n%s", resp.StatusCode, home)
	}

	// A wrong key is refused.
	client := mcp.NewClient(&mcp.Implementation{Name: "worldforge-cli-test", Version: "0"}, nil)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	bad, err := client.Connect(cctx, &mcp.StreamableClientTransport{
		Endpoint: s.url, HTTPClient: &http.Client{Transport: &testserver.BearerTransport{Token: "wk_live_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}, MaxRetries: -1,
	}, nil)
	if err == nil {
		_, err = bad.ListTools(cctx, nil)
		bad.Close()
	}
	cancel()
	if err == nil {
		t.Error("a client with an unknown key listed the tools")
	}

	// Shut down with the client sessions still open.
	s.stop(t)

	// Again on the same database: the same demo rows, a new key.
	s2 := startServe(t, dsn, "--demo")
	d2 := parseDemo(t, s2.stdout.String())
	if d2.world != d.world || d2.owner != d.owner || d2.gm != d.gm || d2.player != d.player {
		t.Errorf("second serve --demo: world %s owner %s gm %s player %s; want the first run's %s %s %s %s",
			d2.world, d2.owner, d2.gm, d2.player, d.world, d.owner, d.gm, d.player)
	}
	if d2.key == d.key {
		t.Error("second serve --demo printed the same API key")
	}
	if d2.endpoint != s2.url {
		t.Errorf("second demo endpoint %q, listening line %q", d2.endpoint, s2.url)
	}
	// Both keys work on the second server.
	for _, key := range []string{d.key, d2.key} {
		cs := connectMCP(t, s2.url, key, "")
		if text, isErr := callText(t, cs, wf.ToolReadWorld, wf.IDArgs{ID: d.world}); isErr || !strings.Contains(text, d.world) {
			t.Errorf("read_world on the second server = %q (isError %v)", text, isErr)
		}
	}
	s2.stop(t)
}

// TestServeWithoutDemo checks that plain serve prints nothing on stdout and
// that a key made by the CLI works on it at once.
func TestServeWithoutDemo(t *testing.T) {
	t.Parallel()
	dsn, _ := newDSN(t)
	owner := mustValue(t, nil, userIDRe, "user", "create", "Owner", "--db", dsn)
	key := mustValue(t, nil, keyRe, "key", "create", "--user", owner, "--scopes", "world:read", "--db", dsn)
	world := createWorld(t, openStore(t, dsn), owner)

	s := startServe(t, dsn, "--log-level", "warn")
	cs := connectMCP(t, s.url, key, "")
	if text, isErr := callText(t, cs, wf.ToolReadWorld, wf.IDArgs{ID: world}); isErr || !strings.Contains(text, world) {
		t.Errorf("read_world = %q (isError %v), want the world", text, isErr)
	}
	// The key holds world:read only.
	if text, isErr := callText(t, cs, wf.ToolListCampaigns, struct{}{}); !isErr || !strings.Contains(text, "missing_scopes") {
		t.Errorf("list_campaigns with a world:read key = %q (isError %v), want missing_scopes", text, isErr)
	}
	cs.Close()
	s.stop(t)
	if out := s.stdout.String(); out != "" {
		t.Errorf("serve without --demo wrote to stdout: %q", out)
	}
}

// TestWorldCreateRender generates a world from the command line, checks it
// is the one the tool makes (same seed, same document), and draws it.
func TestWorldCreateRender(t *testing.T) {
	t.Parallel()
	dsn, _ := newDSN(t)
	user := mustValue(t, nil, regexp.MustCompile(`^user_[a-z2-7]{20}$`), "user", "create", "Cartographer", "--db", dsn)
	idRE := regexp.MustCompile(`^world_[a-z2-7]{20}$`)
	a := mustValue(t, nil, idRE, "world", "create", "--user", user, "--name", "Isles", "--template", "starter-archipelago", "--seed", "11", "--size", "small", "--db", dsn)
	b := mustValue(t, nil, idRE, "world", "create", "--user", user, "--name", "Isles again", "--template", "starter-archipelago", "--seed", "11", "--size", "small", "--db", dsn)
	r := runMain(t, nil, "world", "create", "--user", user, "--name", "Random", "--db", dsn)
	if r.err != nil || !idRE.MatchString(strings.TrimSpace(r.stdout)) || !strings.HasPrefix(r.stderr, "world create: seed ") {
		t.Fatalf("random seed: %v %q %q", r.err, r.stdout, r.stderr)
	}
	// A word seed: the integer it maps to goes to stderr, and passing that
	// integer back gives the same world.
	r = runMain(t, nil, "world", "create", "--user", user, "--name", "Dragon", "--seed", "dragon", "--size", "small", "--db", dsn)
	wantSeed := fmt.Sprintf("world create: seed %d\n", wf.SeedOfWord("dragon"))
	if r.err != nil || !idRE.MatchString(strings.TrimSpace(r.stdout)) || r.stderr != wantSeed {
		t.Fatalf("word seed: %v %q %q, want stderr %q", r.err, r.stdout, r.stderr, wantSeed)
	}
	dragon := strings.TrimSpace(r.stdout)
	again := mustValue(t, nil, idRE, "world", "create", "--user", user, "--name", "Dragon again", "--seed", strconv.FormatInt(wf.SeedOfWord("dragon"), 10), "--size", "small", "--db", dsn)
	db := openStore(t, dsn)
	w1, err1 := dbtest.World(context.Background(), db, dragon)
	w2, err2 := dbtest.World(context.Background(), db, again)
	if err1 != nil || err2 != nil || string(w1.JSON) != string(w2.JSON) || w1.Seed != wf.SeedOfWord("dragon") {
		t.Errorf("the word seed's world and its integer's differ: %v %v", err1, err2)
	}
	wa, err := dbtest.World(context.Background(), db, a)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := dbtest.World(context.Background(), db, b)
	if err != nil {
		t.Fatal(err)
	}
	if string(wa.JSON) != string(wb.JSON) || wa.Cols != 32 || wa.Rows != 24 || wa.Seed != 11 || wa.Template != "starter-archipelago" {
		t.Errorf("the two worlds differ or are not what was asked: %d×%d seed %d %s", wa.Cols, wa.Rows, wa.Seed, wa.Template)
	}
	out := filepath.Join(t.TempDir(), "map.png")
	mustQuiet(t, nil, "world", "render", a, "-o", out, "--cell-px", "8", "--db", dsn)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode the map: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 32*8 || b.Dy() < 24*6 {
		t.Errorf("map is %v for 32×24 cells of 8 px", b)
	}
	stdout := MustRunMain(t, nil, "world", "render", a, "-o", "-", "--db", dsn)
	if _, err := png.Decode(strings.NewReader(stdout)); err != nil {
		t.Errorf("-o - is not a PNG: %v", err)
	}
}
