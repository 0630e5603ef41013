package testserver

import (
	"context"
	"maps"
	"slices"
	"testing"
)

// Fingerprint digests every table of the server's store (see
// sqlstore.DB.Fingerprint).
func (s *Server) Fingerprint(t testing.TB) map[string]string {
	t.Helper()
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
