package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/worldforge-go/worldforge/internal/cli"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
)

// user create NAME
func (e *env) user(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "create" {
		return cli.UsageErrorf("user: want 'user create NAME'")
	}
	fs := cli.NewFlags("user create")
	dbf := e.DBFlag(fs)
	if err := e.Parse(fs, args[1:]); err != nil {
		return err
	}
	pos, err := cli.Positional(fs, 1, "NAME")
	if err != nil {
		return err
	}
	name := strings.TrimSpace(pos[0])
	if name == "" || utf8.RuneCountInString(name) > 120 {
		return cli.UsageErrorf("user create: NAME must be 1–120 characters")
	}
	db, err := e.OpenDB(ctx, *dbf)
	if err != nil {
		return err
	}
	defer db.Close()
	u := &worldforge.User{Name: name}
	if err := db.CreateUser(ctx, u); err != nil {
		return fmt.Errorf("user create: %w", err)
	}
	fmt.Fprintln(e.Stdout, u.ID)
	return nil
}

// key create --user ID --scopes a,b [--name N] | key list --user ID | key revoke KEY
func (e *env) key(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return cli.UsageErrorf("key: want 'key create', 'key list' or 'key revoke'")
	}
	switch args[0] {
	case "list":
		return e.keyList(ctx, args[1:])
	case "create":
		fs := cli.NewFlags("key create")
		dbf := e.DBFlag(fs)
		user := fs.String("user", "", "the id of the user who owns the key (required)")
		scopes := fs.String("scopes", "", "comma-separated scopes, e.g. world:read,wiki:read or * (required)")
		name := fs.String("name", "", fmt.Sprintf("what to call the key, shown in key list and the console (at most %d characters)", auth.MaxKeyName))
		quotaKeys := fs.Int64("quota-keys", worldforge.DefaultQuotaKeys, "refuse a key for a user who has this many unrevoked keys, as serve's --quota-keys does (0 = unlimited)")
		if err := e.Parse(fs, args[1:]); err != nil {
			return err
		}
		if *quotaKeys < 0 {
			return cli.UsageErrorf("key create: --quota-keys %d: want 0 (unlimited) or more", *quotaKeys)
		}
		if _, err := cli.Positional(fs, 0, "no arguments"); err != nil {
			return err
		}
		if *user == "" {
			return cli.UsageErrorf("key create: --user is required")
		}
		list, err := worldforge.ParseScopes(*scopes)
		if err != nil {
			return cli.UsageErrorf("key create: --scopes: %v", err)
		}
		// The only path that makes API keys: the keys quota holds here
		// (the admin may lift it with --quota-keys 0).
		a, closeDB, err := e.authenticatorWith(ctx, *dbf, worldforge.Quotas{Keys: *quotaKeys})
		if err != nil {
			return err
		}
		defer closeDB()
		secret, _, err := a.MintKey(ctx, *user, *name, list)
		if err != nil {
			if worldforge.ErrorCode(err) == worldforge.EBadRequest {
				return cli.UsageErrorf("key create: --name: %v", err)
			}
			if errors.Is(err, worldforge.ErrNotFound) {
				// The only row the key refers to is its user.
				return notFound(fmt.Sprintf("key create: user %q not found", *user), err)
			}
			if errors.Is(err, worldforge.QuotaExceeded(worldforge.QuotaKeys)) {
				return fmt.Errorf("key create: user %q has %d unrevoked API keys, the --quota-keys limit (revoke one, or pass a larger --quota-keys or 0): %w", *user, *quotaKeys, err)
			}
			return fmt.Errorf("key create: %w", err)
		}
		fmt.Fprintln(e.Stdout, secret)
		return nil
	case "revoke":
		fs := cli.NewFlags("key revoke")
		dbf := e.DBFlag(fs)
		if err := e.Parse(fs, args[1:]); err != nil {
			return err
		}
		pos, err := cli.Positional(fs, 1, "KEY")
		if err != nil {
			return err
		}
		if !auth.WellFormedKey(pos[0]) {
			return cli.UsageErrorf("key revoke: %q is not an API key (want %s…)", redact(pos[0]), auth.KeyPrefix)
		}
		a, closeDB, err := e.authenticator(ctx, *dbf)
		if err != nil {
			return err
		}
		defer closeDB()
		if err := a.RevokeKey(ctx, pos[0]); err != nil {
			if errors.Is(err, worldforge.ErrNotFound) {
				return notFound(fmt.Sprintf("key revoke: no API key %s in this database", redact(pos[0])), err)
			}
			return fmt.Errorf("key revoke: %w", err)
		}
		return nil
	default:
		return cli.UsageErrorf("key: unknown subcommand %q (want create, list or revoke)", args[0])
	}
}

// key list --user ID: one line per key of the user, newest first, its
// fields separated by tabs: id, name, prefix, scopes, created, last used,
// revoked ("-" for an empty name and for a time that is not set; times in
// RFC 3339, UTC).
func (e *env) keyList(ctx context.Context, args []string) error {
	fs := cli.NewFlags("key list")
	dbf := e.DBFlag(fs)
	user := fs.String("user", "", "the id of the user whose keys to list (required)")
	if err := e.Parse(fs, args); err != nil {
		return err
	}
	if _, err := cli.Positional(fs, 0, "no arguments"); err != nil {
		return err
	}
	if *user == "" {
		return cli.UsageErrorf("key list: --user is required")
	}
	db, err := e.OpenDB(ctx, *dbf)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.FindUserByID(ctx, *user); err != nil {
		if errors.Is(err, worldforge.ErrNotFound) {
			return notFound(fmt.Sprintf("key list: user %q not found", *user), err)
		}
		return fmt.Errorf("key list: %w", err)
	}
	keys, err := db.ListAPIKeys(ctx, *user)
	if err != nil {
		return fmt.Errorf("key list: %w", err)
	}
	for _, k := range keys {
		fmt.Fprintln(e.Stdout, strings.Join([]string{
			k.ID, orDash(noControl(k.Name)), k.Prefix, strings.Join(k.Scopes, ","),
			k.CreatedAt.UTC().Format(time.RFC3339), timeOrDash(k.LastUsedAt), timeOrDash(k.RevokedAt),
		}, "\t"))
	}
	return nil
}

// noControl replaces control characters (tabs, line breaks) with spaces, so
// that a value stays within its column and its line.
func noControl(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// token --user ID [--ttl 1h]
func (e *env) token(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "rotate-key" {
		return e.rotateKey(ctx, args[1:])
	}
	fs := cli.NewFlags("token")
	dbf := e.DBFlag(fs)
	user := fs.String("user", "", "the id of the user (required)")
	ttl := fs.Duration("ttl", time.Hour, "how long the token is valid")
	if err := e.Parse(fs, args); err != nil {
		return err
	}
	if _, err := cli.Positional(fs, 0, "no arguments"); err != nil {
		return err
	}
	if *user == "" {
		return cli.UsageErrorf("token: --user is required")
	}
	// A JWT's expiry has whole-second precision: a shorter ttl would mint a
	// token that is already expired.
	if *ttl < time.Second || *ttl > 366*24*time.Hour {
		return cli.UsageErrorf("token: --ttl must be between 1s and 366 days")
	}
	a, closeDB, err := e.authenticator(ctx, *dbf)
	if err != nil {
		return err
	}
	defer closeDB()
	tok, err := a.IssueToken(ctx, *user, *ttl)
	if err != nil {
		if errors.Is(err, worldforge.ErrNotFound) {
			return notFound(fmt.Sprintf("token: user %q not found", *user), err)
		}
		return fmt.Errorf("token: %w", err)
	}
	fmt.Fprintln(e.Stdout, tok)
	return nil
}

// token rotate-key: replace the JWT signing key; prints the new key's id.
func (e *env) rotateKey(ctx context.Context, args []string) error {
	fs := cli.NewFlags("token rotate-key")
	dbf := e.DBFlag(fs)
	if err := e.Parse(fs, args); err != nil {
		return err
	}
	if _, err := cli.Positional(fs, 0, "no arguments"); err != nil {
		return err
	}
	a, closeDB, err := e.authenticator(ctx, *dbf)
	if err != nil {
		return err
	}
	defer closeDB()
	id, err := a.RotateKey(ctx)
	if err != nil {
		return fmt.Errorf("token rotate-key: %w", err)
	}
	fmt.Fprintln(e.Stdout, id)
	return nil
}

// world add-gm WORLD USER | world add-member WORLD USER
func (e *env) world(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return cli.UsageErrorf("world: want 'world create', 'world render', 'world add-gm' or 'world add-member'")
	}
	var role string
	switch args[0] {
	case "create":
		return e.worldCreate(ctx, args[1:])
	case "render":
		return e.worldRender(ctx, args[1:])
	case "add-gm":
		role = worldforge.RoleGM
	case "add-member":
		role = worldforge.RolePlayer
	default:
		return cli.UsageErrorf("world: unknown subcommand %q (want create, render, add-gm or add-member)", args[0])
	}
	fs := cli.NewFlags("world " + args[0])
	dbf := e.DBFlag(fs)
	if err := e.Parse(fs, args[1:]); err != nil {
		return err
	}
	pos, err := cli.Positional(fs, 2, "WORLD_ID USER_ID")
	if err != nil {
		return err
	}
	db, err := e.OpenDB(ctx, *dbf)
	if err != nil {
		return err
	}
	defer db.Close()
	// The store reports a missing world and a missing user alike (a foreign
	// key): look them up first so that the error says which one it is.
	if _, err := db.WorldRole(ctx, pos[0], pos[1]); err != nil {
		if errors.Is(err, worldforge.ErrNotFound) {
			return notFound(fmt.Sprintf("world %s: world %q not found", args[0], pos[0]), err)
		}
		return fmt.Errorf("world %s: %w", args[0], err)
	}
	if _, err := db.FindUserByID(ctx, pos[1]); err != nil {
		if errors.Is(err, worldforge.ErrNotFound) {
			return notFound(fmt.Sprintf("world %s: user %q not found", args[0], pos[1]), err)
		}
		return fmt.Errorf("world %s: %w", args[0], err)
	}
	if err := db.AddWorldMember(ctx, pos[0], pos[1], role); err != nil {
		return fmt.Errorf("world %s: %w", args[0], err)
	}
	return nil
}

// authenticator opens the store and an Authenticator on it.
func (e *env) authenticator(ctx context.Context, dbFlag string) (*auth.Authenticator, func(), error) {
	return e.authenticatorWith(ctx, dbFlag, worldforge.Quotas{})
}

// authenticatorWith is authenticator on a store that enforces quotas.
func (e *env) authenticatorWith(ctx context.Context, dbFlag string, quotas worldforge.Quotas) (*auth.Authenticator, func(), error) {
	db, err := e.OpenDB(ctx, dbFlag)
	if err != nil {
		return nil, nil, err
	}
	db.SetQuotas(quotas)
	a, err := auth.New(ctx, db, nil)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return a, func() { db.Close() }, nil
}

// notFoundError is a missing row, told in words, that still matches
// errors.Is(err, worldforge.ErrNotFound).
type notFoundError struct {
	msg string
	err error
}

func (e notFoundError) Error() string { return e.msg }
func (e notFoundError) Unwrap() error { return e.err }

func notFound(msg string, err error) error { return notFoundError{msg: msg, err: err} }

// redact shortens a would-be secret for an error message.
func redact(s string) string {
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}
