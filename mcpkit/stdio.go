package mcpkit

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stderrTail is how much of a child's stderr is kept for error reports.
const stderrTail = 4 << 10

// ProcessExit says how a stdio server's process ended. It is the Details
// of a spawn_failed error and of the NOT_CONNECTED error that fails the
// calls pending when a server dies.
type ProcessExit struct {
	Pid int
	// ExitCode is the process's exit code, or -1 if a signal ended it.
	ExitCode int
	// Status is the wait status as text: "exit status 3", "signal: killed".
	Status string
	// Stderr is the tail (up to 4 KiB) of what the process wrote to stderr.
	Stderr string
}

func (p *ProcessExit) String() string {
	if p.Stderr == "" {
		return p.Status
	}
	return fmt.Sprintf("%s; stderr: %s", p.Status, lastLine(p.Stderr))
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\r\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// process is a stdio server's child process. It owns the parent's ends of
// the three pipes; the child runs in its own process group (on Unix) so
// that shutdown reaches whatever it spawned.
type process struct {
	server string
	cmd    *exec.Cmd
	stdin  *os.File // parent's write end of the child's stdin
	stdout *os.File // parent's read end of the child's stdout
	tail   *tailBuffer

	stderrDone chan struct{} // closed when stderr reaches EOF
	exited     chan struct{} // closed when the child has been reaped
	exitedAt   time.Time     // when it was reaped (set before exited is closed)
	state      *os.ProcessState
	waitErr    error

	shutdownOnce sync.Once
	// released, if set, is called once shutdown or abort has finished
	// (set before either can run).
	released func()
}

// startProcess spawns cfg's command with the parent's environment
// overlaid by cfg.Env.
func startProcess(cfg *ServerConfig, logger *slog.Logger) (_ *process, err error) {
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Env = mergeEnv(os.Environ(), cfg.Env)
	cmd.Dir = cfg.Cwd
	setProcessGroup(cmd)

	var files []*os.File // every pipe end, closed on failure
	defer func() {
		if err != nil {
			for _, f := range files {
				f.Close()
			}
		}
	}()
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		return nil, err
	}
	// With *os.File stdio, exec starts no copying goroutines and Wait does
	// not wait for grandchildren that inherited the pipes.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	inR.Close()
	outW.Close()
	errW.Close()

	p := &process{
		server:     cfg.Name,
		cmd:        cmd,
		stdin:      inW,
		stdout:     outR,
		tail:       &tailBuffer{max: stderrTail},
		stderrDone: make(chan struct{}),
		exited:     make(chan struct{}),
	}
	go p.drainStderr(errR, logger)
	go p.wait()
	return p, nil
}

// mergeEnv returns base with overlay's variables set (overlay wins).
func mergeEnv(base []string, overlay map[string]string) []string {
	if len(overlay) == 0 {
		return base
	}
	env := make([]string, 0, len(base)+len(overlay))
	for _, kv := range base {
		if _, ok := overlay[envKey(kv)]; !ok {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(overlay)) {
		env = append(env, k+"="+overlay[k])
	}
	return env
}

// envKey returns the name in a "NAME=value" entry. (On Windows, names
// like "=C:" start with '='.)
func envKey(kv string) string {
	start := 0
	if strings.HasPrefix(kv, "=") {
		start = 1
	}
	if i := strings.IndexByte(kv[start:], '='); i >= 0 {
		return kv[:start+i]
	}
	return kv
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) wait() {
	p.waitErr = p.cmd.Wait()
	p.state = p.cmd.ProcessState
	p.exitedAt = time.Now()
	close(p.exited)
}

// drainStderr copies the child's stderr into the tail buffer and the
// logger (at debug) until EOF, so that the child never blocks on it.
func (p *process) drainStderr(r *os.File, logger *slog.Logger) {
	defer close(p.stderrDone)
	defer r.Close()
	br := bufio.NewReaderSize(r, 4096)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			p.tail.Write(line)
			if logger.Enabled(context.Background(), slog.LevelDebug) {
				logger.Debug("server stderr", "server", p.server, "line", string(bytes.TrimRight(line, "\r\n")))
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

// exitInfo reports how the process ended; it must be called after exited
// is closed. It gives the stderr drain a moment to catch up.
func (p *process) exitInfo() *ProcessExit {
	select {
	case <-p.stderrDone:
	case <-time.After(200 * time.Millisecond): // a grandchild may hold stderr open
	}
	info := &ProcessExit{Pid: p.pid(), ExitCode: -1, Stderr: p.tail.String()}
	if p.state != nil {
		info.ExitCode = p.state.ExitCode()
		info.Status = p.state.String()
	} else if p.waitErr != nil {
		info.Status = p.waitErr.Error()
	}
	return info
}

// hasExited reports whether the child has been reaped.
func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// shutdown stops the child and everything in its process group: close
// stdin, wait up to grace, SIGTERM, wait up to grace, SIGKILL. Whatever
// is left of the group afterwards (grandchildren) is killed, and the
// parent's read end of stdout is closed so that no reader stays blocked.
// It is idempotent and bounded (about 2×grace plus a second).
func (p *process) shutdown(grace time.Duration) {
	p.shutdownOnce.Do(func() {
		p.stdin.Close()
		if !p.waitExit(grace) {
			terminateGroup(p.cmd.Process)
			if !p.waitExit(grace) {
				killGroup(p.cmd.Process)
				p.waitExit(time.Second)
			}
		}
		p.finishShutdown()
	})
}

// abort stops a child that failed its start-up (it never finished the
// handshake, so it has no session to wind down): close stdin and SIGTERM
// the group at once, SIGKILL after grace. Like shutdown it takes the
// whole group and closes stdout; it is bounded by about grace plus a
// second, and the first of shutdown and abort to run is the one that
// counts.
func (p *process) abort(grace time.Duration) {
	p.shutdownOnce.Do(func() {
		p.stdin.Close()
		if !p.hasExited() {
			terminateGroup(p.cmd.Process)
		}
		if !p.waitExit(grace) {
			killGroup(p.cmd.Process)
			p.waitExit(time.Second)
		}
		p.finishShutdown()
	})
}

// waitExit waits up to d for the child to be reaped and reports whether
// it was (at once, even for d ≤ 0, if it already was).
func (p *process) waitExit(d time.Duration) bool {
	if p.hasExited() {
		return true
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// finishShutdown kills what is left of the group once the leader is gone
// (or unkillable), waits (boundedly) for the group to be gone, so that no
// grandchild is still dying when shutdown returns, and closes the
// parent's end of stdout.
func (p *process) finishShutdown() {
	killGroup(p.cmd.Process)
	awaitGroupGone(p.cmd.Process, time.Second)
	p.stdout.Close()
	if p.released != nil {
		p.released()
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if len(p) >= b.max {
		p = p[len(p)-b.max:]
		b.buf = append(b.buf[:0], p...)
		return n, nil
	}
	if over := len(b.buf) + len(p) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// stdioTransport is the go-sdk's IOTransport (newline-delimited JSON with
// a per-frame cap we choose; CommandTransport's cap is fixed at 16 MiB)
// over the child's pipes, with its connection wrapped to remember why
// reading stopped.
type stdioTransport struct {
	proc     *process
	maxFrame int
	onConn   func(*stdioConn) // told the connection as soon as it exists
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	io := &mcp.IOTransport{Reader: t.proc.stdout, Writer: t.proc.stdin, MaxLineLength: t.maxFrame}
	c, err := io.Connect(ctx)
	if err != nil {
		return nil, err
	}
	conn := &stdioConn{Connection: c}
	if t.onConn != nil {
		t.onConn(conn)
	}
	return conn, nil
}

// stdioConn records the first read error: io.EOF when the child closed
// stdout, anything else (bad JSON, an oversized frame) is a protocol fault.
type stdioConn struct {
	mcp.Connection
	readErr atomic.Pointer[error]

	// The progress and log notifications read, and of them those handed
	// to the handlers (Client.settle waits for the latter to catch up).
	notifications, handled counter
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		first := err // (a variable of its own, so that only a failed read allocates)
		c.readErr.CompareAndSwap(nil, &first)
	}
	if req, ok := msg.(*jsonrpc.Request); ok && isRoutedNotification(req.Method) {
		c.notifications.add(1)
	}
	return msg, err
}

// failure returns the recorded read error, or nil.
func (c *stdioConn) failure() error {
	if c == nil {
		return nil
	}
	if p := c.readErr.Load(); p != nil {
		return *p
	}
	return nil
}

// protocolFailure reports whether reading stopped on malformed input
// rather than on the end of the stream or a closed pipe.
func (c *stdioConn) protocolFailure() error {
	err := c.failure()
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}
