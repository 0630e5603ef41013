package sqlstore_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
)

// BenchmarkAppendAudit appends from parallel callers on SQLite; the group
// commit shares each transaction between the callers waiting on it.
func BenchmarkAppendAudit(b *testing.B) {
	db := dbtest.Open(b)
	ctx := b.Context()
	b.SetParallelism(8) // 8×GOMAXPROCS concurrent callers, as many requests would be
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e := &worldforge.AuditEntry{ActorID: "user_bench", Tool: "read_world", TargetType: "world",
				TargetID: "world_bench", WorldID: "world_bench", Outcome: "ok"}
			if err := db.AppendAudit(ctx, e); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	batches, rows := db.AuditStatsForTest()
	if batches > 0 {
		b.ReportMetric(float64(rows)/float64(batches), "rows/commit")
	}
}

// BenchmarkFindWorldByID reads one world by id on SQLite, serially and from
// parallel callers on the reader pool.
func BenchmarkFindWorldByID(b *testing.B) {
	db := dbtest.Open(b)
	ctx := b.Context()
	u := &worldforge.User{Name: "bench"}
	if err := db.CreateUser(ctx, u); err != nil {
		b.Fatal(err)
	}
	w := &worldforge.World{OwnerID: u.ID, Name: "bench", Cols: 64, Rows: 48, JSON: []byte(`{"grid":[]}`)}
	if err := db.CreateWorld(ctx, w); err != nil {
		b.Fatal(err)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := dbtest.World(ctx, db, w.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := dbtest.World(ctx, db, w.ID); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkAppendAuditSerial is one caller at a time: the cost of a commit
// that no other caller shares.
func BenchmarkAppendAuditSerial(b *testing.B) {
	db := dbtest.Open(b)
	ctx := b.Context()
	for b.Loop() {
		e := &worldforge.AuditEntry{ActorID: "user_bench", Tool: "read_world", TargetType: "world",
			TargetID: "world_bench", WorldID: "world_bench", Outcome: "ok"}
		if err := db.AppendAudit(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadWorldSince checks a kept answer of read_world from 64
// parallel callers (the stamp read, shared between callers asking at the
// same time), against reading the world whole, on SQLite; cpu-ns/op is the
// process's CPU time per call.
func BenchmarkReadWorldSince(b *testing.B) {
	db := dbtest.Open(b)
	ctx := b.Context()
	u := &worldforge.User{Name: "bench"}
	if err := db.CreateUser(ctx, u); err != nil {
		b.Fatal(err)
	}
	w := &worldforge.World{OwnerID: u.ID, Name: "bench", Cols: 64, Rows: 48, JSON: []byte(`{"grid":[]}`)}
	if err := db.CreateWorld(ctx, w); err != nil {
		b.Fatal(err)
	}
	_, _, _, stamp, err := db.ReadWorldSince(ctx, w.ID, 0)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		stamp int64
	}{{"kept", stamp}, {"whole", 0}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(32)
			start := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, _, _, _, err := db.ReadWorldSince(ctx, w.ID, c.stamp); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
