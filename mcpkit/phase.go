package mcpkit

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

// Terminal reports whether the phase is an end (closed or faulted).
func (p Phase) Terminal() bool { return p == PhaseClosed || p == PhaseFaulted }
