package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/httpapi"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// openStream is an open GET /mcp stream; done is closed when the server
// has ended it (the body reached EOF or failed).
type openStream struct {
	body io.ReadCloser
	done chan struct{}
}

// streamRequest opens GET /mcp with token; it returns the response of a
// refusal as a reply, or the open stream.
func streamRequest(t *testing.T, base, token string) (*openStream, reply) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /mcp: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, reply{resp.StatusCode, resp.Header, string(b)}
	}
	s := &openStream{body: resp.Body, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		_, _ = io.Copy(io.Discard, resp.Body)
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return s, reply{status: resp.StatusCode, header: resp.Header}
}

// streamEnded matches the request line of a GET /mcp stream that was open
// (200) and ended: refused streams log 429.
var streamEnded = map[string]any{"method": "GET", "path": "/mcp", "status": float64(http.StatusOK)}

// mustStream opens a stream and fails the test unless it is open.
func mustStream(t *testing.T, base, token string) *openStream {
	t.Helper()
	s, r := streamRequest(t, base, token)
	if s == nil {
		t.Fatalf("GET /mcp stream: %d %s, want 200", r.status, r.body)
	}
	return s
}

// TestStreamCaps: a credential may hold MaxStreamsPerCredential streams
// (a session JWT's credential is its user, whatever the token), the server
// MaxStreams in all; one more is 429 rate_limited with Retry-After at once
// and writes nothing; a closed stream frees its slot.
func TestStreamCaps(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, dbtest.Open(t))
	logs := &logBuffer{}
	api := httpapi.New(httpapi.Options{Auth: ts.Auth, MCP: ts.Tools.MCP(), Tools: ts.Tools, Store: ts.DB,
		Limits: httpapi.Limits{MaxStreamsPerCredential: 2, MaxStreams: 4}, Logger: jsonLogger(logs)})
	base := testserver.Listen(t, api)
	keyA, keyB := ts.Key(t, ts.Owner, wf.ScopeAll), ts.Key(t, ts.Owner, wf.ScopeAll)
	before := ts.AuditCount(t)

	a1 := mustStream(t, base, keyA)
	mustStream(t, base, keyA)
	_, r := streamRequest(t, base, keyA)
	wantRateLimited(t, "a key's 3rd stream", r, "too many open streams for this credential")
	if r.header.Get("Retry-After") != "5" {
		t.Errorf("Retry-After %q, want 5", r.header.Get("Retry-After"))
	}
	// Two JWTs of one user are one credential.
	mustStream(t, base, ts.Token(t, ts.GM))
	mustStream(t, base, ts.Token(t, ts.GM))
	_, r = streamRequest(t, base, ts.Token(t, ts.GM))
	wantRateLimited(t, "a user's 3rd stream through a third JWT", r, "for this credential")
	if n := api.OpenStreams(); n != 4 {
		t.Errorf("OpenStreams = %d, want 4", n)
	}
	// The server is full: another credential within its own cap is refused.
	_, r = streamRequest(t, base, keyB)
	wantRateLimited(t, "a stream beyond the server's cap", r, "too many open streams on this server")
	// Requests other than streams are not capped by them.
	if r := request(t, "GET", base+"/me", keyA, "", "", "", nil); r.status != 200 {
		t.Errorf("GET /me beside the streams: %d %s", r.status, r.body)
	}
	if got := ts.AuditCount(t); got != before {
		t.Errorf("streams and refusals wrote %d audit rows", got-before)
	}
	// Closing a stream frees its slot once the server has seen it go: its
	// request line (the only stream answered 200 to end) is logged after
	// the handler released the slot.
	a1.body.Close()
	if len(logs.await(t, "request", streamEnded)) == 0 {
		t.Fatal("no request line for the closed stream within 10s")
	}
	if n := api.OpenStreams(); n != 3 {
		t.Fatalf("OpenStreams = %d once the closed stream ended, want 3", n)
	}
	mustStream(t, base, keyB)

	// Without caps (the zero Limits) nothing is refused.
	for range 10 {
		mustStream(t, ts.URL, keyB)
	}
}

// TestStreamRevocation: an open stream re-verifies its credential. A key
// revoked through another replica (another authenticator on the same
// database, so this server's cache is not told) ends its stream within the
// revocation promise, 1 s; a session JWT's stream ends within 1 s of its
// expiry; a stream of another key of the same user stays open. Both stores.
func TestStreamRevocation(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		t.Parallel()
		ts := testserver.Start(t, db)
		revoked, kept := ts.Key(t, ts.Owner, wf.ScopeAll), ts.Key(t, ts.Owner, wf.ScopeAll)
		short, err := ts.Auth.IssueToken(context.Background(), ts.GM.ID, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var c jwt.RegisteredClaims
		if _, _, err := jwt.NewParser().ParseUnverified(short, &c); err != nil || c.ExpiresAt == nil {
			t.Fatalf("parse the token's expiry: %v", err)
		}
		sRevoked, sKept, sShort := mustStream(t, ts.URL, revoked), mustStream(t, ts.URL, kept), mustStream(t, ts.URL, short)

		other, err := auth.New(context.Background(), ts.DB, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := other.RevokeKey(context.Background(), revoked); err != nil {
			t.Fatal(err)
		}
		revokedAt := time.Now()
		select {
		case <-sRevoked.done:
			t.Logf("the revoked key's stream ended %v after the revocation", time.Since(revokedAt).Round(time.Millisecond))
		case <-time.After(time.Second):
			t.Fatal("the revoked key's stream is still open 1 s after the revocation")
		}
		if _, r := streamRequest(t, ts.URL, revoked); r.status != http.StatusUnauthorized {
			t.Errorf("a new stream with the revoked key: %d %s, want 401", r.status, r.body)
		}

		select {
		case <-sShort.done:
			if now := time.Now(); now.Before(c.ExpiresAt.Time) {
				t.Fatalf("the JWT's stream ended %v before the token expired", c.ExpiresAt.Sub(now))
			}
			t.Logf("the JWT's stream ended %v after its expiry", time.Since(c.ExpiresAt.Time).Round(time.Millisecond))
		case <-time.After(time.Until(c.ExpiresAt.Time) + time.Second):
			t.Fatal("the JWT's stream is still open 1 s after the token expired")
		}
		select {
		case <-sKept.done:
			t.Error("the stream of a key that was not revoked ended")
		default:
		}
	})
}
