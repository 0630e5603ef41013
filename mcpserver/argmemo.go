package mcpserver

import (
	"encoding/json"
	"hash/maphash"
	"reflect"
	"sync/atomic"
)

// The argument memo.
//
// An agent polling a world sends the same read_world arguments, byte for
// byte, call after call, and decodeArgs spends about 2 µs on each (two
// encoding/json decodes and the schema check): as much as the store read
// the cached answer costs. What decodeArgs makes of a byte string depends
// on those bytes and the tool alone, so a read-only tool keeps the last
// arguments it decoded in a few slots and hands out a copy of the value
// when the same bytes come again. Only successful decodes are kept (a bad
// argument is checked, and refused, every time), only for argument types
// whose values can be copied without sharing anything (strings, numbers
// and booleans, in structs of those), and only for tools without an
// argument preparation.

// Memo limits: slots per tool, and the longest argument text kept.
const (
	argMemoSlots  = 64
	argMemoMaxLen = 256
)

// argMemo is a direct-mapped cache from argument text to decoded value:
// the slot is chosen by the text's hash and holds the last text decoded
// there. Reads take no lock; a miss replaces the slot.
type argMemo[In any] struct {
	seed  maphash.Seed
	slots [argMemoSlots]atomic.Pointer[argMemoEntry[In]]
}

type argMemoEntry[In any] struct {
	raw string
	in  In
}

// newArgMemo returns a memo for In, or nil when In's values cannot be
// copied safely (see memoizable).
func newArgMemo[In any]() *argMemo[In] {
	if !memoizable(reflect.TypeFor[In]()) {
		return nil
	}
	return &argMemo[In]{seed: maphash.MakeSeed()}
}

// memoizable reports whether a value of type t copied by assignment
// shares nothing with the original: booleans, numbers, strings (which are
// immutable) and arrays and structs of those.
func memoizable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	case reflect.Array:
		return memoizable(t.Elem())
	case reflect.Struct:
		for f := range t.Fields() {
			if !memoizable(f.Type) {
				return false
			}
		}
		return true
	}
	return false
}

func (m *argMemo[In]) slot(raw json.RawMessage) *atomic.Pointer[argMemoEntry[In]] {
	return &m.slots[maphash.Bytes(m.seed, raw)%argMemoSlots]
}

// get copies the value decoded from raw into dst and reports whether the
// memo had it.
func (m *argMemo[In]) get(raw json.RawMessage, dst *In) bool {
	if len(raw) > argMemoMaxLen {
		return false
	}
	e := m.slot(raw).Load()
	if e == nil || e.raw != string(raw) { // the conversion does not allocate
		return false
	}
	*dst = e.in
	return true
}

// put keeps in, decoded from raw without error.
func (m *argMemo[In]) put(raw json.RawMessage, in *In) {
	if len(raw) > argMemoMaxLen {
		return
	}
	m.slot(raw).Store(&argMemoEntry[In]{raw: string(raw), in: *in})
}
