package main

import (
	"testing"

	"github.com/worldforge-go/worldforge/internal/clitest"
)

// TestCommandTable holds the command table to the program and its docs:
// help prints its usage text; every command's -h shows its rows and
// exactly the flags its synopses name, from the command's real flag set,
// and an undefined flag is a one-line usage error; docs/commands.md shows
// its Markdown (WORLDFORGE_UPDATE_DOCS=1 rewrites it); the package comment
// lists every command that is not hidden.
func TestCommandTable(t *testing.T) {
	clitest.CheckUsage(t, program, run)
	clitest.CheckFlags(t, program, run)
	clitest.CheckDocs(t, program, "../../docs/commands.md")
	clitest.CheckDocComment(t, program, "main.go")
}
