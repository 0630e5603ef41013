package httpapi

import (
	"hash/maphash"
	"sync/atomic"
)

// Bounds of the escaped texts the fast path keeps: texts shorter than
// escapeMemoMin cost little to escape; longer than escapeMemoMax are not
// kept; at most escapeMemoSlots are.
const (
	escapeMemoMin   = 512
	escapeMemoMax   = 16 << 10
	escapeMemoSlots = 64
)

// escapeMemo keeps the JSON escaping of texts a tool answers again and
// again (a read_world answer kept while its world does not change, a fixed
// payload), looked up by their content: a hash picks the slot, and the
// slot's text must equal the text byte for byte. Its answers are therefore
// exactly appendJSONText's, whoever made the text and however. A slot is
// replaced by the last text that hashed to it.
type escapeMemo struct {
	seed  maphash.Seed
	slots [escapeMemoSlots]atomic.Pointer[escapedText]
}

// escapedText is one kept escaping; never modified once kept.
type escapedText struct {
	text    string
	escaped []byte
}

func newEscapeMemo() *escapeMemo { return &escapeMemo{seed: maphash.MakeSeed()} }

// appendText appends text as appendJSONText does, from the memo when it
// holds text, else escaping it and keeping the result.
func (m *escapeMemo) appendText(dst []byte, text string) []byte {
	if len(text) < escapeMemoMin || len(text) > escapeMemoMax {
		return appendJSONText(dst, text)
	}
	slot := &m.slots[maphash.String(m.seed, text)%escapeMemoSlots]
	if e := slot.Load(); e != nil && e.text == text {
		return append(dst, e.escaped...)
	}
	start := len(dst)
	dst = appendJSONText(dst, text)
	slot.Store(&escapedText{text: text, escaped: append([]byte(nil), dst[start:]...)})
	return dst
}
