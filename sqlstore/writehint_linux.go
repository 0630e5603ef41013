package sqlstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
)

// sqliteWriteHint explains the usual cause when a SQLite file cannot be
// opened for writing: the file, or the directory where SQLite keeps its
// -wal and -shm files, is read-only (a read-only mount, permissions, an
// immutable file), or the disk is full. It returns "" when it finds
// nothing of the kind.
func sqliteWriteHint(path string) string {
	dir := filepath.Dir(path)
	for _, p := range []string{path, dir} {
		const wOK = 2
		if err := syscall.Access(p, wOK); err != nil && !errors.Is(err, syscall.ENOENT) {
			return fmt.Sprintf(" (%s is not writable: %v; the store writes the database file and the -wal and -shm files beside it)", p, err)
		}
	}
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) == nil && st.Bavail == 0 {
		return fmt.Sprintf(" (the file system of %s is full)", dir)
	}
	return ""
}
