package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
)

// faultOutcome is one request's answer during the database-fault test.
type faultOutcome struct {
	status     int       // HTTP status; 0: no answer (transport error)
	isError    bool      // a tool error
	text       string    // the tool result's text, or the body
	proposal   string    // the proposal id of an acknowledged propose_quest
	sent, at   time.Time // when the request was sent and the answer read
	retryAfter string
	answered   bool // the whole response was read
	err        error
}

// mcpCall sends one self-contained tools/call at protocol 2025-11-25 (the
// fast path) and reads its answer.
func mcpCall(ctx context.Context, client *http.Client, url, token, tool string, args map[string]any) faultOutcome {
	return mcpCallAs(ctx, client, url, token, "2025-11-25", tool, args)
}

// mcpCallAs is mcpCall at the given protocol revision (2025-03-26 is
// answered by the go-sdk handler, later ones by the fast path).
func mcpCallAs(ctx context.Context, client *http.Client, url, token, protocol, tool string, args map[string]any) faultOutcome {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(string(body)))
	if err != nil {
		return faultOutcome{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", protocol)
	resp, err := client.Do(req)
	if err != nil {
		return faultOutcome{err: err, at: time.Now()}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	o := faultOutcome{status: resp.StatusCode, text: string(raw), at: time.Now(), retryAfter: resp.Header.Get("Retry-After")}
	if err != nil {
		// Headers came but the body was cut: not an answer.
		o.err = fmt.Errorf("read body after %d: %w", resp.StatusCode, err)
		return o
	}
	o.answered = true
	if resp.StatusCode != http.StatusOK {
		return o
	}
	var msg struct {
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil || msg.Result == nil || len(msg.Result.Content) != 1 {
		o.err = fmt.Errorf("not a tool result: %s", raw)
		return o
	}
	o.isError, o.text = msg.Result.IsError, msg.Result.Content[0].Text
	if !o.isError && tool == wf.ToolProposeQuest {
		var res wf.ProposeResult
		if err := json.Unmarshal([]byte(o.text), &res); err != nil || res.ProposalID == "" {
			o.err = fmt.Errorf("propose result %q: %v", o.text, err)
		}
		o.proposal = res.ProposalID
	}
	return o
}

// TestPostgresRestartUnderLoad stops the server's PostgreSQL (a private
// one; see dbtest.StartCluster) under a steady load of proposals and
// reads, and starts it again. While the database is away every request
// gets an answer, and that answer is 503 or the tool error "unavailable"
// (never a hang, another 5xx, or a crash); once it is back the same server
// process serves again by itself; and every acknowledged proposal is in
// the database with its audit row.
func TestPostgresRestartUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	cluster := dbtest.StartCluster(t)
	db := openStore(t, cluster.DSN)
	ctx := context.Background()
	a := authenticator(t, db)
	user := &wf.User{Name: "Keeper"}
	if err := db.CreateUser(ctx, user); err != nil {
		t.Fatal(err)
	}
	key, _, err := a.CreateKey(ctx, user.ID, []string{wf.ScopeAll})
	if err != nil {
		t.Fatal(err)
	}
	world := createWorld(t, db, user.ID)
	db.Close() // the checks below reopen it once the database is back

	child := startCrashChild(t, cluster.DSN)
	client := &http.Client{Timeout: 15 * time.Second}

	const workers = 6
	var (
		mu       sync.Mutex
		outcomes []faultOutcome
		added    = make(chan struct{}, 1) // signalled after each outcome is added
		stop     atomic.Bool
		seq      atomic.Int64
		wg       sync.WaitGroup
	)
	// await waits until cond holds over the outcomes so far, rechecking it
	// as each outcome comes in; it fails the test after 30 s or when the
	// server exits.
	await := func(what string, cond func([]faultOutcome) bool) {
		t.Helper()
		timeout := time.NewTimer(30 * time.Second)
		defer timeout.Stop()
		for {
			mu.Lock()
			ok := cond(outcomes)
			mu.Unlock()
			if ok {
				return
			}
			select {
			case <-added:
			case <-child.done:
				stop.Store(true)
				wg.Wait()
				t.Fatalf("waiting for %s: the server exited: %v\n%s", what, child.waitErr, child.stderr.String())
			case <-timeout.C:
				stop.Store(true)
				wg.Wait()
				t.Fatalf("no %s within 30s\nserver stderr:\n%s", what, child.stderr.String())
			}
		}
	}
	// succeeded counts the successful answers to calls sent after since.
	succeeded := func(outs []faultOutcome, since time.Time) int {
		n := 0
		for _, o := range outs {
			if o.sent.After(since) && o.status == http.StatusOK && !o.isError && o.err == nil {
				n++
			}
		}
		return n
	}
	for w := range workers {
		wg.Go(func() {
			for !stop.Load() {
				var o faultOutcome
				sent := time.Now()
				if w%2 == 0 {
					n := seq.Add(1)
					o = mcpCall(ctx, client, child.url, key, wf.ToolProposeQuest, map[string]any{
						"payload": map[string]any{"name": fmt.Sprintf("q-%d", n)}, "diff_summary": "load"})
				} else {
					o = mcpCall(ctx, client, child.url, key, wf.ToolReadWorld, map[string]any{"id": world})
				}
				o.sent = sent
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
				select {
				case added <- struct{}{}:
				default: // a signal is already pending
				}
				if o.status == http.StatusServiceUnavailable || o.isError {
					time.Sleep(20 * time.Millisecond) // as a client honouring Retry-After would, a little
				}
			}
		})
	}
	// The load runs: two successful calls per worker.
	start := time.Now()
	await("load before the stop", func(outs []faultOutcome) bool { return succeeded(outs, start) >= 2*workers })
	stoppedAt := time.Now()
	cluster.Stop()
	downAt := time.Now()
	time.Sleep(2 * time.Second) // the outage lasts: real time for the child process's requests to keep meeting a stopped database
	restartAt := time.Now()     // the database may answer from here on
	cluster.Start()
	upAt := time.Now()
	// The first success after the restart, then two per worker.
	var recovered time.Time
	await("successful call after PostgreSQL's restart", func(outs []faultOutcome) bool {
		for _, o := range outs {
			if o.at.After(upAt) && o.status == http.StatusOK && !o.isError && o.err == nil {
				recovered = o.at
				return true
			}
		}
		return false
	})
	await("load after the restart", func(outs []faultOutcome) bool { return succeeded(outs, recovered) >= 2*workers })
	stop.Store(true)
	wg.Wait()
	select {
	case <-child.done:
		t.Fatalf("the server exited: %v\n%s", child.waitErr, child.stderr.String())
	default:
	}

	var ok, unavailable503, unavailableTool, during int
	acked := map[string]bool{}
	for _, o := range outcomes {
		switch {
		case o.err != nil && o.status == 0:
			t.Errorf("a request got no answer: %v", o.err)
		case o.err != nil:
			t.Errorf("bad answer (%d): %v", o.status, o.err)
		case o.status == http.StatusServiceUnavailable:
			unavailable503++
			if o.retryAfter == "" || !strings.Contains(o.text, `"unavailable"`) {
				t.Errorf("503 with Retry-After %q and body %s; want a Retry-After and {\"error\":\"unavailable\"}", o.retryAfter, o.text)
			}
		case o.status != http.StatusOK:
			t.Errorf("status %d: %s", o.status, o.text)
		case o.isError && strings.HasPrefix(o.text, "unavailable"):
			unavailableTool++
		case o.isError:
			t.Errorf("tool error %q", o.text)
		default:
			ok++
			if o.proposal != "" {
				acked[o.proposal] = true
			}
		}
		if o.sent.After(downAt) && o.at.Before(restartAt) {
			during++
			if o.status == http.StatusOK && !o.isError {
				t.Errorf("a call succeeded while PostgreSQL was stopped: %s", o.text)
			}
		}
	}
	if unavailable503 == 0 {
		t.Errorf("no 503 while PostgreSQL was stopped (%d tool errors \"unavailable\")", unavailableTool)
	}
	t.Logf("%d requests: %d ok, %d answered 503, %d tool errors \"unavailable\"; %d sent and answered while the database was down (%s); first success %s after PostgreSQL was up again (stop took %s)",
		len(outcomes), ok, unavailable503, unavailableTool, during, restartAt.Sub(downAt).Round(time.Millisecond),
		recovered.Sub(upAt).Round(time.Millisecond), downAt.Sub(stoppedAt).Round(time.Millisecond))

	// Every acknowledged proposal is there, with its audit row.
	db = openStore(t, cluster.DSN)
	for id := range acked {
		if _, err := db.FindProposal(ctx, id); err != nil {
			t.Errorf("acknowledged proposal %s: %v", id, err)
		}
	}
	raw, err := sql.Open("pgx", cluster.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.QueryContext(ctx, "SELECT target_id FROM audit_log WHERE tool = $1", wf.ToolProposeQuest)
	if err != nil {
		t.Fatal(err)
	}
	audited := map[string]int{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		audited[id]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var stored int
	if err := raw.QueryRowContext(ctx, "SELECT COUNT(*) FROM proposals").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d proposals acknowledged, %d stored, %d audit rows for them", len(acked), stored, len(audited))
	for id := range acked {
		if audited[id] != 1 {
			t.Errorf("acknowledged proposal %s has %d audit rows, want 1", id, audited[id])
		}
	}
	if len(acked) == 0 {
		t.Error("no proposal was acknowledged")
	}
	child.checkLog(t, "restart")
}
