package worldforge

// Quotas are the per-user limits a store enforces on what its users may
// keep: the effective owner of a write (a user's id, or an API key's
// owning user) is counted. A write that would go over one is refused with
// QuotaExceeded and changes nothing. A zero (or negative) field is no
// limit; the zero Quotas limits nothing.
//
// The counts:
//   - Worlds: worlds the user owns.
//   - Cells: grid cells (cols × rows) summed over the worlds the user owns;
//     a new world or a resize that would bring the sum over it is refused
//     (a resize that does not grow the world never is).
//   - LoreEntities: lore entities in one world (per world, not per user:
//     Worlds × LoreEntities bounds a user's lore). A write that adds
//     entities to a world and leaves it over the limit is refused; one
//     that only replaces or removes entities never is.
//   - PendingProposals: proposals the user has filed that are still
//     pending, over all worlds. It is counted per filer rather than per
//     world so that an agent flooding a review queue is stopped without
//     locking the world's other GMs out of proposing.
//   - Keys: API keys of the user that are not revoked (rate limits are per
//     credential, so keys would multiply them).
type Quotas struct {
	Worlds           int64
	Cells            int64
	LoreEntities     int64
	PendingProposals int64
	Keys             int64
}

// The default quotas (worldforge serve's --quota-* flags).
const (
	DefaultQuotaWorlds           = 100
	DefaultQuotaCells            = 4 * 4096 * 4096 // four worlds at the size cap
	DefaultQuotaLoreEntities     = 10000
	DefaultQuotaPendingProposals = 1000
	DefaultQuotaKeys             = 100
)

// DefaultQuotas returns the default quotas.
func DefaultQuotas() Quotas {
	return Quotas{
		Worlds:           DefaultQuotaWorlds,
		Cells:            DefaultQuotaCells,
		LoreEntities:     DefaultQuotaLoreEntities,
		PendingProposals: DefaultQuotaPendingProposals,
		Keys:             DefaultQuotaKeys,
	}
}

// What a quota_exceeded error names: its detail.
const (
	QuotaWorlds           = "worlds"
	QuotaCells            = "cells"
	QuotaLoreEntities     = "lore_entities"
	QuotaPendingProposals = "pending_proposals"
	QuotaKeys             = "keys"
)

// QuotaExceeded returns the quota_exceeded error naming the quota (one of
// QuotaWorlds, QuotaCells, …); its text is "quota_exceeded: <what>".
func QuotaExceeded(what string) *Error {
	return &Error{Code: EQuotaExceeded, Detail: what}
}
