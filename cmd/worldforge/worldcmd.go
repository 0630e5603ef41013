package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/worldforge-go/worldforge/internal/cli"
	"os"
	"path/filepath"
	"strconv"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine"
	"github.com/worldforge-go/worldforge/mcpserver"
)

// worldCreate: world create --user USER_ID --name NAME [--template T]
// [--seed N|WORD] [--size S] [--populate=false] → the new world's id. It runs
// the worldforge_create_world tool as the user, so the world is exactly
// what an agent would get (and the audit log says who made it).
func (e *env) worldCreate(ctx context.Context, args []string) error {
	fs := cli.NewFlags("world create")
	dbf := e.DBFlag(fs)
	user := fs.String("user", "", "the id of the user who will own the world (required)")
	name := fs.String("name", "", "the world's name, 1–120 characters (required)")
	template := fs.String("template", "", "template id (see the README); empty for a blank grid")
	seed := fs.String("seed", "", "generation seed: an integer within ±2^53, or a word that maps to one (default: random; a random or word seed is printed to stderr)")
	size := fs.String("size", "medium", "small, medium or large")
	populate := fs.Bool("populate", true, "add POIs, atlas places, wiki pages and lore (false: terrain only)")
	if err := e.Parse(fs, args); err != nil {
		return err
	}
	if _, err := cli.Positional(fs, 0, "no arguments"); err != nil {
		return err
	}
	if *user == "" || *name == "" {
		return cli.UsageErrorf("world create: --user and --name are required")
	}
	in := worldforge.CreateWorldArgs{Name: *name, Template: *template, Size: *size, Populate: populate}
	seedGiven, seedWord := false, false
	fs.Visit(func(f *flag.Flag) { seedGiven = seedGiven || f.Name == "seed" })
	if seedGiven {
		// The tool's own reading of a string seed: digits are that
		// integer, any other text maps to a fixed one.
		n, err := worldforge.ParseSeed(*seed)
		if err != nil {
			msg := err.Error()
			var we *worldforge.Error
			if errors.As(err, &we) {
				msg = we.Detail
			}
			return cli.UsageErrorf("world create: --seed: %s", msg)
		}
		in.Seed = &n
		seedWord = strconv.FormatInt(n, 10) != *seed
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	db, err := e.OpenDB(ctx, *dbf)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.FindUserByID(ctx, *user); err != nil {
		if errors.Is(err, worldforge.ErrNotFound) {
			return notFound(fmt.Sprintf("world create: user %q not found", *user), err)
		}
		return fmt.Errorf("world create: %w", err)
	}
	tools, err := mcpserver.New(db, nil)
	if err != nil {
		return err
	}
	actor := &worldforge.Actor{UserID: *user, Kind: worldforge.CredentialSession, Scopes: []string{worldforge.ScopeAll}}
	res, err := tools.CallTool(ctx, actor, worldforge.ToolCreateWorld, raw)
	if err != nil {
		// A refused flag value (template, size, name) is a command-line
		// mistake.
		if c := worldforge.ErrorCode(err); c == worldforge.EBadRequest || c == worldforge.EUnknownTemplate {
			return cli.UsageErrorf("world create: %v", err)
		}
		return fmt.Errorf("world create: %w", err)
	}
	out := res.(worldforge.CreateWorldResult)
	if in.Seed == nil || seedWord {
		fmt.Fprintf(e.Stderr, "world create: seed %d\n", out.Seed)
	}
	fmt.Fprintln(e.Stdout, out.ID)
	return nil
}

// worldRender: world render WORLD_ID -o FILE.png [--cell-px N] draws the
// world's grid by terrain with its POIs and the players' positions. "-o -"
// writes the PNG to stdout.
func (e *env) worldRender(ctx context.Context, args []string) error {
	fs := cli.NewFlags("world render")
	dbf := e.DBFlag(fs)
	outPath := fs.String("o", "", "the PNG file to write, or - for stdout (required)")
	cellPx := fs.Int("cell-px", 0, "pixels per cell (0: fit the map in about 2048 px)")
	if err := e.Parse(fs, args); err != nil {
		return err
	}
	pos, err := cli.Positional(fs, 1, "WORLD_ID")
	if err != nil {
		return err
	}
	if *outPath == "" {
		return cli.UsageErrorf("world render: -o FILE is required")
	}
	if *cellPx < 0 || *cellPx > 64 {
		return cli.UsageErrorf("world render: --cell-px must be between 0 and 64")
	}
	db, err := e.OpenDB(ctx, *dbf)
	if err != nil {
		return err
	}
	defer db.Close()
	w, rt, err := db.ReadWorld(ctx, pos[0])
	if err != nil {
		if errors.Is(err, worldforge.ErrNotFound) {
			return notFound(fmt.Sprintf("world render: world %q not found", pos[0]), err)
		}
		return fmt.Errorf("world render: %w", err)
	}
	pois, err := db.ListPOIs(ctx, w.ID)
	if err != nil {
		return fmt.Errorf("world render: %w", err)
	}
	render := func(f *bufio.Writer) error {
		if err := engine.Render(f, w.JSON, pois, rt.Presence, engine.RenderOptions{CellPx: *cellPx}); err != nil {
			return fmt.Errorf("world render: %w", err)
		}
		return f.Flush()
	}
	if *outPath == "-" {
		return render(bufio.NewWriter(e.Stdout))
	}
	// Write beside the target and rename, so a failed render leaves no
	// half-written file.
	tmp, err := os.CreateTemp(filepath.Dir(*outPath), ".render-*.png")
	if err != nil {
		return fmt.Errorf("world render: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := render(bufio.NewWriter(tmp)); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("world render: %w", err)
	}
	// CreateTemp makes the file private; a map is an ordinary file.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("world render: %w", err)
	}
	if err := os.Rename(tmp.Name(), *outPath); err != nil {
		return fmt.Errorf("world render: %w", err)
	}
	return nil
}
