package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/internal/cli"
)

// defaultConsoleURL is where `serve` listens by default.
const defaultConsoleURL = "http://127.0.0.1:8080"

// login-link --user ID [--ttl 15m] [--url URL]: prints a one-time console
// sign-in URL.
func (e *env) loginLink(ctx context.Context, args []string) error {
	fs := cli.NewFlags("login-link")
	dbf := e.DBFlag(fs)
	user := fs.String("user", "", "the id of the user to sign in (required)")
	ttl := fs.Duration("ttl", auth.DefaultLinkTTL, "how long the link stays valid (at most 168h); it works once")
	base := fs.String("url", "", "the server's URL as people reach it (default: $WORLDFORGE_URL, else "+defaultConsoleURL+")")
	if err := e.Parse(fs, args); err != nil {
		return err
	}
	if _, err := cli.Positional(fs, 0, "no arguments"); err != nil {
		return err
	}
	if *user == "" {
		return cli.UsageErrorf("login-link: --user is required")
	}
	if *ttl < time.Second || *ttl > auth.MaxLinkTTL {
		return cli.UsageErrorf("login-link: --ttl must be between 1s and %s", auth.MaxLinkTTL)
	}
	u := *base
	if u == "" {
		u = e.Getenv("WORLDFORGE_URL")
	}
	if u == "" {
		u = defaultConsoleURL
	}
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.RawQuery != "" || p.Fragment != "" {
		return cli.UsageErrorf("login-link: --url %q is not an http(s) URL", u)
	}
	a, closeDB, err := e.authenticator(ctx, *dbf)
	if err != nil {
		return err
	}
	defer closeDB()
	link, _, err := a.CreateLoginLink(ctx, *user, *ttl)
	if err != nil {
		if errors.Is(err, worldforge.ErrNotFound) {
			return notFound(fmt.Sprintf("login-link: user %q not found", *user), err)
		}
		return fmt.Errorf("login-link: %w", err)
	}
	fmt.Fprintf(e.Stdout, "%s/login/%s\n", strings.TrimSuffix(u, "/"), link)
	return nil
}

// sessions revoke --user ID: ends every console session of the user;
// prints how many.
func (e *env) sessions(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "revoke" {
		return cli.UsageErrorf("sessions: want 'sessions revoke --user USER_ID'")
	}
	fs := cli.NewFlags("sessions revoke")
	dbf := e.DBFlag(fs)
	user := fs.String("user", "", "the id of the user whose sessions end (required)")
	if err := e.Parse(fs, args[1:]); err != nil {
		return err
	}
	if _, err := cli.Positional(fs, 0, "no arguments"); err != nil {
		return err
	}
	if *user == "" {
		return cli.UsageErrorf("sessions revoke: --user is required")
	}
	a, closeDB, err := e.authenticator(ctx, *dbf)
	if err != nil {
		return err
	}
	defer closeDB()
	n, err := a.RevokeSessions(ctx, *user)
	if err != nil {
		return fmt.Errorf("sessions revoke: %w", err)
	}
	fmt.Fprintln(e.Stdout, n)
	return nil
}
