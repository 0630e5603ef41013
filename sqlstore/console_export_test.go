package sqlstore

import (
	"context"

	"github.com/worldforge-go/worldforge"
)

// ProposalPageSQLForTest returns the query and arguments ListProposals
// runs for f.
func ProposalPageSQLForTest(f worldforge.ProposalFilter) (string, []any, error) {
	pq, err := proposalWhere(f)
	if err != nil {
		return "", nil, err
	}
	q, args, _ := proposalPage(pq, f.Before, clampLimit(f.Limit, proposalListDefault, proposalListMax))
	return q, args, nil
}

// AuditPageSQLForTest returns the query and arguments ListAudit runs for f
// (f must select some branch when it has a Viewer).
func (db *DB) AuditPageSQLForTest(ctx context.Context, f worldforge.AuditFilter) (string, []any, error) {
	conds, args, err := auditConds(f)
	if err != nil {
		return "", nil, err
	}
	if f.BeforeSeq > 0 {
		conds = append(conds, "seq < ?")
		args = append(args, f.BeforeSeq)
	}
	var branches []auditBranch
	if f.Viewer != "" {
		if branches, err = db.viewerBranches(ctx, f); err != nil {
			return "", nil, err
		}
	}
	q, all, _ := auditPage(conds, args, branches, clampLimit(f.Limit, auditListDefault, auditListMax))
	return q, all, nil
}
