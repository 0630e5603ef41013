package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a PostgreSQL server of a test's own (initdb into a temporary
// directory, pg_ctl on a free loopback port), for tests that stop and
// start the database under a running WorldForge server. The shared server
// of WORLDFORGE_TEST_POSTGRES_DSN is never stopped: other tests use it.
type Cluster struct {
	DSN  string // postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable
	dir  string
	port int
	bin  string
	tb   testing.TB
}

// StartCluster initialises and starts a private PostgreSQL server, stopped
// and removed with the test. It skips the test unless
// WORLDFORGE_TEST_POSTGRES_DSN is set (the gate for every PostgreSQL test)
// and PostgreSQL's server binaries are installed.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	if os.Getenv(EnvPostgresDSN) == "" {
		tb.Skipf("%s is not set", EnvPostgresDSN)
	}
	bin := postgresBinDir()
	if bin == "" {
		tb.Skip("PostgreSQL server binaries (initdb, pg_ctl) not found")
	}
	// A directory the postgres user can use: the test's own temp dir is
	// private to this (often root) user, and PostgreSQL refuses root.
	dir, err := os.MkdirTemp("", "worldforge-pg-")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	c := &Cluster{dir: dir, bin: bin, tb: tb}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			tb.Skip("running as root and there is no postgres user to run PostgreSQL as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			tb.Fatal(err)
		}
	}
	tb.Cleanup(func() {
		_ = c.pgctl("stop", "-m", "immediate", "-w")
		os.RemoveAll(dir)
	})
	if out, err := c.run("initdb", "-D", c.data(), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"); err != nil {
		tb.Fatalf("initdb: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	c.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	c.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
	c.Start()
	return c
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// Start starts the server and waits until it accepts connections.
func (c *Cluster) Start() {
	c.tb.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100", c.port, c.dir)
	if err := c.pgctl("start", "-w", "-t", "30", "-l", filepath.Join(c.dir, "log"), "-o", opts); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		c.tb.Fatalf("pg_ctl start: %v\n%s", err, log)
	}
	// pg_ctl -w waits for the socket; make sure TCP answers a query too.
	db, err := sql.Open("pgx", c.DSN)
	if err != nil {
		c.tb.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.tb.Fatalf("private PostgreSQL not answering: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the server the way an operator's restart does (fast
// shutdown: sessions are ended, in-flight transactions rolled back) and
// waits until it is down.
func (c *Cluster) Stop() {
	c.tb.Helper()
	if err := c.pgctl("stop", "-m", "fast", "-w", "-t", "30"); err != nil {
		c.tb.Fatalf("pg_ctl stop: %v", err)
	}
}

func (c *Cluster) pgctl(args ...string) error {
	out, err := c.run("pg_ctl", append([]string{"-D", c.data()}, args...)...)
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// run runs a PostgreSQL binary, as the postgres user when this process is
// root.
func (c *Cluster) run(name string, args ...string) ([]byte, error) {
	path := filepath.Join(c.bin, name)
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	return cmd.CombinedOutput()
}

// postgresBinDir finds the directory of initdb and pg_ctl: Debian keeps
// them in /usr/lib/postgresql/N/bin, other systems on the PATH.
func postgresBinDir() string {
	if dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin"); len(dirs) > 0 {
		for i := len(dirs) - 1; i >= 0; i-- {
			if _, err := os.Stat(filepath.Join(dirs[i], "pg_ctl")); err == nil {
				return dirs[i]
			}
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p)
		}
	}
	return ""
}
