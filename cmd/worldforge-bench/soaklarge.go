package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/worldforge-go/worldforge/internal/cli"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/bench"
	"github.com/worldforge-go/worldforge/mcpserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// The large-world mode of soak:
//
//	soak -large-world 4096 [-clients 8] [-duration 15s] [-max-rss 128MiB]
//
// creates a world through the tools (worldforge_create_world, then
// worldforge_resize_world to side×side; largeWorldSeed), starts the
// server, then, for each way a client can
// ask for it — a tools/call with no Mcp-Protocol-Version header and with
// each revision the server accepts, and a one-call JSON-RPC batch (which
// the go-sdk answers, building the answer in memory) — runs -clients
// concurrent read_world calls in a closed loop for -duration and records
// the server's peak RSS (VmHWM, reset before each revision, and VmRSS
// sampled every soakRSSInterval). Every answer must be the whole world, or,
// for the batch, the whole world or the too_large tool error of an answer
// over the go-sdk path's limit. The exit status is 1 when a call failed or
// the peak RSS of any revision exceeds -max-rss.

// soakRevisions are the Mcp-Protocol-Version values the large-world mode
// reads the world with ("" sends no header).
var soakRevisions = []string{"", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// soakBatchRevision is the revision the large-world mode sends its batch
// row with (batches are allowed before 2025-06-18).
const soakBatchRevision = "2025-03-26"

// soakRSSInterval is how often the large-world mode samples VmRSS.
const soakRSSInterval = 20 * time.Millisecond

// largeRow is the outcome of one revision's run.
type largeRow struct {
	name               string
	requests, errors   int64
	refused            int64 // batch: too_large answers
	answerBytes        int64 // of the last whole answer
	peakRSS, hwm, base int64
	firstErr           string
}

// largeWorldSeed creates the large-world mode's world in the database,
// before the server starts, through the tools as an agent would
// (worldforge_create_world, then worldforge_resize_world to side×side),
// run in this process: the server's memory then reflects the reads alone,
// not the resize. The world is owned by the owner of benchSeed's world.
func largeWorldSeed(ctx context.Context, dsn, seedWorld string, side int) (string, error) {
	db, err := sqlstore.Open(ctx, dsn, nil)
	if err != nil {
		return "", err
	}
	defer db.Close()
	w, err := db.FindWorldHeader(ctx, seedWorld)
	if err != nil {
		return "", err
	}
	tools, err := mcpserver.New(db, nil)
	if err != nil {
		return "", err
	}
	actor := &wf.Actor{UserID: w.OwnerID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}
	res, err := tools.CallTool(ctx, actor, wf.ToolCreateWorld, json.RawMessage(`{"name":"Soak large world","template":"starter-desert","seed":5,"size":"large"}`))
	if err != nil {
		return "", fmt.Errorf("create the world: %w", err)
	}
	id := res.(wf.CreateWorldResult).ID
	if _, err := tools.CallTool(ctx, actor, wf.ToolResizeWorld, json.RawMessage(fmt.Sprintf(`{"world_id":%q,"cols":%d,"rows":%d}`, id, side, side))); err != nil {
		return "", fmt.Errorf("resize the world: %w", err)
	}
	return id, nil
}

// soakLargeWorld runs the large-world mode against the server srv, on
// the world largeWorldSeed made.
func (e *env) soakLargeWorld(ctx context.Context, srv *child, key, world string, side, clients int, each time.Duration, maxRSS int64) error {
	pid := srv.cmd.Process.Pid
	fmt.Fprintf(e.Stdout, "soak: large world %d×%d, %d clients, %s per revision, max RSS %s, server pid %d\n",
		side, side, clients, each, cli.FormatBytes(maxRSS), pid)
	fmt.Fprintf(e.Stdout, "%-18s %9s %7s %8s %11s %13s %9s\n", "revision", "requests", "errors", "refused", "answer MiB", "peak RSS MiB", "start MiB")
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	var rows []largeRow
	names := append(append([]string{}, soakRevisions...), "batch")
	for _, name := range names {
		row := runLargeRevision(ctx, client, srv.url, key, world, name, clients, each, pid)
		rows = append(rows, row)
		rev := name
		if rev == "" {
			rev = "none"
		} else if rev == "batch" {
			rev = "batch " + soakBatchRevision
		}
		fmt.Fprintf(e.Stdout, "%-18s %9d %7d %8d %11.1f %13.1f %9.1f\n", rev, row.requests, row.errors, row.refused,
			float64(row.answerBytes)/(1<<20), float64(row.peakRSS)/(1<<20), float64(row.base)/(1<<20))
		select {
		case <-srv.done:
			return fmt.Errorf("soak: the server exited during the run")
		default:
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	var problems []string
	var peak int64
	for _, r := range rows {
		name := r.name
		if name == "" {
			name = "none"
		}
		peak = max(peak, r.peakRSS)
		if r.errors > 0 {
			problems = append(problems, fmt.Sprintf("%s: %d of %d calls failed (first: %s)", name, r.errors, r.requests, r.firstErr))
		}
		if r.requests == 0 {
			problems = append(problems, fmt.Sprintf("%s: no call completed", name))
		}
		if r.peakRSS > maxRSS {
			problems = append(problems, fmt.Sprintf("%s: peak RSS %.1f MiB over the limit of %s", name, float64(r.peakRSS)/(1<<20), cli.FormatBytes(maxRSS)))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("soak: %s", strings.Join(problems, "; "))
	}
	fmt.Fprintf(e.Stdout, "soak: peak RSS %.1f MiB, within %s on every revision; no errors\n", float64(peak)/(1<<20), cli.FormatBytes(maxRSS))
	return nil
}

// runLargeRevision runs clients closed-loop read_world callers of world
// for each, on the revision name ("" none, "batch" a batch), and samples
// the server's RSS.
func runLargeRevision(ctx context.Context, client *http.Client, url, key, world, name string, clients int, each time.Duration, pid int) largeRow {
	row := largeRow{name: name}
	row.base, _ = bench.RSS(pid)
	// Reset the peak RSS (VmHWM) the kernel keeps; where that is not
	// allowed, the samples alone count.
	resetHWM := os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0) == nil
	runCtx, cancel := context.WithTimeout(ctx, each)
	defer cancel()
	var peak atomic.Int64
	var sampler sync.WaitGroup
	sampler.Go(func() {
		t := time.NewTicker(soakRSSInterval)
		defer t.Stop()
		for {
			if n, err := bench.RSS(pid); err == nil && n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
			}
		}
	})
	var (
		mu                      sync.Mutex
		requests, errs, refused int64
		answer                  int64
		firstErr                string
		wg                      sync.WaitGroup
	)
	for range clients {
		wg.Go(func() {
			for runCtx.Err() == nil {
				// The call itself runs to its end (ctx, not runCtx): a
				// call cut at the end of the run is no failure of the
				// server's and would only log one.
				n, tooLarge, err := readLarge(ctx, client, url, key, world, name)
				mu.Lock()
				requests++
				switch {
				case err != nil:
					errs++
					if firstErr == "" {
						firstErr = err.Error()
					}
				case tooLarge:
					refused++
				default:
					answer = n
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	cancel()
	sampler.Wait()
	if n, err := bench.RSS(pid); err == nil {
		peak.Store(max(peak.Load(), n))
	}
	row.requests, row.errors, row.refused, row.answerBytes, row.firstErr = requests, errs, refused, answer, firstErr
	row.peakRSS = peak.Load()
	if resetHWM {
		if hwm, err := vmHWM(pid); err == nil {
			row.hwm = hwm
			row.peakRSS = max(row.peakRSS, hwm)
		}
	}
	return row
}

// readLarge sends one read_world of world on the revision name and reads
// the answer through a small buffer. It returns the answer's length, or
// tooLarge for the batch's too_large tool error; anything else that is not
// the whole world is an error.
func readLarge(ctx context.Context, client *http.Client, url, key, world, name string) (n int64, tooLarge bool, err error) {
	rev, batch := name, false
	if name == "batch" {
		rev, batch = soakBatchRevision, true
	}
	params := `"name":"read_world","arguments":{"id":` + strconv.Quote(world) + `}`
	if rev >= "2026-07-28" {
		params = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + rev + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"worldforge-soak","version":"1"}},` + params
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + params + `}}`
	if batch {
		body = "[" + body + "]"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		return 0, false, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if rev != "" {
		req.Header.Set("Mcp-Protocol-Version", rev)
	}
	if rev >= "2026-07-28" {
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "read_world")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	// Keep the first 64 KiB (a small answer, or an error, whole) and the
	// last bytes.
	const keep = 64 << 10
	var head bytes.Buffer
	var tail []byte
	buf := make([]byte, 32<<10)
	for {
		k, rerr := resp.Body.Read(buf)
		p := buf[:k]
		n += int64(k)
		if room := keep - head.Len(); room > 0 {
			head.Write(p[:min(room, len(p))])
		}
		if tail = append(tail, p...); len(tail) > 64 {
			tail = append(tail[:0], tail[len(tail)-64:]...)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return n, false, rerr
		}
	}
	if resp.StatusCode != http.StatusOK {
		return n, false, fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, head.Bytes())
	}
	if n <= keep {
		return checkSmallAnswer(head.Bytes(), batch)
	}
	end := string(tail)
	if !strings.HasSuffix(end, `"}]}}`) && !strings.HasSuffix(end, `"}],"resultType":"complete"}}`) && !strings.HasSuffix(end, `"}]}}]`) {
		return n, false, fmt.Errorf("an answer of %d bytes does not end as a whole tool result: …%q", n, end)
	}
	return n, false, nil
}

// checkSmallAnswer checks an answer read whole: a tool result (in a
// one-element array for a batch) that is not an error, or, for a batch,
// too_large.
func checkSmallAnswer(raw []byte, batch bool) (int64, bool, error) {
	n := int64(len(raw))
	msg := raw
	if batch {
		var arr []json.RawMessage
		if err := json.Unmarshal(raw, &arr); err != nil || len(arr) != 1 {
			return n, false, fmt.Errorf("batch answer is not one response: %.200s", raw)
		}
		msg = arr[0]
	}
	var r struct {
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &r); err != nil || r.Result == nil || len(r.Result.Content) != 1 {
		return n, false, fmt.Errorf("not a tool result: %.200s", raw)
	}
	if r.Result.IsError {
		if batch && strings.HasPrefix(r.Result.Content[0].Text, "too_large: ") {
			return n, true, nil
		}
		return n, false, errors.New("tool error " + r.Result.Content[0].Text)
	}
	return n, false, nil
}

// vmHWM reads a process's peak RSS from /proc/pid/status.
func vmHWM(pid int) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 2 && fields[1] == "kB" {
				kb, err := strconv.ParseInt(fields[0], 10, 64)
				return kb * 1024, err
			}
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}
