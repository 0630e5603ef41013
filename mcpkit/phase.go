package mcpkit

import "sync"

// Phase is where a client is in its life.
//
//	idle → connecting → ready → closing → closed
//	             ↘        ↘
//	              faulted ← (a failed connect, or a server that died)
//
// A faulted client can connect again (by hand, or by its reconnect
// policy); a closed one cannot.
type Phase string

// The phases.
const (
	PhaseIdle       Phase = "idle"
	PhaseConnecting Phase = "connecting"
	PhaseReady      Phase = "ready"
	PhaseClosing    Phase = "closing"
	PhaseClosed     Phase = "closed"
	PhaseFaulted    Phase = "faulted"
)

// Usable reports whether calls can be made (ready only).
func (p Phase) Usable() bool { return p == PhaseReady }

// Terminal reports whether the phase is an end: closed only. A faulted
// client is not at an end, as it can connect again (Connect, Fleet.Start,
// or its ReconnectPolicy); the interop original counts faulted as
// terminal, which would make a host give up on a server that comes back.
func (p Phase) Terminal() bool { return p == PhaseClosed }

// setPhaseLocked moves to phase p and queues the change for OnPhase.
func (c *Client) setPhaseLocked(p Phase, err error) {
	if c.phase == p {
		return
	}
	ev := PhaseChange{Server: c.cfg.Name, From: c.phase, To: p, Err: err}
	c.phase = p
	c.events.push(ev)
}

// phaseChanged tells OnPhase and the watchers (a bridge's of every
// change, a gateway's that the client is ready again).
func (c *Client) phaseChanged(ev PhaseChange) {
	if c.opts.OnPhase != nil {
		c.opts.OnPhase(ev)
	}
	c.watchers.each(func(w *clientWatcher) {
		if w.phase != nil {
			w.phase(ev)
		}
		if ev.To == PhaseReady && w.ready != nil {
			w.ready(c.cfg.Name)
		}
	})
}

// phaseQueue delivers phase changes to fn in order, on a goroutine that
// runs only while there is something to deliver.
type phaseQueue struct {
	fn      func(PhaseChange)
	mu      sync.Mutex
	q       []PhaseChange
	running bool
}

func (pq *phaseQueue) push(ev PhaseChange) {
	if pq.fn == nil {
		return
	}
	pq.mu.Lock()
	pq.q = append(pq.q, ev)
	if !pq.running {
		pq.running = true
		go pq.run()
	}
	pq.mu.Unlock()
}

func (pq *phaseQueue) run() {
	for {
		pq.mu.Lock()
		if len(pq.q) == 0 {
			pq.running = false
			pq.mu.Unlock()
			return
		}
		ev := pq.q[0]
		pq.q = pq.q[1:]
		pq.mu.Unlock()
		pq.fn(ev)
	}
}
