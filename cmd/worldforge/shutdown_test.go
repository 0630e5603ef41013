package main

// A graceful-shutdown test: a real `worldforge serve` child process gets
// SIGTERM in the middle of a steady load of write calls over /mcp from many
// goroutines. It must stop accepting, answer every request it had taken,
// commit their audit rows, close the database and exit 0; after a restart
// every call that got a success answer has its proposal and its audit row,
// and nothing was written that was not acknowledged.

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
)

// writeOutcome is what one write call over /mcp answered.
type writeOutcome struct {
	id  string // the proposal's or the campaign's id, on success
	err error  // no answer (transport) or a bad one
	// answered is true when an HTTP response was read in full.
	answered bool
}

// rawWrite sends one JSON-RPC POST of a tools/call: propose_quest for quest
// q-i (its audit row is written in the proposal's transaction) or
// create_campaign c-i (its audit row goes through the audit group commit).
// Protocol 2025-11-25 is answered by the fast path, 2025-03-26 by the
// go-sdk handler.
func rawWrite(ctx context.Context, client *http.Client, url, key, tool, protocol string, i int) writeOutcome {
	args := map[string]any{"name": fmt.Sprintf("c-%d", i), "json": map[string]any{"n": i}}
	if tool == wf.ToolProposeQuest {
		args = map[string]any{
			"payload":      map[string]any{"name": fmt.Sprintf("q-%d", i), "json": map[string]any{"n": i}},
			"diff_summary": "shutdown test",
		}
	}
	o := mcpCallAs(ctx, client, url, key, protocol, tool, args)
	if !o.answered {
		return writeOutcome{err: o.err}
	}
	bad := writeOutcome{answered: true, err: fmt.Errorf("%s %d: %d %s (isError %v, %v)", tool, i, o.status, o.text, o.isError, o.err)}
	if o.status != http.StatusOK || o.err != nil || o.isError {
		return bad
	}
	if tool == wf.ToolProposeQuest {
		if !proposeIDRe.MatchString(o.proposal) {
			return bad
		}
		return writeOutcome{answered: true, id: o.proposal}
	}
	var res wf.CreatedResult
	if json.Unmarshal([]byte(o.text), &res) != nil || !wf.ValidID("campaign", res.ID) || res.Version != 1 {
		return bad
	}
	return writeOutcome{answered: true, id: res.ID}
}

// ackedWrite is a write call that got a success answer.
type ackedWrite struct {
	tool string
	i    int
}

// TestGracefulShutdownUnderLoad sends SIGTERM to a server child while 32
// goroutines make write calls over /mcp — propose_quest (audited in the
// proposal's transaction) and create_campaign (audited through the audit
// group commit), each half on the fast path and half through the go-sdk
// handler — and checks that no acknowledged call is lost.
func TestGracefulShutdownUnderLoad(t *testing.T) {
	switch runtime.GOOS {
	case "windows", "plan9", "js", "wasip1":
		t.Skipf("SIGTERM of a child process is a Unix test (GOOS %s)", runtime.GOOS)
	}
	if testing.Short() {
		t.Skip("starts server processes; skipped with -short")
	}
	const (
		workers = 32
		termAt  = 300 // acknowledged calls before SIGTERM
	)
	ctx := context.Background()
	dsn, path := newDSN(t)
	owner := mustValue(t, nil, userIDRe, "user", "create", "Shutdown Owner", "--db", dsn)
	key := mustValue(t, nil, keyRe, "key", "create", "--user", owner, "--scopes", "*", "--db", dsn)
	srv := startCrashChild(t, dsn, "--log-level", "info", "--log-format", "json", "--shutdown-timeout", "20s")

	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	defer client.CloseIdleConnections()
	var (
		mu          sync.Mutex
		acked       = map[string]ackedWrite{} // proposal or campaign id → call
		failures    []error                   // bad answers, or no answer before SIGTERM
		unanswered  int                       // no answer after SIGTERM
		ackedAfter  int                       // successes read after SIGTERM was sent
		next        atomic.Int64
		nAcked      atomic.Int64
		termed      atomic.Bool
		termErr     error
		stopOnce    sync.Once
		stopWorkers = make(chan struct{})
	)
	var wg sync.WaitGroup
	for w := range workers {
		tool, protocol := wf.ToolProposeQuest, "2025-11-25" // the fast path
		if w%2 == 1 {
			protocol = "2025-03-26" // the go-sdk handler
		}
		if w%4 >= 2 {
			tool = wf.ToolCreateCampaign
		}
		wg.Go(func() {
			for {
				select {
				case <-stopWorkers:
					return
				case <-srv.done:
					return
				default:
				}
				i := int(next.Add(1)) - 1
				o := rawWrite(ctx, client, srv.url, key, tool, protocol, i)
				wasTermed := termed.Load()
				mu.Lock()
				switch {
				case o.err != nil && !o.answered && wasTermed:
					unanswered++ // refused or cut after SIGTERM: not acknowledged
				case o.err != nil:
					failures = append(failures, o.err)
				default:
					acked[o.id] = ackedWrite{tool: tool, i: i}
					if wasTermed {
						ackedAfter++
					}
				}
				nFail := len(failures)
				mu.Unlock()
				if nFail > 20 {
					stopOnce.Do(func() { close(stopWorkers) })
					return
				}
				if o.err != nil && !o.answered && wasTermed {
					return // the server is going away
				}
				if o.err == nil && nAcked.Add(1) == termAt {
					termed.Store(true) // before the signal: every later failure may be its doing
					termErr = srv.cmd.Process.Signal(syscall.SIGTERM)
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(failures...); err != nil {
		t.Fatalf("calls failed:\n%v\nserver stderr (tail):\n%s", err, tail(srv.stderr.String(), 30))
	}
	if !termed.Load() {
		t.Fatalf("only %d calls were acknowledged, never reaching %d", nAcked.Load(), termAt)
	}
	if termErr != nil {
		t.Fatalf("SIGTERM: %v", termErr)
	}
	ps := srv.wait(t, "SIGTERM")
	if !ps.Success() {
		t.Fatalf("the server ended with %q after SIGTERM, want exit 0\nstderr (tail):\n%s", ps, tail(srv.stderr.String(), 30))
	}
	srv.checkLog(t, "the terminated")
	t.Logf("SIGTERM after %d acknowledged calls; %d more acknowledged after it (in flight); %d unanswered after it",
		len(acked)-ackedAfter, ackedAfter, unanswered)
	if ackedAfter == 0 {
		t.Errorf("no call in flight at SIGTERM was answered: with %d busy workers some should have been", workers)
	}
	perTool := map[string]int{}
	for _, a := range acked {
		perTool[a.tool]++
	}

	// The logs: JSON lines (but the plain listening line), the shutdown
	// steps in order, one request line per acknowledged call, no credential.
	logText := srv.stderr.String()
	if strings.Contains(logText, key) {
		t.Errorf("the server's log contains the API key")
	}
	var (
		msgs      []string
		toolLines = map[string]int{}
		ids       = map[string]bool{}
	)
	sc := bufio.NewScanner(strings.NewReader(logText))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if listeningRe.MatchString(line) {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("log line is not JSON: %q", line)
			continue
		}
		msg, _ := m["msg"].(string)
		if msg != "request" {
			msgs = append(msgs, msg)
			continue
		}
		if tool, _ := m["tool"].(string); m["status"] == float64(200) && m["user_id"] == owner && m["route"] == "/mcp" {
			toolLines[tool]++
		}
		id, _ := m["request_id"].(string)
		if id == "" || ids[id] {
			t.Errorf("request line with a missing or repeated request id: %v", m)
		}
		ids[id] = true
	}
	for _, tool := range []string{wf.ToolProposeQuest, wf.ToolCreateCampaign} {
		if toolLines[tool] != perTool[tool] {
			t.Errorf("%d request lines of %s, %d acknowledged calls", toolLines[tool], tool, perTool[tool])
		}
	}
	if !inOrder(msgs, "worldforge listening", "shutting down", "audit log closed", "shut down") {
		t.Errorf("log messages (requests left out) = %q; want listening, shutting down, audit log closed, shut down in that order", msgs)
	}

	// Restart on the same file: ready, and every acknowledged call is
	// there with its audit row; nothing unacknowledged was written.
	srv2 := startCrashChild(t, dsn)
	resp, err := client.Get(srv2.base + "/readyz")
	if err != nil {
		t.Fatalf("GET /readyz after the restart: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /readyz after the restart = %d, want 200", resp.StatusCode)
	}
	db := openStore(t, dsn)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	total, err := db.CountAudit(cctx, wf.AuditFilter{ActorID: owner})
	if err != nil {
		t.Fatal(err)
	}
	audit, err := db.ListAudit(cctx, wf.AuditFilter{ActorID: owner, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if total > 1000 || len(audit) != total {
		t.Fatalf("%d audit rows of the owner, %d listed (up to 1000)", total, len(audit))
	}
	auditOf := map[string][]wf.AuditEntry{} // target id → rows
	for _, a := range audit {
		auditOf[a.TargetID] = append(auditOf[a.TargetID], a)
	}
	for id, a := range acked {
		switch a.tool {
		case wf.ToolProposeQuest:
			p, err := db.FindProposal(cctx, id)
			if err != nil || p.Status != wf.ProposalPending || p.Kind != wf.ProposalQuest || p.ActorID != owner {
				t.Errorf("acknowledged proposal %s (q-%d): %+v, %v", id, a.i, p, err)
				continue
			}
		default:
			c, err := db.FindCampaignByID(cctx, id)
			if err != nil || c.Name != fmt.Sprintf("c-%d", a.i) || c.OwnerID != owner {
				t.Errorf("acknowledged campaign %s (c-%d): %+v, %v", id, a.i, c, err)
				continue
			}
		}
		if rows := auditOf[id]; len(rows) != 1 || rows[0].Tool != a.tool || rows[0].Outcome != "ok" {
			t.Errorf("acknowledged %s %s (%d) has audit rows %+v, want one of its own", a.tool, id, a.i, rows)
		}
	}
	raw, err := sql.Open("sqlite", path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var nProposals, nCampaigns int
	if err := raw.QueryRowContext(cctx, "SELECT COUNT(*) FROM proposals").Scan(&nProposals); err != nil {
		t.Fatal(err)
	}
	if err := raw.QueryRowContext(cctx, "SELECT COUNT(*) FROM campaigns").Scan(&nCampaigns); err != nil {
		t.Fatal(err)
	}
	if nProposals != perTool[wf.ToolProposeQuest] || nCampaigns != perTool[wf.ToolCreateCampaign] || len(audit) != len(acked) {
		t.Errorf("the database has %d proposals, %d campaigns and %d audit rows; %d and %d were acknowledged: a call was carried out but its answer lost",
			nProposals, nCampaigns, len(audit), perTool[wf.ToolProposeQuest], perTool[wf.ToolCreateCampaign])
	}
	t.Logf("after the restart: %d proposals, %d campaigns, %d audit rows, as acknowledged", nProposals, nCampaigns, len(audit))

	if err := srv2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if ps := srv2.wait(t, "SIGTERM"); !ps.Success() {
		t.Errorf("the restarted server ended with %q after SIGTERM, want exit 0", ps)
	}
	srv2.checkLog(t, "the restarted")
}

// inOrder reports whether want occur in got in that order (others may be
// between them).
func inOrder(got []string, want ...string) bool {
	for _, g := range got {
		if len(want) > 0 && g == want[0] {
			want = want[1:]
		}
	}
	return len(want) == 0
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestServeOperations: serve answers /healthz, /readyz and /metrics
// without a credential; --metrics=false removes /metrics; --log-format json
// logs JSON with one request line per request; --log-format text stays the
// default.
func TestServeOperations(t *testing.T) {
	dsn, _ := newDSN(t)
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	s := startServe(t, dsn, "--log-format", "json")
	base := strings.TrimSuffix(s.url, "/mcp")
	if st, body := get(base + "/healthz"); st != 200 || strings.TrimSpace(body) != `{"status":"ok"}` {
		t.Errorf("GET /healthz = %d %s", st, body)
	}
	if st, body := get(base + "/readyz"); st != 200 || strings.TrimSpace(body) != `{"status":"ready"}` {
		t.Errorf("GET /readyz = %d %s", st, body)
	}
	st, body := get(base + "/metrics")
	for _, want := range []string{"worldforge_http_requests_total{", `route="GET /readyz"`, "worldforge_audit_queue_depth", "worldforge_db_open_connections{pool=\"writer\"}", "go_goroutines", "process_start_time_seconds"} {
		if st != 200 || !strings.Contains(body, want) {
			t.Errorf("GET /metrics = %d without %q", st, want)
		}
	}
	s.stop(t)
	var requests int
	for line := range strings.Lines(s.stderr.String()) {
		if listeningRe.MatchString(strings.TrimSpace(line)) {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("--log-format json wrote %q", line)
		}
		if m["msg"] == "request" {
			requests++
		}
	}
	if requests != 3 {
		t.Errorf("%d request lines for 3 requests:\n%s", requests, s.stderr.String())
	}

	s = startServe(t, dsn, "--metrics=false")
	base = strings.TrimSuffix(s.url, "/mcp")
	if st, _ := get(base + "/metrics"); st != http.StatusNotFound {
		t.Errorf("GET /metrics with --metrics=false = %d, want 404", st)
	}
	if st, _ := get(base + "/healthz"); st != 200 {
		t.Errorf("GET /healthz = %d", st)
	}
	s.stop(t)
	if out := s.stderr.String(); !strings.Contains(out, "level=INFO msg=request") || !strings.Contains(out, "route=/healthz") && !strings.Contains(out, `route="GET /healthz"`) {
		t.Errorf("text log has no request line for /healthz:\n%s", out)
	}
}
