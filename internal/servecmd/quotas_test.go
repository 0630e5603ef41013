package servecmd

import (
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/cli"
)

// TestServeQuotaFlagsParse: the defaults are worldforge.DefaultQuotas,
// each flag sets its quota, 0 is unlimited and --quotas=false turns every
// quota off.
func TestServeQuotaFlagsParse(t *testing.T) {
	t.Parallel()
	parse := func(args ...string) wf.Quotas {
		t.Helper()
		fs := cli.NewFlags("serve")
		qf := addQuotaFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		q, err := qf.resolve()
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	if got := parse(); got != wf.DefaultQuotas() {
		t.Errorf("defaults %+v, want %+v", got, wf.DefaultQuotas())
	}
	d := wf.DefaultQuotas()
	if d.Worlds <= 0 || d.Cells < 4096*4096 || d.LoreEntities <= 0 || d.PendingProposals <= 0 || d.Keys <= 0 {
		t.Errorf("a default quota is off or below one world at the size cap: %+v", d)
	}
	got := parse("--quota-worlds", "3", "--quota-cells", "0", "--quota-lore-entities", "50", "--quota-pending-proposals", "7", "--quota-keys", "2")
	if want := (wf.Quotas{Worlds: 3, LoreEntities: 50, PendingProposals: 7, Keys: 2}); got != want {
		t.Errorf("quotas %+v, want %+v", got, want)
	}
	if got := parse("--quotas=false", "--quota-worlds", "3"); got != (wf.Quotas{}) {
		t.Errorf("--quotas=false: %+v, want none", got)
	}
}
