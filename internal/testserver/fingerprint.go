package testserver

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"testing"
)

// Fingerprint summarises everything the server's store holds, so that two
// fingerprints differ when anything was written in between: on SQLite the
// writer connection's change count (cheap), on PostgreSQL a digest of
// every table (see sqlstore.DB.Fingerprint).
func (s *Server) Fingerprint(t testing.TB) map[string]string {
	t.Helper()
	if n, ok, err := s.DB.TotalChanges(context.Background()); ok {
		if err != nil {
			t.Fatalf("fingerprint: %v", err)
		}
		return map[string]string{"rows written": strconv.FormatInt(n, 10)}
	}
	fp, err := s.DB.Fingerprint(context.Background())
	if err != nil {
		t.Fatalf("fingerprint: %v", err)
	}
	return fp
}

// Changed lists the tables whose digest differs between two fingerprints.
func Changed(before, after map[string]string) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(after)) {
		if before[name] != after[name] {
			out = append(out, name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			out = append(out, name)
		}
	}
	return out
}
