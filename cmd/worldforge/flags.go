package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/worldforge-go/worldforge/sqlstore"
)

// newFlags returns a flag set that reports errors as one line, through
// the returned error, instead of printing usage.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses args, allowing flags after positional arguments
// ("user create NAME --db X"), and wraps mistakes as usage errors. -h
// prints the flags and is a usage error with no message, which main treats
// as success. The positional arguments are left in fs.Args().
func (e *env) parse(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(e.stderr)
				fmt.Fprintf(e.stderr, "usage of %s:\n", fs.Name())
				fs.PrintDefaults()
				return usageError{}
			}
			return usageErrorf("%s: %v", fs.Name(), err)
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

// dbFlag adds --db to fs.
func (e *env) dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", "", `database: "sqlite:PATH" or "postgres://…" (default $WORLDFORGE_DB, else the embedded SQLite file in the data directory)`)
}

// dsn resolves the database: flag, then WORLDFORGE_DB, then the default
// SQLite file in the data directory.
func (e *env) dsn(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if v := e.getenv("WORLDFORGE_DB"); v != "" {
		return v, nil
	}
	dir, err := e.dataDir()
	if err != nil {
		return "", err
	}
	return "sqlite:" + filepath.Join(dir, "worldforge.db"), nil
}

func (e *env) dataDir() (string, error) {
	if d := e.getenv("WORLDFORGE_DATA_DIR"); d != "" {
		return d, nil
	}
	if d := e.getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "worldforge"), nil
	}
	home := e.getenv("HOME")
	if home == "" {
		return "", errors.New("cannot place the data directory: set WORLDFORGE_DATA_DIR, XDG_DATA_HOME or HOME, or pass --db")
	}
	return filepath.Join(home, ".local", "share", "worldforge"), nil
}

// openDB opens the store named by the --db flag value.
func (e *env) openDB(ctx context.Context, flagValue string) (*sqlstore.DB, error) {
	dsn, err := e.dsn(flagValue)
	if err != nil {
		return nil, err
	}
	// Admin commands print only their value: keep the store's own logs to
	// warnings, on stderr.
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := sqlstore.Open(ctx, dsn, &sqlstore.Options{Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return db, nil
}

// positional checks the number of positional arguments.
func positional(fs *flag.FlagSet, want int, names string) ([]string, error) {
	if fs.NArg() != want {
		return nil, usageErrorf("%s: want %s, got %d argument(s)", fs.Name(), names, fs.NArg())
	}
	return fs.Args(), nil
}
