package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
)

// TestTwoReplicas runs two `worldforge serve` processes on one database
// (PostgreSQL, and SQLite for good measure: WAL lets two processes share
// the file). Every proposal is committed through both at once by several
// clients each: exactly one commit wins, the rest get 409, each new quest
// exists once with one audit row. Then a key revoked on the database (the
// CLI, a third process) is refused by both replicas one second later.
func TestTwoReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes; skipped with -short")
	}
	dbtest.ForEachDSN(t, func(t *testing.T, dsn string) {
		const (
			n        = 40 // proposals
			perSide  = 2  // committers per replica per proposal
			contends = 2 * perSide
		)
		ctx := context.Background()
		owner := mustValue(t, nil, userIDRe, "user", "create", "Replica Owner", "--db", dsn)
		token := mustValue(t, nil, jwtRe, "token", "--user", owner, "--db", dsn)
		key := mustValue(t, nil, keyRe, "key", "create", "--user", owner, "--scopes", "*", "--db", dsn)
		a := startCrashChild(t, dsn)
		b := startCrashChild(t, dsn)

		// File the proposals, half through each replica.
		sessions := []*mcp.ClientSession{connectMCP(t, a.url, token, ""), connectMCP(t, b.url, token, "")}
		ids := make([]string, n)
		for i := range ids {
			id, err := proposeQuest(ctx, sessions[i%2], i)
			if err != nil {
				t.Fatalf("propose %d: %v", i, err)
			}
			ids[i] = id
		}

		client := &http.Client{Timeout: 30 * time.Second}
		type result struct {
			status int
			quest  string
		}
		results := make([][]result, n)
		var wg sync.WaitGroup
		for i, id := range ids {
			results[i] = make([]result, contends)
			for c := range contends {
				base := a.base
				if c%2 == 1 {
					base = b.base
				}
				wg.Go(func() {
					o := postCommit(ctx, client, base, token, id)
					if o.err != nil {
						t.Errorf("commit %s: %v", id, o.err)
						return
					}
					r := result{status: o.status}
					if o.status == http.StatusOK {
						ack, err := parseCommit(id, o)
						if err != nil {
							t.Error(err)
						}
						r.quest = ack.questID
					}
					results[i][c] = r
				})
			}
		}
		wg.Wait()

		db := openStore(t, dsn)
		wins := map[string]int{} // which replica won, for the log
		for i, id := range ids {
			var won []result
			for c, r := range results[i] {
				switch r.status {
				case http.StatusOK:
					won = append(won, r)
					wins[[]string{"a", "b"}[c%2]]++
				case http.StatusConflict:
				default:
					t.Errorf("commit %s: status %d", id, r.status)
				}
			}
			if len(won) != 1 {
				t.Errorf("proposal %s: %d commits won, want exactly 1", id, len(won))
				continue
			}
			if _, err := db.FindQuestByID(ctx, won[0].quest); err != nil {
				t.Errorf("quest %s of proposal %s: %v", won[0].quest, id, err)
			}
			if p, err := db.FindProposal(ctx, id); err != nil || p.Status != wf.ProposalCommitted {
				t.Errorf("proposal %s: %+v, %v", id, p, err)
			}
		}
		quests, err := db.CountAudit(ctx, wf.AuditFilter{ActorID: owner})
		if err != nil {
			t.Fatal(err)
		}
		// One row per filing and one per winning commit.
		if quests != 2*n {
			t.Errorf("%d audit rows for the owner, want %d (one per filing, one per commit)", quests, 2*n)
		}
		t.Logf("%d proposals, %d commit attempts each over two replicas: wins a=%d b=%d", n, contends, wins["a"], wins["b"])

		// Revocation reaches both replicas within a second.
		me := func(base string) int {
			req, _ := http.NewRequest(http.MethodGet, base+"/me", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		for _, c := range []*crashChild{a, b} {
			if got := me(c.base); got != http.StatusOK {
				t.Fatalf("GET /me with the key before revocation: %d", got)
			}
		}
		mustQuiet(t, nil, "key", "revoke", key, "--db", dsn)
		revoked := time.Now()
		var seen [2]time.Duration
		for time.Since(revoked) < time.Second {
			for i, c := range []*crashChild{a, b} {
				if seen[i] == 0 && me(c.base) == http.StatusUnauthorized {
					seen[i] = time.Since(revoked)
				}
			}
			time.Sleep(20 * time.Millisecond) // the promise is a real second across two child processes; this only samples when each sees it
		}
		for i, c := range []*crashChild{a, b} {
			if got := me(c.base); got != http.StatusUnauthorized {
				t.Errorf("replica %d: GET /me with the key 1 s after revocation: %d, want 401", i, got)
			}
		}
		t.Logf("revocation seen after %v (a) and %v (b)", seen[0].Round(time.Millisecond), seen[1].Round(time.Millisecond))

		// A web console session, signed in on replica a with a login link
		// from the CLI, works on both; `sessions revoke` ends it on both
		// within a second.
		link := mustValue(t, nil, loginLinkRe, "login-link", "--user", owner, "--url", a.base, "--db", dsn)
		jar, _ := cookiejar.New(nil) // cookies do not tell ports apart: one jar serves both replicas
		browser := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		home := func(base string) int {
			resp, err := browser.Get(base + "/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		resp, err := browser.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
		if m == nil {
			t.Fatalf("login link page: %d\n%s", resp.StatusCode, page)
		}
		resp, err = browser.PostForm(link, url.Values{"csrf": {string(m[1])}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("login: %d", resp.StatusCode)
		}
		for _, c := range []*crashChild{a, b} {
			if got := home(c.base); got != http.StatusOK {
				t.Fatalf("console home on %s before revocation: %d", c.base, got)
			}
		}
		if got := mustValue(t, nil, regexp.MustCompile(`^[0-9]+$`), "sessions", "revoke", "--user", owner, "--db", dsn); got != "1" {
			t.Errorf("sessions revoke printed %s, want 1", got)
		}
		time.Sleep(time.Second) // the promise is a real second across two child processes
		for i, c := range []*crashChild{a, b} {
			if got := home(c.base); got != http.StatusSeeOther {
				t.Errorf("replica %d: console home 1 s after sessions revoke: %d, want 303 to sign in", i, got)
			}
		}
		a.checkLog(t, "a")
		b.checkLog(t, "b")
	})
}
