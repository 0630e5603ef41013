package sqlstore

// TEMPORARY (never lands): the console's store methods, until the store
// helper implements them.

import (
	"context"
	"time"

	"github.com/worldforge-go/worldforge"
)

func (db *DB) FindUsersByName(ctx context.Context, name string) ([]worldforge.User, error) {
	panic("pending")
}
func (db *DB) FindAPIKeyByID(ctx context.Context, id string) (*worldforge.APIKey, error) {
	panic("pending")
}
func (db *DB) ListAPIKeys(ctx context.Context, userID string) ([]worldforge.APIKey, error) {
	panic("pending")
}
func (db *DB) RevokeUserAPIKey(ctx context.Context, userID, id string) error { panic("pending") }
func (db *DB) TouchAPIKey(ctx context.Context, id string, at time.Time) error  { panic("pending") }
func (db *DB) ListReviewWorlds(ctx context.Context, userID string) ([]worldforge.WorldListing, error) {
	panic("pending")
}
func (db *DB) ListWorldMembers(ctx context.Context, worldID string) ([]worldforge.WorldMember, error) {
	panic("pending")
}
func (db *DB) RemoveWorldMember(ctx context.Context, worldID, userID string) error {
	panic("pending")
}
func (db *DB) CountProposals(ctx context.Context, f worldforge.ProposalFilter) (int, error) {
	panic("pending")
}
func (db *DB) CreateSession(ctx context.Context, s *worldforge.Session) error { panic("pending") }
func (db *DB) FindSessionByHash(ctx context.Context, hash []byte) (*worldforge.Session, error) {
	panic("pending")
}
func (db *DB) RevokeSession(ctx context.Context, hash []byte) error { panic("pending") }
func (db *DB) RevokeUserSessions(ctx context.Context, userID string) (int, error) {
	panic("pending")
}
func (db *DB) CreateLoginLink(ctx context.Context, l *worldforge.LoginLink) error { panic("pending") }
func (db *DB) UseLoginLink(ctx context.Context, hash []byte, now time.Time) (*worldforge.LoginLink, error) {
	panic("pending")
}
