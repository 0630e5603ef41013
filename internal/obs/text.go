package obs

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// NewTextHandler returns a slog.Handler whose output is byte for byte that
// of slog.NewTextHandler(w, opts), made cheaper for the common record: one
// without groups, whose attributes are strings, numbers, booleans,
// durations and times, from a handler without ReplaceAttr and AddSource.
// Such a record is appended to a pooled buffer by the handler itself; any
// other record, and every record of a handler with groups (WithGroup), with
// attributes of other kinds (WithAttrs) or with those options, is handled
// by a real slog.TextHandler built on the same writer and options.
//
// As slog's, each record is written whole, in one call to w.Write, and the
// writes of a handler and of all handlers derived from it (WithAttrs,
// WithGroup) never run concurrently, whichever of the two does the work.
func NewTextHandler(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	if opts == nil {
		opts = &slog.HandlerOptions{}
	}
	sh := &sharedText{w: w, level: opts.Level}
	return &textHandler{
		shared: sh,
		slow:   slog.NewTextHandler(lockedWriter{sh}, opts),
		fast:   opts.ReplaceAttr == nil && !opts.AddSource,
	}
}

// sharedText is the state common to a text handler and every handler
// derived from it.
type sharedText struct {
	mu    sync.Mutex // held for every write to w, the fast path's and slog's
	w     io.Writer
	level slog.Leveler // nil: slog.LevelInfo
	clock atomic.Pointer[timeCache]
}

// lockedWriter writes to the shared writer under the shared mutex: the
// fast path writes through it, and so does the slog.TextHandler that
// handles what the fast path does not.
type lockedWriter struct{ sh *sharedText }

func (l lockedWriter) Write(p []byte) (int, error) {
	l.sh.mu.Lock()
	defer l.sh.mu.Unlock()
	return l.sh.w.Write(p)
}

// textHandler is the handler NewTextHandler returns. slow is always the
// slog.TextHandler in the same state (the same WithAttrs and WithGroup
// calls made on it), so that any record can be handed to it.
type textHandler struct {
	shared *sharedText
	slow   slog.Handler
	// fast is whether the handler's state allows the fast path: no
	// ReplaceAttr, no AddSource, no group, and pre holds the
	// WithAttrs attributes, rendered.
	fast bool
	pre  []byte // " key=value" for each WithAttrs attribute
}

// Enabled reports whether level is at least the handler's minimum level, as
// slog's handlers do (the option's Leveler is asked each time).
func (h *textHandler) Enabled(_ context.Context, level slog.Level) bool {
	minLevel := slog.LevelInfo
	if h.shared.level != nil {
		minLevel = h.shared.level.Level()
	}
	return level >= minLevel
}

// WithAttrs returns a handler whose records carry attrs after h's own.
func (h *textHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h2 := &textHandler{shared: h.shared, slow: h.slow.WithAttrs(attrs), fast: h.fast}
	if h2.fast {
		pre := append([]byte(nil), h.pre...)
		for _, a := range attrs {
			var ok bool
			if pre, ok = h.shared.appendAttr(pre, a); !ok {
				h2.fast = false
				break
			}
		}
		if h2.fast {
			h2.pre = pre
		}
	}
	return h2
}

// WithGroup returns a handler whose later attributes are in group name.
// Its records are all handled by slog's handler.
func (h *textHandler) WithGroup(name string) slog.Handler {
	return &textHandler{shared: h.shared, slow: h.slow.WithGroup(name)}
}

var textBufPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 1024)
	return &b
}}

// maxPooledBuf is the capacity above which a buffer is not kept, as slog's
// own pool does (a huge record must not pin its memory).
const maxPooledBuf = 16 << 10

// Handle writes the record as one line of key=value pairs, exactly as
// slog's TextHandler would.
func (h *textHandler) Handle(ctx context.Context, r slog.Record) error {
	if !h.fast {
		return h.slow.Handle(ctx, r)
	}
	bp := textBufPool.Get().(*[]byte)
	buf := (*bp)[:0]
	if !r.Time.IsZero() {
		buf = append(buf, "time="...)
		buf = h.shared.appendTime(buf, r.Time)
		buf = append(buf, ' ')
	}
	buf = append(buf, "level="...)
	buf = appendTextString(buf, r.Level.String())
	buf = append(buf, " msg="...)
	buf = appendTextString(buf, r.Message)
	buf = append(buf, h.pre...)
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		buf, ok = h.shared.appendAttr(buf, a)
		return ok
	})
	if !ok {
		*bp = buf
		putTextBuf(bp)
		return h.slow.Handle(ctx, r)
	}
	buf = append(buf, '\n')
	_, err := lockedWriter{h.shared}.Write(buf)
	*bp = buf
	putTextBuf(bp)
	return err
}

func putTextBuf(bp *[]byte) {
	if cap(*bp) <= maxPooledBuf {
		textBufPool.Put(bp)
	}
}

// appendAttr appends " key=value" for a, whose key is not in a group, and
// reports whether it could: false for a value of a kind the fast path
// leaves to slog (Any, LogValuer, Group), in which case b is returned with
// something appended to it that the caller must drop.
func (sh *sharedText) appendAttr(b []byte, a slog.Attr) ([]byte, bool) {
	v := a.Value
	switch v.Kind() {
	case slog.KindString:
		b = appendTextKey(b, a.Key)
		return appendTextString(b, v.String()), true
	case slog.KindInt64:
		b = appendTextKey(b, a.Key)
		return strconv.AppendInt(b, v.Int64(), 10), true
	case slog.KindUint64:
		b = appendTextKey(b, a.Key)
		return strconv.AppendUint(b, v.Uint64(), 10), true
	case slog.KindFloat64:
		b = appendTextKey(b, a.Key)
		return strconv.AppendFloat(b, v.Float64(), 'g', -1, 64), true
	case slog.KindBool:
		b = appendTextKey(b, a.Key)
		return strconv.AppendBool(b, v.Bool()), true
	case slog.KindDuration:
		b = appendTextKey(b, a.Key)
		return append(b, v.Duration().String()...), true
	case slog.KindTime:
		b = appendTextKey(b, a.Key)
		return sh.appendTime(b, v.Time()), true
	}
	return b, false
}

func appendTextKey(b []byte, key string) []byte {
	b = append(b, ' ')
	b = appendTextString(b, key)
	return append(b, '=')
}

// appendTextString appends s, quoted with strconv.Quote's rules when slog's
// text handler would quote it.
func appendTextString(b []byte, s string) []byte {
	// One pass over s classifies it: the usual string is printable ASCII,
	// quoted at most for a space, '"' or '=', which needs no rune decoding.
	var class byte
	for i := 0; i < len(s); i++ {
		class |= asciiClass[s[i]]
	}
	switch {
	case class == 0 && len(s) > 0:
		return append(b, s...)
	case class <= classQuote:
		// Printable ASCII (or empty) that needs quotes: strconv.Quote's
		// output is s with '"' and '\\' escaped.
		b = append(b, '"')
		from := 0
		for i := 0; i < len(s); i++ {
			if c := s[i]; c == '"' || c == '\\' {
				b = append(b, s[from:i]...)
				b = append(b, '\\')
				from = i
			}
		}
		b = append(b, s[from:]...)
		return append(b, '"')
	case needsQuoting(s):
		return strconv.AppendQuote(b, s)
	default:
		return append(b, s...)
	}
}

// The classes of asciiClass.
const (
	classQuote = 1 << iota // printable ASCII that makes slog quote a string
	classOther             // a control character, DEL or a non-ASCII byte
)

// asciiClass holds each byte's class: 0 for printable ASCII that needs no
// quotes (a backslash among them), classQuote for space, '"' and '=', and
// classOther for the rest, which needsQuoting decides on.
var asciiClass = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case c < ' ' || c >= 0x7f:
			t[c] = classOther
		case c == ' ' || c == '"' || c == '=':
			t[c] = classQuote
		}
	}
	return t
}()

// needsQuoting is slog's rule: s is empty or has a control character,
// space, '"' or '=' (a backslash is fine, unlike in JSON), invalid UTF-8,
// a Unicode space or an unprintable rune.
func needsQuoting(s string) bool {
	if len(s) == 0 {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == '"' || c == '=' {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// timeCache is the formatted second of the last time the handler wrote:
// records come many to a second, and only their milliseconds differ.
type timeCache struct {
	sec  int64 // Unix seconds
	loc  *time.Location
	head []byte // "2006-01-02T15:04:05."
	zone []byte // "Z" or "-07:00"
}

// appendTime appends t as slog's text handler does: RFC 3339 with exactly
// three digits of milliseconds, truncated.
func (sh *sharedText) appendTime(b []byte, t time.Time) []byte {
	sec, loc := t.Unix(), t.Location()
	ms := t.Nanosecond() / 1e6
	if c := sh.clock.Load(); c != nil && c.sec == sec && c.loc == loc {
		b = append(b, c.head...)
		b = append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
		return append(b, c.zone...)
	}
	n := len(b)
	b = appendRFC3339Millis(b, t)
	// Cache the usual shape only: a four-digit year, then the fraction.
	const headLen = len("2006-01-02T15:04:05.")
	if f := b[n:]; len(f) > headLen+3 && f[4] == '-' && f[headLen-1] == '.' {
		sh.clock.Store(&timeCache{
			sec:  sec,
			loc:  loc,
			head: append([]byte(nil), f[:headLen]...),
			zone: append([]byte(nil), f[headLen+3:]...),
		})
	}
	return b
}

// appendRFC3339Millis is slog's time format, copied: RFC 3339 with the
// time truncated to the millisecond and exactly three digits of it.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	// Format according to time.RFC3339Nano since it is highly optimized,
	// but truncate it to use millisecond resolution.
	// Unfortunately, that format trims trailing 0s, so add 1/10 millisecond
	// to guarantee that there are exactly 4 digits after the period.
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	b = append(b[:n+prefixLen], b[n+prefixLen+1:]...) // drop the 4th digit
	return b
}
