// Package cli is what the commands worldforge and worldforge-bench share:
// the table of commands and flags that prints -h, writes the usage text and
// the command tables of docs/commands.md ([Program]); the environment a
// command runs in ([Env]) with its flag parsing and database selection; and
// usage errors, which main turns into exit code 2.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/worldforge-go/worldforge/sqlstore"
)

// Env is the process environment as the commands see it.
type Env struct {
	Getenv func(string) string
	Stdout io.Writer
	Stderr io.Writer
	// Program is the command table; -h on a command prints its rows.
	Program *Program
}

// UsageError is a mistake in the command line (exit code 2). An empty Msg
// is -h: the help was printed, and main exits 0.
type UsageError struct{ Msg string }

func (u UsageError) Error() string { return u.Msg }

// UsageErrorf returns a UsageError with a formatted message.
func UsageErrorf(format string, args ...any) error {
	return UsageError{Msg: fmt.Sprintf(format, args...)}
}

// IsHelp reports whether err is the empty UsageError of -h.
func IsHelp(err error) bool {
	var u UsageError
	return errors.As(err, &u) && u.Msg == ""
}

// ExitCode is the process exit code for err: 0 for nil, 2 for a
// UsageError, 1 for anything else.
func ExitCode(err error) int {
	var u UsageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &u):
		return 2
	}
	return 1
}

// NewFlags returns a flag set named for its command ("key create") that
// reports errors as one line, through the returned error, instead of
// printing usage.
func NewFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// Parse parses args, allowing flags after positional arguments
// ("user create NAME --db X"), and wraps mistakes as usage errors. -h
// prints the command's help (Help) and is a usage error with no message,
// which main treats as success. The positional arguments are left in
// fs.Args().
func (e *Env) Parse(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				e.Help(fs)
				return UsageError{}
			}
			return UsageErrorf("%s: %v", fs.Name(), err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if stoppedAtDashes := len(args) > len(rest) && args[len(args)-len(rest)-1] == "--"; stoppedAtDashes {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	// Reset fs.Args() to the positional arguments.
	return fs.Parse(append([]string{"--"}, pos...))
}

// ParseFlagsFirst parses flags up to the first positional argument (for a
// command whose arguments may look like anything after it). -h prints the
// command's help, as Parse does.
func (e *Env) ParseFlagsFirst(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			e.Help(fs)
			return UsageError{}
		}
		return UsageErrorf("%s: %v", fs.Name(), err)
	}
	return nil
}

// Help writes a command's -h to stderr: its rows of the command table
// (synopsis and description), then the flags of its flag set, fs.
func (e *Env) Help(fs *flag.FlagSet) {
	if e.Program != nil {
		for _, c := range e.Program.Lookup(fs.Name()) {
			fmt.Fprintf(e.Stderr, "usage: %s %s\n       %s\n", e.Program.Name, c.Line(), c.Summary)
		}
	}
	fmt.Fprintf(e.Stderr, "flags of %s:\n", fs.Name())
	fs.SetOutput(e.Stderr)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// DBFlag adds --db to fs.
func (e *Env) DBFlag(fs *flag.FlagSet) *string {
	return fs.String("db", "", `database: "sqlite:PATH" or "postgres://…" (default $WORLDFORGE_DB, else the embedded SQLite file in the data directory)`)
}

// DSN resolves the database: flag, then WORLDFORGE_DB, then the default
// SQLite file in the data directory.
func (e *Env) DSN(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if v := e.Getenv("WORLDFORGE_DB"); v != "" {
		return v, nil
	}
	dir, err := e.DataDir()
	if err != nil {
		return "", err
	}
	return "sqlite:" + filepath.Join(dir, "worldforge.db"), nil
}

// DataDir is $WORLDFORGE_DATA_DIR, else $XDG_DATA_HOME/worldforge, else
// ~/.local/share/worldforge.
func (e *Env) DataDir() (string, error) {
	if d := e.Getenv("WORLDFORGE_DATA_DIR"); d != "" {
		return d, nil
	}
	if d := e.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "worldforge"), nil
	}
	home := e.Getenv("HOME")
	if home == "" {
		return "", errors.New("cannot place the data directory: set WORLDFORGE_DATA_DIR, XDG_DATA_HOME or HOME, or pass --db")
	}
	return filepath.Join(home, ".local", "share", "worldforge"), nil
}

// OpenDB opens the store named by the --db flag value.
func (e *Env) OpenDB(ctx context.Context, flagValue string) (*sqlstore.DB, error) {
	dsn, err := e.DSN(flagValue)
	if err != nil {
		return nil, err
	}
	// Admin commands print only their value: keep the store's own logs to
	// warnings, on stderr.
	logger := slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := sqlstore.Open(ctx, dsn, &sqlstore.Options{Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return db, nil
}

// Positional checks the number of positional arguments.
func Positional(fs *flag.FlagSet, want int, names string) ([]string, error) {
	if fs.NArg() != want {
		return nil, UsageErrorf("%s: want %s, got %d argument(s)", fs.Name(), names, fs.NArg())
	}
	return fs.Args(), nil
}

// RedactDSN hides a password in a database URL for logs.
func RedactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// StartCPUProfile profiles the process into the named file until the
// returned function is called.
func StartCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
