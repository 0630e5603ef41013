package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// RunFunc is a whole program, callable from tests: its arguments (without
// the program name), its environment and its output streams.
type RunFunc func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error

// Main runs a program's RunFunc on the process: SIGTERM or SIGINT cancels
// its context (serve shuts down gracefully); once it has, the signals get
// their default action again, so a second one ends the process at once.
// An error is printed after name and ends the process with its exit code
// (ExitCode; 0 for -h).
func Main(name string, run RunFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if IsHelp(err) {
			os.Exit(0) // -h
		}
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(ExitCode(err))
	}
}
