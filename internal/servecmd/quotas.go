package servecmd

import (
	"flag"
	"github.com/worldforge-go/worldforge/internal/cli"
	"log/slog"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// quotaFlags are serve's per-user quota flags (worldforge.Quotas).
type quotaFlags struct {
	on                                 *bool
	worlds, cells, lore, pending, keys *int64
	names                              []string
	values                             []*int64
}

func addQuotaFlags(fs *flag.FlagSet) *quotaFlags {
	d := worldforge.DefaultQuotas()
	f := &quotaFlags{
		on:      fs.Bool("quotas", true, "enforce the per-user --quota-* limits (false: none of them, for a server whose users are all trusted)"),
		worlds:  fs.Int64("quota-worlds", d.Worlds, "worlds one user may own (0 = unlimited; beyond: quota_exceeded: worlds)"),
		cells:   fs.Int64("quota-cells", d.Cells, "grid cells (cols×rows) summed over the worlds one user owns; creates and growing resizes beyond are refused (0 = unlimited; quota_exceeded: cells)"),
		lore:    fs.Int64("quota-lore-entities", d.LoreEntities, "lore entities one world may hold; a write adding entities beyond is refused (0 = unlimited; quota_exceeded: lore_entities)"),
		pending: fs.Int64("quota-pending-proposals", d.PendingProposals, "proposals one user may have pending, over all worlds (0 = unlimited; quota_exceeded: pending_proposals)"),
		keys:    fs.Int64("quota-keys", d.Keys, "unrevoked API keys one user may have (0 = unlimited; quota_exceeded: keys)"),
	}
	f.names = []string{"quota-worlds", "quota-cells", "quota-lore-entities", "quota-pending-proposals", "quota-keys"}
	f.values = []*int64{f.worlds, f.cells, f.lore, f.pending, f.keys}
	return f
}

// resolve checks the quota flags and returns the quotas to enforce.
func (f *quotaFlags) resolve() (worldforge.Quotas, error) {
	for i, v := range f.values {
		if *v < 0 {
			return worldforge.Quotas{}, cli.UsageErrorf("serve: --%s %d: want 0 (unlimited) or more", f.names[i], *v)
		}
	}
	if !*f.on {
		return worldforge.Quotas{}, nil
	}
	return worldforge.Quotas{Worlds: *f.worlds, Cells: *f.cells, LoreEntities: *f.lore, PendingProposals: *f.pending, Keys: *f.keys}, nil
}

// applyQuotas makes db enforce q and logs it.
func applyQuotas(db *sqlstore.DB, q worldforge.Quotas, logger *slog.Logger) {
	db.SetQuotas(q)
	if q == (worldforge.Quotas{}) {
		logger.Info("per-user quotas off")
		return
	}
	logger.Info("per-user quotas", "worlds", q.Worlds, "cells", q.Cells, "lore_entities", q.LoreEntities,
		"pending_proposals", q.PendingProposals, "keys", q.Keys)
}
