package main

// A crash-safety test: a real `worldforge serve` child process is killed
// with SIGKILL in the middle of a stream of commits, restarted on the same
// SQLite file, and the database is checked for every acknowledged commit
// and for half-applied or twice-applied proposals.
//
// The child is this test binary re-executed with crashChildEnv set:
// TestMain then runs the program instead of the tests.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/cli"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// crashChildEnv, set to "1", makes the test binary run the program with
// its arguments (os.Args[1:]) instead of the tests.
const crashChildEnv = "WORLDFORGE_CRASH_CHILD"

// commitRoute is the audit route of a REST commit.
const commitRoute = "POST /proposals/{id}/commit"

func TestMain(m *testing.M) {
	if kind := os.Getenv(stressChildEnv); kind != "" {
		os.Exit(stressChildMain(kind))
	}
	if os.Getenv(crashChildEnv) == "1" {
		os.Exit(crashChildMain())
	}
	os.Exit(m.Run())
}

// crashChildMain is main() for the child process. It also ends (gracefully)
// when its stdin reaches EOF, that is when the test process that holds the
// other end is gone, so that a crashed or timed-out test leaves no server
// behind.
func crashChildMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "worldforge:", err)
		return exitCode(err)
	}
	return 0
}

// crashChild is a `worldforge serve` running as a child process.
type crashChild struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{} // closed when the process has been waited for
	waitErr        error         // cmd.Wait's result, once done is closed
	url            string        // the MCP endpoint from the listening line
	base           string        // url without /mcp: the REST root
}

// startCrashChild starts `serve --addr 127.0.0.1:0 --db dsn [flags]` as a
// child process and waits (bounded) for its listening line. The process is
// killed with the test if it is still running.
func startCrashChild(t *testing.T, dsn string, flags ...string) *crashChild {
	t.Helper()
	c := &crashChild{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", dsn, "--log-level", "warn"}, flags...)
	c.cmd = exec.Command(os.Args[0], args...)
	c.cmd.Env = append(os.Environ(), crashChildEnv+"=1")
	c.cmd.Stdout, c.cmd.Stderr = c.stdout, c.stderr
	// The child watches its stdin for EOF; the pipe's write end stays
	// open in this process until the child has been waited for.
	if _, err := c.cmd.StdinPipe(); err != nil {
		t.Fatalf("child stdin: %v", err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start the server child %s: %v", os.Args[0], err)
	}
	go func() {
		c.waitErr = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
			return
		default:
		}
		_ = c.cmd.Process.Kill()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Errorf("server child %d not reaped within 10s of SIGKILL", c.cmd.Process.Pid)
		}
	})

	const startTimeout = 20 * time.Second
	timeout := time.NewTimer(startTimeout)
	defer timeout.Stop()
	for {
		written := c.stderr.next() // before looking: a write meanwhile is not missed
		if m := listeningRe.FindStringSubmatch(c.stderr.String()); m != nil {
			c.url = m[1]
			c.base = strings.TrimSuffix(c.url, "/mcp")
			return c
		}
		select {
		case <-written:
		case <-c.done:
			t.Fatalf("server child exited before listening: %v\nstderr:\n%s", c.waitErr, c.stderr.String())
		case <-timeout.C:
			t.Fatalf("server child not listening after %s\nstderr:\n%s", startTimeout, c.stderr.String())
		}
	}
}

// wait waits (bounded) for the child to exit and returns its state.
func (c *crashChild) wait(t *testing.T, what string) *os.ProcessState {
	t.Helper()
	select {
	case <-c.done:
		return c.cmd.ProcessState
	case <-time.After(15 * time.Second):
		t.Fatalf("server child did not exit within 15s of %s\nstderr:\n%s", what, c.stderr.String())
		return nil
	}
}

// checkLog fails the test if the child reported a data race or a panic.
func (c *crashChild) checkLog(t *testing.T, name string) {
	t.Helper()
	log := c.stderr.String()
	for _, bad := range []string{"WARNING: DATA RACE", "panic:", "fatal error:"} {
		if strings.Contains(log, bad) {
			t.Errorf("%s server's stderr has %q:\n%s", name, bad, log)
		}
	}
}

// commitOutcome is what one REST commit answered.
type commitOutcome struct {
	status int
	body   []byte
	err    error // transport error: no answer
}

// postCommit sends POST /proposals/{id}/commit.
func postCommit(ctx context.Context, client *http.Client, base, token, id string) commitOutcome {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/proposals/"+id+"/commit", nil)
	if err != nil {
		return commitOutcome{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return commitOutcome{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		// Headers came but the body was cut: not an acknowledgement.
		return commitOutcome{err: fmt.Errorf("read body after %d: %w", resp.StatusCode, err)}
	}
	return commitOutcome{status: resp.StatusCode, body: body}
}

// ackedCommit is a commit the server answered 200 to.
type ackedCommit struct {
	questID, auditID string
}

// parseCommit checks a 200 commit answer for proposal id.
func parseCommit(id string, o commitOutcome) (ackedCommit, error) {
	var res wf.CommitResult
	if err := json.Unmarshal(o.body, &res); err != nil {
		return ackedCommit{}, fmt.Errorf("commit %s: 200 with a body that is not a commit result: %v: %s", id, err, o.body)
	}
	if res.Proposal.ID != id || res.Proposal.Status != wf.ProposalCommitted || !wf.ValidID("quest", res.TargetID) || res.Version != 1 || res.AuditID == "" {
		return ackedCommit{}, fmt.Errorf("commit %s: 200 with proposal %s status %q, target %q, version %d, audit %q; want the proposal committed, a new quest at version 1, an audit id",
			id, res.Proposal.ID, res.Proposal.Status, res.TargetID, res.Version, res.AuditID)
	}
	return ackedCommit{questID: res.TargetID, auditID: res.AuditID}, nil
}

// crashState is what the database says about the test's proposals.
type crashState struct {
	committed map[string]string // proposal id → its quest's id
	pending   []string          // proposal ids, in filing order
}

// checkCrashState reads the whole state from the store and checks it is
// consistent: every proposal is pending or committed; a proposal is
// committed exactly when its quest exists, once, and exactly one commit
// audit row names it; there is no quest and no commit audit row that no
// proposal accounts for; every acknowledged commit is there with the quest
// and audit row it was acknowledged with; every proposal (all were
// acknowledged) has the one audit row of its propose_quest call.
func checkCrashState(t testing.TB, db *sqlstore.DB, dsn, owner string, ids []string, acked map[string]ackedCommit, extra []string, extraSent int) crashState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := crashState{committed: map[string]string{}}

	// The tables themselves (and on SQLite the file): intact, and holding
	// exactly the rows expected.
	var raw *sql.DB
	var err error
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		raw, err = sql.Open("sqlite", path+"?_pragma=query_only(1)")
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		var integrity string
		if err := raw.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
			t.Errorf("PRAGMA integrity_check = %q, %v; want ok", integrity, err)
		}
	} else if raw, err = sql.Open("pgx", dsn); err != nil {
		t.Fatalf("open %s: %v", cli.RedactDSN(dsn), err)
	}
	defer raw.Close()
	var nProposals, nQuests int
	if err := raw.QueryRowContext(ctx, "SELECT COUNT(*) FROM proposals").Scan(&nProposals); err != nil {
		t.Fatalf("count proposals: %v", err)
	}
	if err := raw.QueryRowContext(ctx, "SELECT COUNT(*) FROM quests").Scan(&nQuests); err != nil {
		t.Fatalf("count quests: %v", err)
	}
	if nProposals < len(ids)+len(extra) || nProposals > len(ids)+extraSent {
		t.Errorf("the database has %d proposals, want the %d filed first, the %d more acknowledged, and at most the rest of the %d more sent", nProposals, len(ids), len(extra), extraSent)
	}
	// The proposals filed alongside the commits: every acknowledged one is
	// there, pending, with its one audit row (checked below with the rest).
	for _, id := range extra {
		if p, err := db.FindProposal(ctx, id); err != nil || p.Status != wf.ProposalPending {
			t.Errorf("acknowledged proposal %s, filed during the commits: %+v, %v; want it pending", id, p, err)
		}
	}

	// Quests by name (the names are unique by construction).
	quests, err := dbtest.Quests(ctx, db, owner, "")
	if err != nil {
		t.Fatalf("ListQuests: %v", err)
	}
	if len(quests) != nQuests {
		t.Errorf("Quests(owner) = %d quests, the table has %d", len(quests), nQuests)
	}
	byName := map[string][]wf.DocSummary{}
	for _, q := range quests {
		byName[q.Name] = append(byName[q.Name], q)
	}
	nameOf := map[string]string{} // proposal id → q-i
	for i, id := range ids {
		nameOf[id] = fmt.Sprintf("q-%d", i)
	}
	known := map[string]bool{}
	for _, n := range nameOf {
		known[n] = true
	}
	for name, qs := range byName {
		if !known[name] {
			t.Errorf("quest %q (%s) belongs to no proposal of the test", name, qs[0].ID)
		}
	}

	// Commit audit rows, by the id they name (the proposal's or the
	// quest's: both are accepted, each must be accounted for).
	total, err := db.CountAudit(ctx, wf.AuditFilter{ActorID: owner})
	if err != nil {
		t.Fatalf("CountAudit: %v", err)
	}
	const auditMax = 1000 // ListAudit's cap
	if total > auditMax {
		t.Fatalf("%d audit rows for the owner, more than ListAudit returns (%d): the test cannot see them all", total, auditMax)
	}
	audit, err := db.ListAudit(ctx, wf.AuditFilter{ActorID: owner, Limit: auditMax})
	if err != nil {
		t.Fatalf("ListAudit: %v", err)
	}
	if len(audit) != total {
		t.Fatalf("ListAudit returned %d rows, CountAudit says %d", len(audit), total)
	}
	commitAudit := map[string][]wf.AuditEntry{} // target id → rows
	auditByID := map[string]wf.AuditEntry{}
	proposeAudit := map[string]int{} // proposal id → propose_quest rows
	nCommitAudit := 0
	for _, a := range audit {
		if a.Tool == wf.ToolProposeQuest {
			proposeAudit[a.TargetID]++
		}
		if a.Route != commitRoute {
			continue
		}
		nCommitAudit++
		commitAudit[a.TargetID] = append(commitAudit[a.TargetID], a)
		auditByID[a.ID] = a
		if a.Outcome != "committed" || a.TargetType != wf.ProposalQuest {
			t.Errorf("commit audit row %s: outcome %q, target type %q; want committed, quest", a.ID, a.Outcome, a.TargetType)
		}
	}

	for _, id := range extra {
		if c := proposeAudit[id]; c != 1 {
			t.Errorf("proposal %s (filed during the commits) has %d propose_quest audit rows, want 1", id, c)
		}
	}
	accounted := 0
	for i, id := range ids {
		name := nameOf[id]
		p, err := db.FindProposal(ctx, id)
		if err != nil {
			t.Errorf("proposal %s (%s): %v", id, name, err)
			continue
		}
		if c := proposeAudit[id]; c != 1 {
			t.Errorf("proposal %s (%s) has %d propose_quest audit rows, want 1 (its filing was acknowledged)", id, name, c)
		}
		qs := byName[name]
		var rows []wf.AuditEntry
		rows = append(rows, commitAudit[id]...)
		if len(qs) == 1 {
			rows = append(rows, commitAudit[qs[0].ID]...)
		}
		accounted += len(rows)
		switch p.Status {
		case wf.ProposalCommitted:
			if len(qs) != 1 || len(rows) != 1 {
				t.Errorf("proposal %s (%s) is committed with %d quests named %s and %d commit audit rows; want 1 and 1", id, name, len(qs), name, len(rows))
				continue
			}
			if p.DecidedBy != owner || p.DecidedAt == nil {
				t.Errorf("committed proposal %s: decided by %q at %v; want by %s, with a time", id, p.DecidedBy, p.DecidedAt, owner)
			}
			q, err := db.FindQuestByID(ctx, qs[0].ID)
			if err != nil {
				t.Errorf("quest %s of proposal %s: %v", qs[0].ID, id, err)
				continue
			}
			var doc struct{ N *int }
			if err := json.Unmarshal(q.JSON, &doc); err != nil || doc.N == nil || *doc.N != i || q.OwnerID != owner || q.Version != 1 {
				t.Errorf("quest %s of proposal %s: owner %s version %d doc %s; want owner %s, version 1, {\"n\":%d}", q.ID, id, q.OwnerID, q.Version, q.JSON, owner, i)
			}
			st.committed[id] = q.ID
		case wf.ProposalPending:
			if len(qs) != 0 || len(rows) != 0 {
				t.Errorf("proposal %s (%s) is pending with %d quests named %s and %d commit audit rows: half-applied", id, name, len(qs), name, len(rows))
			}
			if p.DecidedAt != nil || p.DecidedBy != "" {
				t.Errorf("pending proposal %s: decided by %q at %v", id, p.DecidedBy, p.DecidedAt)
			}
			st.pending = append(st.pending, id)
		default:
			t.Errorf("proposal %s (%s) has status %q; want pending or committed", id, name, p.Status)
		}
		if a, ok := acked[id]; ok {
			if p.Status != wf.ProposalCommitted {
				t.Errorf("proposal %s was acknowledged (quest %s, audit %s) but is %q: an acknowledged commit was lost", id, a.questID, a.auditID, p.Status)
				continue
			}
			if st.committed[id] != a.questID {
				t.Errorf("proposal %s was acknowledged with quest %s; the database has %s", id, a.questID, st.committed[id])
			}
			if _, ok := auditByID[a.auditID]; !ok {
				t.Errorf("proposal %s was acknowledged with audit row %s; there is no such commit audit row", id, a.auditID)
			}
		}
	}
	if accounted != nCommitAudit {
		t.Errorf("%d commit audit rows, %d of them name a proposal or its quest: some commits were audited but not applied", nCommitAudit, accounted)
	}
	if nQuests != len(st.committed) {
		t.Errorf("the database has %d quests, %d committed proposals", nQuests, len(st.committed))
	}
	return st
}

// TestCrashDuringCommits kills the server with SIGKILL while commits are
// in flight, restarts it on the same database (a SQLite file; PostgreSQL
// too when the tests have one), and checks that every
// acknowledged commit survived and that no proposal is half-applied or
// applied twice; then it commits the rest on the restarted server.
func TestCrashDuringCommits(t *testing.T) {
	switch runtime.GOOS {
	case "windows", "plan9", "js", "wasip1":
		t.Skipf("SIGKILL of a child process is a Unix test (GOOS %s)", runtime.GOOS)
	}
	if testing.Short() {
		t.Skip("starts and kills server processes; skipped with -short")
	}
	dbtest.ForEachDSN(t, crashDuringCommits)
}

func crashDuringCommits(t *testing.T, dsn string) {
	const (
		n       = 300 // proposals
		workers = 4   // concurrent MCP sessions and REST committers
	)
	ctx := context.Background()
	owner := mustValue(t, nil, userIDRe, "user", "create", "Crash Owner", "--db", dsn)
	token := mustValue(t, nil, jwtRe, "token", "--user", owner, "--db", dsn)
	reader := mustValue(t, nil, userIDRe, "user", "create", "Crash Reader", "--db", dsn)
	readerToken := mustValue(t, nil, jwtRe, "token", "--user", reader, "--db", dsn)

	// 1. File n proposals, each for a new quest q-i.
	srv := startCrashChild(t, dsn)
	sessions := make([]*mcp.ClientSession, workers)
	for w := range sessions {
		sessions[w] = connectMCP(t, srv.url, token, "")
	}
	ids := make([]string, n)
	fileErrs := make([]error, n)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				ids[i], fileErrs[i] = proposeQuest(ctx, sessions[w], i)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(fileErrs...); err != nil {
		t.Fatalf("filing proposals: %v\nserver stderr:\n%s", err, srv.stderr.String())
	}
	for _, cs := range sessions {
		cs.Close()
	}

	// 2. Commit them from several goroutines; the one whose commit is
	// the killAt-th acknowledged sends SIGKILL, with the others' commits
	// in flight.
	killAt := int64(n/4 + rand.IntN(n/4+1))
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: workers},
	}
	defer client.CloseIdleConnections()
	var (
		mu         sync.Mutex
		acked      = map[string]ackedCommit{}
		unacked    []string // the request failed: no answer
		failures   []error  // answers that were not 200, or a bad 200
		ackedAfter int      // 200s read after the kill was sent
		nAcked     atomic.Int64
		killed     atomic.Bool
		killErr    error
		next       atomic.Int64
	)
	// Alongside the commits, until the kill: a client filing more
	// proposals (each acknowledged one must survive, pending) and one
	// reading (as another user, so its audit rows stay out of the owner's).
	const maxExtra = 100
	var (
		extraAcked []string
		extraSent  atomic.Int64
		reads      atomic.Int64
	)
	wg.Go(func() {
		for !killed.Load() && extraSent.Load() < maxExtra {
			k := extraSent.Add(1)
			o := mcpCall(ctx, client, srv.url, token, wf.ToolProposeQuest, map[string]any{
				"payload": map[string]any{"name": fmt.Sprintf("extra-%d", k)}, "diff_summary": "mixed load"})
			wasKilled := killed.Load()
			mu.Lock()
			switch {
			case o.err == nil && o.status == http.StatusOK && !o.isError && o.proposal != "":
				extraAcked = append(extraAcked, o.proposal)
			case !wasKilled:
				failures = append(failures, fmt.Errorf("extra proposal %d before the kill: %d %q %v", k, o.status, o.text, o.err))
			}
			mu.Unlock()
		}
	})
	wg.Go(func() {
		for !killed.Load() {
			o := mcpCall(ctx, client, srv.url, readerToken, wf.ToolListCampaigns, map[string]any{})
			if o.err == nil && o.status == http.StatusOK && !o.isError {
				reads.Add(1)
			} else if !killed.Load() {
				mu.Lock()
				failures = append(failures, fmt.Errorf("read before the kill: %d %q %v", o.status, o.text, o.err))
				mu.Unlock()
			}
		}
	})
	for range workers {
		wg.Go(func() {
			for !killed.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				id := ids[i]
				o := postCommit(ctx, client, srv.base, token, id)
				wasKilled := killed.Load()
				mu.Lock()
				switch {
				case o.err != nil && wasKilled:
					unacked = append(unacked, id)
				case o.err != nil:
					failures = append(failures, fmt.Errorf("commit %s before the kill: %w", id, o.err))
				case o.status != http.StatusOK:
					failures = append(failures, fmt.Errorf("commit %s: %d %s", id, o.status, o.body))
				default:
					a, err := parseCommit(id, o)
					if err != nil {
						failures = append(failures, err)
						break
					}
					acked[id] = a
					if wasKilled {
						ackedAfter++
					}
				}
				mu.Unlock()
				if o.err == nil && o.status == http.StatusOK && nAcked.Add(1) == killAt {
					killed.Store(true) // before the kill: every failure from here on is its doing
					killErr = srv.cmd.Process.Kill()
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(failures...); err != nil {
		t.Errorf("commits before the kill failed:\n%v", err)
	}
	if !killed.Load() {
		t.Fatalf("only %d commits were acknowledged, never reaching the kill point %d\nserver stderr:\n%s", nAcked.Load(), killAt, srv.stderr.String())
	}
	if killErr != nil {
		t.Fatalf("SIGKILL the server: %v", killErr)
	}
	if ps := srv.wait(t, "SIGKILL"); ps.String() != "signal: killed" {
		t.Errorf("the first server ended with %q, want killed by SIGKILL\nstderr:\n%s", ps, srv.stderr.String())
	}
	srv.checkLog(t, "the killed")
	notSent := n - int(next.Load())
	if notSent < 0 {
		notSent = 0
	}
	t.Logf("alongside: %d more proposals acknowledged of %d sent, %d reads answered", len(extraAcked), extraSent.Load(), reads.Load())
	t.Logf("killed after %d acknowledged commits (kill point %d; %d more acknowledged in flight); %d in flight unanswered; %d never sent",
		len(acked)-ackedAfter, killAt, ackedAfter, len(unacked), notSent)

	// 3. Restart on the same file: it must open (WAL recovery) and the
	// state must be consistent, with every acknowledged commit.
	srv2 := startCrashChild(t, dsn)
	db := openStore(t, dsn)
	st := checkCrashState(t, db, dsn, owner, ids, acked, extraAcked, int(extraSent.Load()))
	inFlightCommitted := 0
	for _, id := range unacked {
		if _, ok := st.committed[id]; ok {
			inFlightCommitted++
		}
	}
	t.Logf("after the restart: %d committed (%d acknowledged, %d of the %d unanswered), %d pending",
		len(st.committed), len(acked), inFlightCommitted, len(unacked), len(st.pending))
	if len(st.committed)+len(st.pending) != n {
		t.Fatalf("after the restart: %d committed + %d pending of %d proposals", len(st.committed), len(st.pending), n)
	}

	// 4. The restarted server commits the pending ones, and refuses to
	// commit again the ones already committed.
	for _, id := range st.pending {
		o := postCommit(ctx, client, srv2.base, token, id)
		if o.err != nil || o.status != http.StatusOK {
			t.Errorf("commit %s on the restarted server: %d %s (%v); want 200", id, o.status, o.body, o.err)
			continue
		}
		a, err := parseCommit(id, o)
		if err != nil {
			t.Error(err)
			continue
		}
		acked[id] = a
	}
	for id := range st.committed {
		o := postCommit(ctx, client, srv2.base, token, id)
		var body struct{ Error, Detail string }
		if o.err != nil || o.status != http.StatusConflict || json.Unmarshal(o.body, &body) != nil ||
			body.Error != wf.EConflict || body.Detail != wf.DetailNotPending {
			t.Errorf("second commit of %s on the restarted server: %d %s (%v); want 409 conflict not_pending", id, o.status, o.body, o.err)
		}
	}
	final := checkCrashState(t, db, dsn, owner, ids, acked, extraAcked, int(extraSent.Load()))
	if len(final.committed) != n || len(final.pending) != 0 {
		t.Errorf("at the end: %d committed, %d pending; want all %d committed", len(final.committed), len(final.pending), n)
	}
	t.Logf("the restarted server committed the %d pending; all %d quests exist once", len(st.pending), len(final.committed))

	// 5. The restarted server shuts down cleanly.
	if err := srv2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM the restarted server: %v", err)
	}
	if ps := srv2.wait(t, "SIGTERM"); !ps.Success() {
		t.Errorf("the restarted server ended with %q after SIGTERM, want exit 0\nstderr:\n%s", ps, srv2.stderr.String())
	}
	srv2.checkLog(t, "the restarted")
}

// proposeIDRe is a proposal id.
var proposeIDRe = regexp.MustCompile(`^prop_[a-z0-9_-]+$`)

// proposeQuest files the proposal of a new quest q-i with document
// {"n":i} and returns its id.
func proposeQuest(ctx context.Context, cs *mcp.ClientSession, i int) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: wf.ToolProposeQuest, Arguments: map[string]any{
		"payload":      map[string]any{"name": fmt.Sprintf("q-%d", i), "json": map[string]any{"n": i}},
		"diff_summary": "crash test",
	}})
	if err != nil {
		return "", fmt.Errorf("propose q-%d: %w", i, err)
	}
	if len(res.Content) != 1 {
		return "", fmt.Errorf("propose q-%d: %d content blocks, want 1", i, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("propose q-%d: content is %T, want text", i, res.Content[0])
	}
	var out wf.ProposeResult
	if res.IsError || json.Unmarshal([]byte(tc.Text), &out) != nil || !proposeIDRe.MatchString(out.ProposalID) || out.AutoAccepted != nil {
		return "", fmt.Errorf("propose q-%d = %s (isError %v); want a pending proposal's id", i, tc.Text, res.IsError)
	}
	return out.ProposalID, nil
}
