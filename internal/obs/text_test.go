package obs

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// handlerPair is the same handler state twice: slog's TextHandler writing
// to ref and ours writing to got.
type handlerPair struct {
	ref, got slog.Handler
}

type outputs struct{ ref, got bytes.Buffer }

func newPair(o *outputs, opts *slog.HandlerOptions) handlerPair {
	return handlerPair{ref: slog.NewTextHandler(&o.ref, opts), got: NewTextHandler(&o.got, opts)}
}

func (p handlerPair) withAttrs(as []slog.Attr) handlerPair {
	// A handler owns the slice it is given: each gets its own.
	return handlerPair{ref: p.ref.WithAttrs(slices.Clone(as)), got: p.got.WithAttrs(slices.Clone(as))}
}

func (p handlerPair) withGroup(name string) handlerPair {
	return handlerPair{ref: p.ref.WithGroup(name), got: p.got.WithGroup(name)}
}

// check handles r with both handlers (if enabled) and fails unless both
// agree on Enabled, on the error and on every byte written.
func (p handlerPair) check(t *testing.T, o *outputs, r slog.Record) {
	t.Helper()
	ctx := context.Background()
	re, ge := p.ref.Enabled(ctx, r.Level), p.got.Enabled(ctx, r.Level)
	if re != ge {
		t.Fatalf("Enabled(%v) = %v, slog's = %v", r.Level, ge, re)
	}
	if !re {
		return
	}
	rerr, gerr := p.ref.Handle(ctx, r), p.got.Handle(ctx, r)
	if (rerr == nil) != (gerr == nil) {
		t.Fatalf("Handle error = %v, slog's = %v", gerr, rerr)
	}
	if !bytes.Equal(o.ref.Bytes(), o.got.Bytes()) {
		t.Fatalf("output differs from slog's:\n got %q\nwant %q", o.got.String(), o.ref.String())
	}
}

// The request line's shape, as httpapi logs it.
func requestAttrs() []slog.Attr {
	return []slog.Attr{
		slog.String("request_id", "0f3c2a9e-41d7-4b6e-9a52-1c8d7e6f5a43"),
		slog.String("method", "POST"),
		slog.String("route", "POST /mcp"),
		slog.String("path", "/mcp"),
		slog.String("mcp_path", "fast"),
		slog.String("tool", "get_world"),
		slog.String("user_id", "u_9b1f"),
		slog.String("key_id", "k_77aa"),
		slog.Int("status", 200),
		slog.Float64("duration_ms", 0.412),
	}
}

type valuer struct{ v slog.Value }

func (v valuer) LogValue() slog.Value { return v.v }

type marshaler struct{ s string }

func (m marshaler) MarshalText() ([]byte, error) {
	if m.s == "fail" {
		return nil, errors.New("no text")
	}
	return []byte(m.s), nil
}

type nilErr struct{ msg string }

func (e *nilErr) Error() string { return e.msg } // panics on a nil *nilErr

func TestTextHandlerTable(t *testing.T) {
	now := time.Date(2026, 12, 3, 13, 34, 58, 123456789, time.UTC)
	east := time.FixedZone("E", 5*3600+30*60)
	odd := time.FixedZone("S", -(3*3600 + 25*60 + 17)) // an offset with seconds
	var lv slog.LevelVar
	lv.Set(slog.LevelWarn)
	drop := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "drop" || a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	tests := []struct {
		name  string
		opts  *slog.HandlerOptions
		chain func(handlerPair) handlerPair
		rec   func() slog.Record
	}{
		{name: "request line", rec: func() slog.Record {
			r := slog.NewRecord(now, slog.LevelInfo, "request", 0)
			r.AddAttrs(requestAttrs()...)
			return r
		}},
		{name: "zero time, no attrs", rec: func() slog.Record { return slog.NewRecord(time.Time{}, slog.LevelInfo, "m", 0) }},
		{name: "odd levels", opts: &slog.HandlerOptions{Level: slog.LevelDebug - 3}, rec: func() slog.Record {
			return slog.NewRecord(now, slog.LevelInfo+2, "x", 0)
		}},
		{name: "level below debug", opts: &slog.HandlerOptions{Level: slog.Level(-100)}, rec: func() slog.Record {
			return slog.NewRecord(now, slog.LevelDebug-2, "x", 0)
		}},
		{name: "error+5", rec: func() slog.Record { return slog.NewRecord(now, slog.LevelError+5, "x", 0) }},
		{name: "quoting", rec: func() slog.Record {
			r := slog.NewRecord(now.In(east), slog.LevelWarn, "a message with spaces", 0)
			r.AddAttrs(slog.String("", ""), slog.String("k k", "v=v"), slog.String(`q"`, `"`),
				slog.String("bs", `a\b`), slog.String("ctl", "a\x00b\x7f"), slog.String("nl", "a\nb"),
				slog.String("nbsp", "a\u00a0b"), slog.String("zw", "a\u200bb"), slog.String("bad", "a\xffb"),
				slog.String("rerr", "\ufffd"), slog.String("ok", "日本/é-_.:+@"), slog.String("emoji", "\U0001F600"))
			return r
		}},
		{name: "numbers", rec: func() slog.Record {
			r := slog.NewRecord(now.In(odd), slog.LevelInfo, "", 0)
			r.AddAttrs(slog.Int64("i", math.MinInt64), slog.Uint64("u", math.MaxUint64),
				slog.Float64("nan", math.NaN()), slog.Float64("inf", math.Inf(1)), slog.Float64("ninf", math.Inf(-1)),
				slog.Float64("nz", math.Copysign(0, -1)), slog.Float64("big", 1e21), slog.Float64("small", 1e-7),
				slog.Float64("d", 5e-324), slog.Bool("t", true), slog.Bool("f", false),
				slog.Duration("dur", 1500*time.Millisecond), slog.Duration("neg", -time.Nanosecond))
			return r
		}},
		{name: "times", rec: func() slog.Record {
			r := slog.NewRecord(time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), slog.LevelInfo, "m", 0)
			r.AddAttrs(slog.Time("zero", time.Time{}), slog.Time("far", time.Date(12345, 6, 7, 8, 9, 10, 999999999, east)),
				slog.Time("now", time.Now()), slog.Time("ms", now.Truncate(time.Millisecond)))
			return r
		}},
		{name: "year 0", rec: func() slog.Record {
			r := slog.NewRecord(time.Date(0, 6, 1, 12, 0, 0, 987654321, east), slog.LevelInfo, "m", 0)
			r.AddAttrs(slog.Time("y0", time.Date(0, 1, 1, 0, 0, 0, 1, time.UTC)), slog.Time("y9999", time.Date(9999, 12, 31, 23, 59, 59, 999999999, odd)))
			return r
		}},
		{name: "any kinds delegated", rec: func() slog.Record {
			r := slog.NewRecord(now, slog.LevelInfo, "m", 0)
			r.AddAttrs(slog.String("first", "fast"), slog.Any("err", errors.New("boom here")),
				slog.Any("nilerr", (*nilErr)(nil)), slog.Any("tm", marshaler{"a b"}), slog.Any("tmfail", marshaler{"fail"}),
				slog.Any("bytes", []byte("hi\x00")), slog.Any("nil", nil), slog.Attr{}, slog.Any("st", struct{ A int }{3}),
				slog.Any("lv", valuer{slog.IntValue(7)}), slog.Group("g", slog.Int("a", 1), slog.Group("h", slog.String("b", "x y"))),
				slog.Group("", slog.Int("inl", 1)), slog.Any("lvg", valuer{slog.GroupValue(slog.Int("c", 2))}))
			return r
		}},
		{name: "with attrs rendered", chain: func(p handlerPair) handlerPair {
			return p.withAttrs([]slog.Attr{slog.String("svc", "world forge"), slog.Int("pid", 42)}).withAttrs(nil).
				withAttrs([]slog.Attr{slog.Time("t", now)})
		}, rec: func() slog.Record {
			r := slog.NewRecord(now, slog.LevelInfo, "m", 0)
			r.AddAttrs(slog.Bool("b", true))
			return r
		}},
		{name: "with attrs delegated", chain: func(p handlerPair) handlerPair {
			return p.withAttrs([]slog.Attr{slog.Group("g", slog.Int("a", 1)), slog.Group("empty")})
		}, rec: func() slog.Record { return slog.NewRecord(now, slog.LevelInfo, "m", 0) }},
		{name: "with group", chain: func(p handlerPair) handlerPair {
			return p.withGroup("g").withAttrs([]slog.Attr{slog.Int("a", 1)}).withGroup("h i").withGroup("")
		}, rec: func() slog.Record {
			r := slog.NewRecord(now, slog.LevelInfo, "m", 0)
			r.AddAttrs(slog.String("k", "v"))
			return r
		}},
		{name: "replace attr", opts: &slog.HandlerOptions{ReplaceAttr: drop}, rec: func() slog.Record {
			r := slog.NewRecord(now, slog.LevelInfo, "m", 0)
			r.AddAttrs(slog.String("drop", "x"), slog.String("keep", "y"))
			return r
		}},
		{name: "add source", opts: &slog.HandlerOptions{AddSource: true}, rec: func() slog.Record {
			var pcs [1]uintptr
			runtime.Callers(1, pcs[:])
			return slog.NewRecord(now, slog.LevelInfo, "m", pcs[0])
		}},
		{name: "add source, no pc", opts: &slog.HandlerOptions{AddSource: true}, rec: func() slog.Record {
			return slog.NewRecord(now, slog.LevelInfo, "m", 0)
		}},
		{name: "level var", opts: &slog.HandlerOptions{Level: &lv}, rec: func() slog.Record {
			return slog.NewRecord(now, slog.LevelWarn, "m", 0)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o outputs
			p := newPair(&o, tt.opts)
			if tt.chain != nil {
				p = tt.chain(p)
			}
			r := tt.rec()
			p.check(t, &o, r)
			p.check(t, &o, r) // the time cache's hit, after its miss
			if o.got.Len() == 0 && tt.name != "level var" {
				t.Error("nothing written")
			}
		})
	}
}

func TestTextHandlerLevelVar(t *testing.T) {
	var lv slog.LevelVar
	h := NewTextHandler(io.Discard, &slog.HandlerOptions{Level: &lv})
	ctx := context.Background()
	if h.Enabled(ctx, slog.LevelDebug) || !h.Enabled(ctx, slog.LevelInfo) {
		t.Error("at Info: wrong Enabled")
	}
	lv.Set(slog.LevelError)
	if h.Enabled(ctx, slog.LevelWarn) || !h.WithGroup("g").Enabled(ctx, slog.LevelError) {
		t.Error("at Error: wrong Enabled")
	}
	if NewTextHandler(io.Discard, nil).Enabled(ctx, slog.LevelDebug) {
		t.Error("no options: Debug enabled")
	}
}

// TestTextHandlerFastState checks which handler states take the fast path.
func TestTextHandlerFastState(t *testing.T) {
	fast := func(h slog.Handler) bool { return h.(*textHandler).fast }
	h := NewTextHandler(io.Discard, nil)
	if !fast(h) || !fast(h.WithAttrs([]slog.Attr{slog.String("a", "b"), slog.Duration("d", 1)})) {
		t.Error("plain handler or one with simple attrs is slow")
	}
	if fast(h.WithGroup("g")) || fast(h.WithAttrs([]slog.Attr{slog.Any("e", errors.New("x"))})) ||
		fast(NewTextHandler(io.Discard, &slog.HandlerOptions{AddSource: true})) ||
		fast(NewTextHandler(io.Discard, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr { return a }})) {
		t.Error("a handler state the fast path cannot render is fast")
	}
}

func TestTextHandlerAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	h := NewTextHandler(io.Discard, nil)
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	r.AddAttrs(requestAttrs()...)
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { _ = h.Handle(ctx, r) }); n != 0 {
		t.Errorf("the request line allocates %v times", n)
	}
}

// unsyncWriter is a writer that must not be written concurrently: the race
// detector reports it if two writes overlap.
type unsyncWriter struct {
	b      []byte
	writes int
}

func (w *unsyncWriter) Write(p []byte) (int, error) {
	w.writes++
	w.b = append(w.b, p...)
	return len(p), nil
}

// TestTextHandlerConcurrent logs from many goroutines through handlers that
// take the fast path and handlers that delegate to slog, all derived from
// one handler on one unsynchronized writer: every line must come out whole,
// one write each.
func TestTextHandlerConcurrent(t *testing.T) {
	var w unsyncWriter
	now := time.Date(2026, 12, 3, 13, 34, 58, 0, time.UTC)
	root := NewTextHandler(&w, nil)
	handlers := []slog.Handler{
		root,
		root.WithAttrs([]slog.Attr{slog.String("svc", "wf")}),
		root.WithGroup("g"),
		root.WithAttrs([]slog.Attr{slog.Any("e", errors.New("x"))}),
	}
	const goroutines, each = 8, 200
	record := func(g, i int) slog.Record {
		r := slog.NewRecord(now.Add(time.Duration(i)*time.Millisecond), slog.LevelInfo, fmt.Sprintf("g%d-%d", g, i), 0)
		r.AddAttrs(requestAttrs()...)
		if i%3 == 0 {
			r.AddAttrs(slog.Any("err", errors.New("a slow one")))
		}
		return r
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			h := handlers[g%len(handlers)]
			for i := range each {
				_ = h.Handle(context.Background(), record(g, i))
			}
		})
	}
	wg.Wait()

	var want []string
	var ref bytes.Buffer
	refRoot := slog.NewTextHandler(&ref, nil)
	refs := []slog.Handler{
		refRoot,
		refRoot.WithAttrs([]slog.Attr{slog.String("svc", "wf")}),
		refRoot.WithGroup("g"),
		refRoot.WithAttrs([]slog.Attr{slog.Any("e", errors.New("x"))}),
	}
	for g := range goroutines {
		for i := range each {
			ref.Reset()
			_ = refs[g%len(refs)].Handle(context.Background(), record(g, i))
			want = append(want, ref.String())
		}
	}
	got := strings.SplitAfter(string(w.b), "\n")
	if got[len(got)-1] == "" {
		got = got[:len(got)-1]
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("the lines differ from slog's: %d lines, want %d", len(got), len(want))
	}
	if w.writes != goroutines*each {
		t.Errorf("%d writes for %d records", w.writes, goroutines*each)
	}
}

// gen turns fuzz input into handler options, chains and records.
type gen struct{ data []byte }

func (g *gen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

func (g *gen) uint64() uint64 {
	var b [8]byte
	n := copy(b[:], g.data)
	g.data = g.data[n:]
	return binary.LittleEndian.Uint64(b[:])
}

var fuzzStrings = []string{
	"", " ", "a b", `"`, "=", "a=b", `\`, "\x00", "\x7f", "é", "\u00a0", "\u2028", "\u0085",
	"\xff", "a\xc3", "\u200b", "\ufffd", "日本", "tab\t", "nl\n", "request", "INFO", "/mcp",
	"\U0001F600", "time", "level", "msg", "source", "drop", "g", ".", "0.5", "-", "\x1b[31m",
}

func (g *gen) str() string {
	if g.byte()%3 == 0 {
		n := min(int(g.byte()%24), len(g.data))
		s := string(g.data[:n])
		g.data = g.data[n:]
		return s
	}
	return fuzzStrings[int(g.byte())%len(fuzzStrings)]
}

var fuzzLocs = []*time.Location{
	time.UTC, time.Local, time.FixedZone("P", 5*3600+45*60), time.FixedZone("N", -(9*3600 + 30*60 + 7)),
	time.FixedZone("Z", 0), time.FixedZone("B", 30*3600),
}

var fuzzNow = time.Now()

func (g *gen) time() time.Time {
	loc := fuzzLocs[int(g.byte())%len(fuzzLocs)]
	switch g.byte() % 5 {
	case 0:
		return time.Time{}
	case 1:
		return time.Unix(int64(g.uint64())>>(g.byte()%64), int64(g.uint64()%1e9)).In(loc)
	case 2:
		return fuzzNow // with a monotonic reading
	default: // around now: the time cache's hits and misses
		return time.Date(2026, 12, 3, 13, 34, 58, 0, loc).Add(time.Duration(g.uint64() % uint64(3*time.Second)))
	}
}

var fuzzFloats = []float64{
	math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 1, 0.412, 1e21, 1e20, 1e-7, 1e-4,
	5e-324, math.MaxFloat64, -123.456,
}

func (g *gen) value(depth int) slog.Value {
	switch k := g.byte() % 16; {
	case k < 4:
		return slog.StringValue(g.str())
	case k == 4:
		return slog.Int64Value(int64(g.uint64()))
	case k == 5:
		return slog.Uint64Value(g.uint64())
	case k == 6:
		if g.byte()%2 == 0 {
			return slog.Float64Value(fuzzFloats[int(g.byte())%len(fuzzFloats)])
		}
		return slog.Float64Value(math.Float64frombits(g.uint64()))
	case k == 7:
		return slog.BoolValue(g.byte()%2 == 0)
	case k == 8:
		return slog.DurationValue(time.Duration(g.uint64()))
	case k == 9:
		return slog.TimeValue(g.time())
	case k == 10 && depth < 3:
		return slog.GroupValue(g.attrs(depth + 1)...)
	case k == 11 && depth < 3:
		return slog.AnyValue(valuer{g.value(depth + 1)})
	case k == 12:
		return slog.AnyValue(errors.New(g.str()))
	case k == 13:
		switch g.byte() % 6 {
		case 0:
			return slog.AnyValue(nil)
		case 1:
			return slog.AnyValue([]byte(g.str()))
		case 2:
			return slog.AnyValue(marshaler{g.str()})
		case 3:
			return slog.AnyValue((*nilErr)(nil))
		case 4:
			return slog.AnyValue(struct {
				S string
				N int
			}{g.str(), int(g.byte())})
		default:
			return slog.AnyValue(slog.LevelWarn)
		}
	default:
		return slog.StringValue(g.str())
	}
}

func (g *gen) attr(depth int) slog.Attr {
	if g.byte()%32 == 0 {
		return slog.Attr{}
	}
	return slog.Attr{Key: g.str(), Value: g.value(depth)}
}

func (g *gen) attrs(depth int) []slog.Attr {
	as := make([]slog.Attr, int(g.byte()%8))
	for i := range as {
		as[i] = g.attr(depth)
	}
	return as
}

func (g *gen) level() slog.Level {
	if b := g.byte(); b%4 != 0 {
		return slog.Level(int(b%4-1) * 4) // Info, Warn, Error
	}
	return slog.Level(int8(g.byte()))
}

// replaceAttrs are ReplaceAttr functions for the fuzz test: deterministic,
// dropping, renaming and retyping attributes, built-ins included.
var replaceAttrs = []func([]string, slog.Attr) slog.Attr{
	func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "drop" || a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	},
	func(gs []string, a slog.Attr) slog.Attr {
		return slog.String(strings.Join(gs, "/")+strings.ToUpper(a.Key), a.Value.String())
	},
	func(_ []string, a slog.Attr) slog.Attr {
		// Not for the group's own "s", which would recurse without end.
		if a.Value.Kind() == slog.KindString && a.Key != "s" {
			return slog.Any(a.Key, valuer{slog.GroupValue(slog.String("s", a.Value.String()))})
		}
		return a
	},
}

// FuzzTextHandler compares NewTextHandler with slog.NewTextHandler byte for
// byte on handler options, WithAttrs and WithGroup chains and records built
// from the input.
func FuzzTextHandler(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x02\x02\x02\x01\x00request\x00\x00\x00"))
	f.Add(bytes.Repeat([]byte{2, 1, 3, 0, 7, 2, 3, 9, 1}, 20))
	f.Add([]byte{1, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte{0x55, 0x13, 0, 0x40, 0x22, 0x2a, 0x10, 0, 0x0a, 0x0b, 0x0c, 0x0d, 0xff, 0xfe, 0x80})
	var pcs [1]uintptr
	runtime.Callers(1, pcs[:])
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{data: data}
		opts := &slog.HandlerOptions{}
		var lv *slog.LevelVar
		switch g.byte() % 4 {
		case 1:
			opts.Level = g.level()
		case 2:
			lv = new(slog.LevelVar)
			lv.Set(g.level())
			opts.Level = lv
		}
		if b := g.byte(); b%8 == 1 {
			opts.ReplaceAttr = replaceAttrs[int(b/8)%len(replaceAttrs)]
		}
		opts.AddSource = g.byte()%8 == 1
		var o outputs
		pairs := []handlerPair{newPair(&o, opts)}
		for n := 0; n < 12 && len(g.data) > 0; n++ {
			p := pairs[int(g.byte())%len(pairs)]
			switch g.byte() % 8 {
			case 0:
				pairs = append(pairs, p.withAttrs(g.attrs(0)))
			case 1:
				pairs = append(pairs, p.withGroup(g.str()))
			case 2:
				if lv != nil {
					lv.Set(g.level())
				}
			default:
				var pc uintptr
				if g.byte()%4 == 0 {
					pc = pcs[0]
				}
				r := slog.NewRecord(g.time(), g.level(), g.str(), pc)
				r.AddAttrs(g.attrs(0)...)
				if g.byte()%2 == 0 {
					r.AddAttrs(g.attrs(0)...) // past the record's inline attrs
				}
				p.check(t, &o, r)
			}
		}
	})
}

func BenchmarkTextHandler(b *testing.B) {
	for _, bc := range []struct {
		name string
		h    slog.Handler
	}{
		{"slog", slog.NewTextHandler(io.Discard, nil)},
		{"obs", NewTextHandler(io.Discard, nil)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			start := time.Now()
			r := slog.NewRecord(start, slog.LevelInfo, "request", 0)
			r.AddAttrs(requestAttrs()...)
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				// Requests a few microseconds apart: the time's second
				// changes now and then, as under load.
				r.Time = start.Add(time.Duration(i) * 37 * time.Microsecond)
				_ = bc.h.Handle(ctx, r)
			}
		})
	}
}
