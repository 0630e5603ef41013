package mcpserver

import (
	"sync"
)

// Bounds of the kept read_world answers: one answer's size (larger worlds
// are rendered on every read), their number and their total size.
const (
	maxKeptWorldAnswer = 1 << 20
	maxKeptWorlds      = 4096
	maxKeptWorldsBytes = 8 << 20
)

// worldAnswers keeps read_world's rendered answers, each with the store's
// stamp of the state it shows and the world's owner then. A kept answer is
// sent only after the store confirms, in the call, that the world is
// still at that stamp (ReadWorldSince): the store gives a world a new
// stamp in every transaction that changes it, whichever process writes, so
// a kept answer is never older than the world. Keeping one saves reading
// the world and rendering it, not the call's checks or audit row.
type worldAnswers struct {
	mu    sync.Mutex
	byID  map[string]*worldAnswer
	bytes int
}

// worldAnswer is one kept answer.
type worldAnswer struct {
	stamp int64
	owner string
	text  keptText
}

// keptText is a tool's result text, already rendered, that outcome sends
// as it is (a string: no copy per call).
type keptText string

// get returns the answer kept for the world, or nil.
func (k *worldAnswers) get(id string) *worldAnswer {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.byID[id]
}

// put keeps a for the world, in place of an earlier answer, dropping
// others (any) while over the bounds. An answer over maxKeptWorldAnswer
// is not kept, and drops the earlier one.
func (k *worldAnswers) put(id string, a *worldAnswer) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if old, ok := k.byID[id]; ok {
		k.bytes -= len(old.text)
		delete(k.byID, id)
	}
	if len(a.text) > maxKeptWorldAnswer || a.stamp <= 0 {
		return
	}
	if k.byID == nil {
		k.byID = make(map[string]*worldAnswer)
	}
	for other, o := range k.byID {
		if len(k.byID) < maxKeptWorlds && k.bytes+len(a.text) <= maxKeptWorldsBytes {
			break
		}
		k.bytes -= len(o.text)
		delete(k.byID, other)
	}
	k.byID[id] = a
	k.bytes += len(a.text)
}

// drop forgets the world's answer.
func (k *worldAnswers) drop(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if old, ok := k.byID[id]; ok {
		k.bytes -= len(old.text)
		delete(k.byID, id)
	}
}
