package sqlstore_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// mount runs mount(8) and skips the test when this machine does not let us
// (not root, or no mount privilege in the container).
func mount(t *testing.T, args ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a file system needs root")
	}
	if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
		t.Skipf("mount %v: %v: %s", args, err, out)
	}
	target := args[len(args)-1]
	if strings.Contains(strings.Join(args, " "), "remount") {
		return // unmounted by the cleanup of the mount it changes
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", target).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", target, err, out)
		}
	})
}

// TestReadOnlySQLite: a SQLite file on a read-only file system is refused
// at open with an error that says so. (A file system cannot be made
// read-only under a running store: the kernel refuses to remount it while
// the store holds the file open for writing.)
func TestReadOnlySQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rw, ro := filepath.Join(dir, "rw"), filepath.Join(dir, "ro")
	for _, d := range []string{rw, ro} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(rw, "wf.db"), dbtest.Options())
	if err != nil {
		t.Fatal(err)
	}
	u := &worldforge.User{Name: "Before"}
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	db.Close()

	mount(t, "--bind", rw, ro)
	mount(t, "-o", "remount,bind,ro", ro)
	_, err = sqlstore.Open(ctx, "sqlite:"+filepath.Join(ro, "wf.db"), dbtest.Options())
	if err == nil || !strings.Contains(err.Error(), "not writable") || !strings.Contains(err.Error(), "read-only file system") {
		t.Errorf("open on a read-only mount: %v; want an error saying the file is not writable", err)
	}
}

// TestDiskFullSQLite fills a small file system under a running store:
// the write that does not fit fails with "unavailable: disk_full", nothing
// of it is kept, and reads go on.
func TestDiskFullSQLite(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mount(t, "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir)
	db, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "wf.db"), dbtest.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	owner := &worldforge.User{Name: "Writer"}
	if err := db.CreateUser(ctx, owner); err != nil {
		t.Fatal(err)
	}
	w := &worldforge.World{OwnerID: owner.ID, Name: "Full", JSON: []byte(`{}`)}
	if err := db.CreateWorld(ctx, w); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("a long chronicle of the realm; ", 2000) // ~60 KB
	var full error
	written := 0
	for i := 0; i < 200 && full == nil; i++ {
		p := &worldforge.WikiPage{WorldID: w.ID, Title: "Page", Body: body, Kind: worldforge.WikiKindLore, Audience: worldforge.AudienceGM}
		if err := db.CreateWikiPage(ctx, p, owner.ID); err != nil {
			full = err
			break
		}
		written++
	}
	if full == nil {
		t.Fatalf("wrote %d pages of 60 KB into 2 MiB without an error", written)
	}
	var e *worldforge.Error
	if !errors.As(full, &e) || e.Code != worldforge.EUnavailable || e.Detail != "disk_full" {
		t.Errorf("write on a full disk: %v; want unavailable: disk_full", full)
	}
	pages, err := dbtest.WikiPages(ctx, db, w.ID, "")
	if err != nil {
		t.Fatalf("read on a full disk: %v", err)
	}
	if len(pages) != written {
		t.Errorf("%d pages listed, %d written before the disk filled", len(pages), written)
	}
	t.Logf("%d pages written before: %v", written, full)
}
