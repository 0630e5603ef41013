package main

// A stress test of `mcp gateway` shutdown: the gateway runs as a real
// process (this test binary re-executed through main, so SIGTERM takes
// the program's own path), its upstream is a real stdio MCP server (this
// binary again) that spawns a grandchild, calls are in flight when SIGTERM
// arrives, and after the gateway has exited no process of its upstreams
// may be alive. Processes are found by an environment marker only the
// upstreams (and what they spawn) carry, read from /proc.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stressChildEnv makes the test binary run as one of the stress test's
// processes: "main" is the worldforge program (main()), "upstream" a
// stdio MCP server, "sleeper" the upstream's grandchild.
const stressChildEnv = "WORLDFORGE_STRESS_CHILD"

// stressMarkEnv is the marker the upstreams and their children carry:
// "<test run>/<cycle>".
const stressMarkEnv = "WORLDFORGE_STRESS_MARK"

// stressIgnoreEOF, set to "1", makes the upstream keep running after its
// stdin ends (as a server with timers or work in progress does), so the
// gateway must signal it.
const stressIgnoreEOF = "WORLDFORGE_STRESS_IGNORE_EOF"

// stressChildMain runs the process stressChildEnv names.
func stressChildMain(kind string) int {
	switch kind {
	case "main":
		main()
		return 0
	case "sleeper":
		time.Sleep(time.Hour) // until the group is killed
		return 0
	case "upstream":
		return stressUpstream()
	}
	fmt.Fprintln(os.Stderr, "unknown stress child", kind)
	return 2
}

// stressUpstream is a stdio MCP server with an echo tool and a block tool
// that reports progress once and then waits for its cancellation; it
// spawns a grandchild into its process group first.
func stressUpstream() int {
	// sleep(1) where there is one: it starts faster than this binary.
	sleeper := exec.Command(os.Args[0])
	sleeper.Env = append(os.Environ(), stressChildEnv+"=sleeper")
	if path, err := exec.LookPath("sleep"); err == nil {
		sleeper = exec.Command(path, "3600")
	}
	if err := sleeper.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "upstream: start sleeper:", err)
		return 1
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "stress-upstream", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "block"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "started"})
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(time.Minute):
			return nil, nil, fmt.Errorf("block: never cancelled")
		}
	})
	if os.Getenv(stressIgnoreEOF) == "1" {
		// Ends on SIGTERM only, like a server busy with timers.
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		go srv.Run(context.Background(), &mcp.StdioTransport{})
		<-ctx.Done()
		return 0
	}
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
	}
	return 0
}

// TestMCPGatewayStopLeavesNoChild runs 100 cycles (10 with -short) of:
// start `mcp gateway` over stdio with two stdio upstreams, make calls (two
// of them blocked in the upstreams, so in flight), SIGTERM the gateway,
// wait for it to exit, and look for any upstream process, or the
// grandchild each spawned, still alive. In one cycle
// of twenty ignores the end of its stdin, so the gateway's SIGTERM step
// is taken; with MCPKIT_TEST_EVERYTHING set, another one of twenty adds
// the reference everything server with its long-running operation in
// flight.
func TestMCPGatewayStopLeavesNoChild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	node, everything := "", os.Getenv("MCPKIT_TEST_EVERYTHING")
	if everything != "" {
		if node, err = exec.LookPath("node"); err != nil {
			everything = ""
		} else {
			everything, _ = filepath.Abs(everything)
		}
	}
	cycles := 100
	if testing.Short() {
		cycles = 10
	}
	run := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	dir := t.TempDir()
	t.Cleanup(func() {
		// Whatever a failed cycle left behind does not outlive the test.
		for _, pid := range markedProcesses(run + "/") {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	// Four cycles run at a time: most of a cycle is waiting (for a
	// process to start, for a grace period to pass).
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range cycles {
			next <- i
		}
	}()
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range next {
				if failed.Load() {
					continue
				}
				if err := stressCycle(exe, dir, run, i, node, everything); err != nil {
					failed.Store(true)
					t.Errorf("cycle %d: %v", i, err)
				}
			}
		})
	}
	wg.Wait()
}

// stressCycle writes cycle i's config, runs the gateway through it and
// looks for what is left of its upstreams.
func stressCycle(exe, dir, run string, i int, node, everything string) error {
	mark := fmt.Sprintf("%s/%d", run, i)
	upEnv := func(ignoreEOF bool) map[string]string {
		env := map[string]string{stressChildEnv: "upstream", stressMarkEnv: mark, "GORACE": "atexit_sleep_ms=0"}
		if ignoreEOF {
			env[stressIgnoreEOF] = "1"
		}
		return env
	}
	servers := map[string]any{
		"a": map[string]any{"command": exe, "env": upEnv(false)},
		"b": map[string]any{"command": exe, "env": upEnv(i%20 == 0)},
	}
	withEverything := everything != "" && i%20 == 10
	if withEverything {
		servers["everything"] = map[string]any{"command": node, "args": []string{everything, "stdio"}, "env": map[string]string{stressMarkEnv: mark}}
	}
	cfg := filepath.Join(dir, fmt.Sprintf("mcp-%d.json", i))
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		return err
	}
	if err := gatewayCycle(exe, cfg, withEverything); err != nil {
		return err
	}
	if left := markedProcesses(mark); len(left) > 0 {
		return fmt.Errorf("the gateway exited, but upstream processes %v are alive:\n%s", left, describe(left))
	}
	return nil
}

// gatewayCycle starts the gateway, makes the calls, sends SIGTERM and
// waits for the gateway to exit.
func gatewayCycle(exe, cfg string, withEverything bool) error {
	cmd := exec.Command(exe, "mcp", "gateway", "--config", cfg)
	cmd.Env = append(os.Environ(), stressChildEnv+"=main", "GORACE=atexit_sleep_ms=0")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			<-exited
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	started := make(chan string, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "stress", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case started <- fmt.Sprint(req.Params.ProgressToken):
			default:
			}
		},
	})
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		return fmt.Errorf("connect to the gateway: %v\nstderr: %s", err, stderr.String())
	}
	defer cs.Close()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a_echo", Arguments: map[string]any{"text": "hi"}}); err != nil || res.IsError {
		return fmt.Errorf("a_echo: %v %+v\nstderr: %s", err, res, stderr.String())
	}
	// Calls in flight: one blocked in each upstream (both have said they
	// started), the everything server's long operation, and echoes fired
	// as the signal goes.
	var wg sync.WaitGroup
	call := func(name string, args map[string]any, token any) {
		wg.Go(func() {
			p := &mcp.CallToolParams{Name: name, Arguments: args}
			if token != nil {
				p.SetProgressToken(token)
			}
			cs.CallTool(ctx, p) // fails when the gateway goes
		})
	}
	call("a_block", map[string]any{}, "a")
	call("b_block", map[string]any{}, "b")
	want := 2
	if withEverything {
		call("everything_trigger-long-running-operation", map[string]any{"duration": 5, "steps": 5}, "everything")
		want++
	}
	for range want {
		select {
		case <-started:
		case err := <-exited:
			return fmt.Errorf("the gateway exited: %v\nstderr: %s", err, stderr.String())
		case <-ctx.Done():
			return fmt.Errorf("the calls did not start\nstderr: %s", stderr.String())
		}
	}
	for range 4 {
		call("a_echo", map[string]any{"text": "in flight"}, nil)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-exited:
		killed = true
	case <-time.After(20 * time.Second):
		cmd.Process.Signal(syscall.SIGQUIT) // its goroutines, on stderr
		select {
		case <-exited:
			killed = true
		case <-time.After(5 * time.Second):
		}
		return fmt.Errorf("the gateway did not exit within 20 s of SIGTERM\nstderr: %s", stderr.String())
	}
	stdin.Close()
	wg.Wait()
	return nil
}

// markedProcesses returns the pids of the living processes (not zombies,
// not already sent SIGKILL) whose environment holds stressMarkEnv with a
// value starting with prefix.
func markedProcesses(prefix string) []int {
	want := []byte(stressMarkEnv + "=" + prefix)
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !hasEnvPrefix(env, want) {
			continue
		}
		if dying(pid) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

func hasEnvPrefix(environ, want []byte) bool {
	for kv := range bytes.SplitSeq(environ, []byte{0}) {
		if bytes.HasPrefix(kv, want) {
			return true
		}
	}
	return false
}

// dying reports whether pid is a zombie or has SIGKILL pending: dead in
// all but bookkeeping.
func dying(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return true // gone
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "State":
			if strings.HasPrefix(v, "Z") || strings.HasPrefix(v, "X") {
				return true
			}
		case "SigPnd", "ShdPnd":
			if mask, err := strconv.ParseUint(v, 16, 64); err == nil && mask&(1<<(syscall.SIGKILL-1)) != 0 {
				return true
			}
		}
	}
	return false
}

// describe lists each pid's command line and state, for a failure.
func describe(pids []int) string {
	var b strings.Builder
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		state := ""
		for line := range strings.SplitSeq(string(status), "\n") {
			if strings.HasPrefix(line, "State:") || strings.HasPrefix(line, "PPid:") {
				state += strings.TrimSpace(line) + " "
			}
		}
		fmt.Fprintf(&b, "  %d %s %s\n", pid, state, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
	}
	return b.String()
}
