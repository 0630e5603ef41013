package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/worldforge-go/worldforge"
)

// The web console's store: users by name, review worlds and members, the
// review queue (ListProposals, CountProposals), sessions and login links.
//
// The queue and the audit page (audit.go) list the rows of a set of worlds
// newest first. One query over all of them (world_id IN …) would read
// every row of those worlds and sort them to return the first page. They
// read instead, for each world, the first page of that world alone (a
// seek in an index ordered like the page, stopping after limit rows),
// and keep the first page of the union: at most worlds × limit index
// entries, whatever the worlds hold. Past maxBranches worlds the query
// is one IN list again (such a text would be long, and SQLite caps a
// compound SELECT at 500 terms).

// maxBranches is the most worlds read one by one in a page query.
const maxBranches = 64

// maxUsersByName is the most users FindUsersByName returns.
const maxUsersByName = 20

// FindUsersByName implements worldforge.UserStore: the users named
// exactly name, oldest first (then by id), at most 20. An empty name is
// bad_request.
func (db *DB) FindUsersByName(ctx context.Context, name string) ([]worldforge.User, error) {
	if name == "" {
		return nil, wrap("find users by name", worldforge.BadRequest("empty user name"))
	}
	out, err := collect(func(s scanner) (worldforge.User, error) {
		var (
			u       worldforge.User
			created int64
		)
		err := s.Scan(&u.ID, &u.Name, &created)
		u.CreatedAt = fromMS(created)
		return u, err
	})(db.reader.q().query(ctx,
		"SELECT id, name, created_at FROM users WHERE name = ? ORDER BY created_at, id LIMIT ?", name, maxUsersByName))
	return out, wrap("find users by name", err)
}

// ListReviewWorlds implements worldforge.WorldStore in one query: the
// worlds the user owns or is a GM of (without their documents), by name
// then id, each with the user's role and its count of pending proposals
// (read from proposals_review's entries).
func (db *DB) ListReviewWorlds(ctx context.Context, userID string) ([]worldforge.WorldListing, error) {
	out, err := collect(func(s scanner) (worldforge.WorldListing, error) {
		var (
			l                worldforge.WorldListing
			created, updated int64
		)
		w := &l.World
		err := s.Scan(&w.ID, &w.OwnerID, &w.Name, &w.Template, &w.Seed, &w.Cols, &w.Rows, &w.Version,
			&created, &updated, &l.Role, &l.Pending)
		w.CreatedAt, w.UpdatedAt = fromMS(created), fromMS(updated)
		return l, err
	})(db.reader.q().query(ctx,
		`SELECT w.id, w.owner_id, w.name, COALESCE(w.template, ''), w.seed, w.grid_cols, w.grid_rows, w.version, w.created_at, w.updated_at,
			CASE WHEN w.owner_id = ? THEN 'owner' ELSE 'gm' END,
			(SELECT COUNT(*) FROM proposals p WHERE p.world_id = w.id AND p.status = 'pending')
		FROM worlds w
		WHERE w.id IN (SELECT id FROM worlds WHERE owner_id = ?
			UNION SELECT world_id FROM world_members WHERE user_id = ? AND role = 'gm')
		ORDER BY w.name, w.id`, userID, userID, userID))
	return out, wrap("list review worlds", err)
}

// ListWorldMembers implements worldforge.WorldStore: the world's members
// (not its owner) by role, user name, then user id, each with their name.
// A missing world is not_found.
func (db *DB) ListWorldMembers(ctx context.Context, worldID string) ([]worldforge.WorldMember, error) {
	out, err := collect(func(s scanner) (worldforge.WorldMember, error) {
		var (
			m       worldforge.WorldMember
			created int64
		)
		err := s.Scan(&m.WorldID, &m.UserID, &m.Role, &m.Name, &created)
		m.CreatedAt = fromMS(created)
		return m, err
	})(db.reader.q().query(ctx,
		`SELECT m.world_id, m.user_id, m.role, u.name, m.created_at FROM world_members m
		JOIN users u ON u.id = m.user_id
		WHERE m.world_id = ? ORDER BY m.role, u.name, m.user_id`, worldID))
	if err == nil && len(out) == 0 {
		// No member: say whether there is a world at all.
		var one int
		err = db.reader.q().queryRow(ctx, "SELECT 1 FROM worlds WHERE id = ?", worldID).Scan(&one)
	}
	if err != nil {
		return nil, wrap("list world members", err)
	}
	return out, nil
}

// RemoveWorldMember implements worldforge.WorldStore: a user who is not a
// member of the world (its owner included), or a missing world, is
// not_found.
func (db *DB) RemoveWorldMember(ctx context.Context, worldID, userID string) error {
	err := affectedOne(db.writer.q().exec(ctx,
		"DELETE FROM world_members WHERE world_id = ? AND user_id = ?", worldID, userID))
	return wrap("remove world member", err)
}

// proposalQuery is a ProposalFilter as SQL.
type proposalQuery struct {
	// worlds are the worlds read, sorted: nil reads any world's
	// proposals, an empty non-nil list none.
	worlds []string
	conds  []string // the other conditions, ANDed
	args   []any
}

// proposalWhere turns f into a proposalQuery. An unknown kind, an empty
// world id in WorldIDs or a cursor without a time or an id is
// bad_request.
func proposalWhere(f worldforge.ProposalFilter) (proposalQuery, error) {
	var pq proposalQuery
	if f.Kind != "" && !slices.Contains(worldforge.ProposalKinds, f.Kind) {
		return pq, worldforge.BadRequest("unknown proposal kind %q", f.Kind)
	}
	if f.Before != nil && (f.Before.CreatedAt.IsZero() || f.Before.ID == "") {
		return pq, worldforge.BadRequest("a proposal cursor needs a time and an id")
	}
	if len(f.WorldIDs) > 0 {
		if slices.Contains(f.WorldIDs, "") {
			return pq, worldforge.BadRequest("empty world id in the world list")
		}
		pq.worlds = slices.Compact(slices.Sorted(slices.Values(f.WorldIDs)))
		if f.WorldID != "" {
			if slices.Contains(pq.worlds, f.WorldID) {
				pq.worlds = []string{f.WorldID}
			} else {
				pq.worlds = []string{}
			}
		}
	} else if f.WorldID != "" {
		pq.worlds = []string{f.WorldID}
	}
	for _, c := range []struct{ col, v string }{
		{"status", f.Status}, {"kind", f.Kind}, {"changeset_id", f.ChangesetID}, {"actor_id", f.ActorID}, {"key_id", f.KeyID},
	} {
		if c.v != "" {
			pq.conds = append(pq.conds, c.col+" = ?")
			pq.args = append(pq.args, c.v)
		}
	}
	return pq, nil
}

// where returns the WHERE clause of the conditions plus extra ones.
func where(conds []string, extra ...string) string {
	all := append(slices.Clip(conds), extra...)
	if len(all) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(all, " AND ")
}

// ListProposals implements worldforge.ProposalStore: newest first (by
// creation time, then id), from Before on when set. Limit defaults to 50
// and is capped at 200. Bad filters are bad_request (see proposalWhere).
// The proposals of several worlds are read world by world (see the note
// at the top of the file).
func (db *DB) ListProposals(ctx context.Context, f worldforge.ProposalFilter) ([]worldforge.Proposal, error) {
	pq, err := proposalWhere(f)
	if err != nil {
		return nil, wrap("list proposals", err)
	}
	if pq.worlds != nil && len(pq.worlds) == 0 {
		return []worldforge.Proposal{}, nil
	}
	query, args, cached := proposalPage(pq, f.Before, clampLimit(f.Limit, proposalListDefault, proposalListMax))
	run := db.reader.q().queryOnce
	if cached {
		run = db.reader.q().query
	}
	out, err := collect(scanProposal)(run(ctx, query, args...))
	if err != nil {
		return nil, wrap("list proposals", err)
	}
	return out, nil
}

// proposalPage returns the query of a page of proposals, its arguments,
// and whether its text is one of few (to keep in the statement cache).
func proposalPage(pq proposalQuery, before *worldforge.ProposalCursor, limit int) (string, []any, bool) {
	conds, args := pq.conds, pq.args
	if before != nil {
		conds = append(slices.Clip(conds), "(created_at, id) < (?, ?)")
		args = append(slices.Clip(args), ms(before.CreatedAt), before.ID)
	}
	const order = " ORDER BY created_at DESC, id DESC"
	switch n := len(pq.worlds); {
	case n <= 1:
		if n == 1 {
			conds = append([]string{"world_id = ?"}, conds...)
			args = append([]any{pq.worlds[0]}, args...)
		}
		return "SELECT " + proposalCols + " FROM proposals" + where(conds) + order + " LIMIT ?", append(args, limit), true
	case n <= maxBranches:
		var (
			b    strings.Builder
			all  = make([]any, 0, n*(len(args)+2)+1)
			cond = where(conds, "world_id = ?")
		)
		b.WriteString("SELECT " + proposalCols + " FROM proposals WHERE id IN (SELECT id FROM (")
		for i, w := range pq.worlds {
			if i > 0 {
				b.WriteString(" UNION ALL ")
			}
			b.WriteString("SELECT id, created_at FROM (SELECT id, created_at FROM proposals" + cond + order +
				" LIMIT ?) AS b" + strconv.Itoa(i))
			all = append(append(all, args...), w, limit)
		}
		b.WriteString(") AS u" + order + " LIMIT ?)" + order)
		return b.String(), append(all, limit), false
	default:
		in := "world_id IN (" + placeholders(n) + ")"
		all := append(append(slices.Clip(args), anys(pq.worlds)...), limit)
		return "SELECT " + proposalCols + " FROM proposals" + where(conds, in) + order + " LIMIT ?", all, false
	}
}

// CountProposals implements worldforge.ProposalStore: the number of
// proposals the filter selects, Limit and Before aside (read from
// proposals_review's entries for a filter of worlds and a status). Bad
// filters are bad_request as for ListProposals.
func (db *DB) CountProposals(ctx context.Context, f worldforge.ProposalFilter) (int, error) {
	pq, err := proposalWhere(f)
	if err != nil {
		return 0, wrap("count proposals", err)
	}
	if pq.worlds != nil && len(pq.worlds) == 0 {
		return 0, nil
	}
	conds, args := pq.conds, pq.args
	q := db.reader.q()
	run := q.queryRow
	switch n := len(pq.worlds); {
	case n == 1:
		conds = append([]string{"world_id = ?"}, conds...)
		args = append([]any{pq.worlds[0]}, args...)
	case n > 1:
		conds = append([]string{"world_id IN (" + placeholders(n) + ")"}, conds...)
		args = append(anys(pq.worlds), args...)
		run = q.queryRowOnce // a text per number of worlds: not cached
	}
	var count int
	err = run(ctx, "SELECT COUNT(*) FROM proposals"+where(conds), args...).Scan(&count)
	return count, wrap("count proposals", err)
}

// anys returns the strings as a []any of query arguments.
func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// sessionCols are a session row's columns, in scanSession's order.
const sessionCols = "id, hash, user_id, key_id, scopes, created_at, expires_at, revoked_at"

func scanSession(s scanner) (*worldforge.Session, error) {
	var (
		se               worldforge.Session
		key              sql.NullString
		scopes           string
		created, expires int64
		revoked          sql.NullInt64
	)
	if err := s.Scan(&se.ID, &se.Hash, &se.UserID, &key, &scopes, &created, &expires, &revoked); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(scopes), &se.Scopes); err != nil {
		return nil, fmt.Errorf("scopes: %w", err)
	}
	se.KeyID = key.String
	se.CreatedAt, se.ExpiresAt, se.RevokedAt = fromMS(created), fromMS(expires), fromNullMS(revoked)
	return &se, nil
}

// checkSpan refuses an empty secret hash and an expiry that is not after
// the creation time.
func checkSpan(what string, hash []byte, created, expires time.Time) error {
	if len(hash) == 0 {
		return worldforge.BadRequest("empty %s hash", what)
	}
	if !expires.After(created) {
		return worldforge.BadRequest("%s expires at %s, not after its creation at %s",
			what, expires.Format(time.RFC3339), created.Format(time.RFC3339))
	}
	return nil
}

// CreateSession implements worldforge.SessionStore, filling an empty ID
// ("sess_…") and a zero CreatedAt. An empty hash or an ExpiresAt not after
// CreatedAt is bad_request; a missing user or key not_found; a hash
// already stored conflict.
func (db *DB) CreateSession(ctx context.Context, s *worldforge.Session) error {
	if s.ID == "" {
		s.ID = worldforge.NewID("sess")
	}
	s.CreatedAt = stamp(s.CreatedAt)
	if !s.ExpiresAt.IsZero() {
		s.ExpiresAt = stamp(s.ExpiresAt)
	}
	if s.RevokedAt != nil {
		t := stamp(*s.RevokedAt)
		s.RevokedAt = &t
	}
	if err := checkSpan("session", s.Hash, s.CreatedAt, s.ExpiresAt); err != nil {
		return wrap("create session", err)
	}
	scopes, err := marshalList(s.Scopes)
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	_, err = db.writer.q().exec(ctx,
		"INSERT INTO sessions ("+sessionCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		s.ID, s.Hash, s.UserID, nullStr(s.KeyID), scopes, ms(s.CreatedAt), ms(s.ExpiresAt), nullMS(s.RevokedAt))
	return wrap("create session", err)
}

// FindSessionByHash implements worldforge.SessionStore: the session with
// that hash, revoked or expired included, or not_found.
func (db *DB) FindSessionByHash(ctx context.Context, hash []byte) (*worldforge.Session, error) {
	s, err := scanSession(db.reader.q().queryRow(ctx, "SELECT "+sessionCols+" FROM sessions WHERE hash = ?", hash))
	if err != nil {
		return nil, wrap("find session", err)
	}
	return s, nil
}

// RevokeSession implements worldforge.SessionStore, keeping the first
// revocation time. An unknown hash is not_found.
func (db *DB) RevokeSession(ctx context.Context, hash []byte) error {
	err := affectedOne(db.writer.q().exec(ctx,
		"UPDATE sessions SET revoked_at = COALESCE(revoked_at, ?) WHERE hash = ?", ms(now()), hash))
	return wrap("revoke session", err)
}

// RevokeUserSessions implements worldforge.SessionStore: it revokes the
// user's sessions that are neither revoked nor expired and returns how
// many. A missing user is not_found.
func (db *DB) RevokeUserSessions(ctx context.Context, userID string) (int, error) {
	t := ms(now())
	res, err := db.writer.q().exec(ctx,
		"UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ?", t, userID, t)
	if err != nil {
		return 0, wrap("revoke user sessions", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, wrap("revoke user sessions", err)
	}
	if n == 0 {
		var one int
		if err := db.reader.q().queryRow(ctx, "SELECT 1 FROM users WHERE id = ?", userID).Scan(&one); err != nil {
			return 0, wrap("revoke user sessions", err)
		}
	}
	return int(n), nil
}

// loginLinkCols are a login link row's columns, in scanLoginLink's order.
const loginLinkCols = "id, hash, user_id, created_at, expires_at, used_at"

func scanLoginLink(s scanner) (*worldforge.LoginLink, error) {
	var (
		l                worldforge.LoginLink
		created, expires int64
		used             sql.NullInt64
	)
	if err := s.Scan(&l.ID, &l.Hash, &l.UserID, &created, &expires, &used); err != nil {
		return nil, err
	}
	l.CreatedAt, l.ExpiresAt, l.UsedAt = fromMS(created), fromMS(expires), fromNullMS(used)
	return &l, nil
}

// CreateLoginLink implements worldforge.SessionStore, filling an empty ID
// ("login_…") and a zero CreatedAt. An empty hash or an ExpiresAt not
// after CreatedAt is bad_request; a missing user not_found; a hash
// already stored conflict.
func (db *DB) CreateLoginLink(ctx context.Context, l *worldforge.LoginLink) error {
	if l.ID == "" {
		l.ID = worldforge.NewID("login")
	}
	l.CreatedAt = stamp(l.CreatedAt)
	if !l.ExpiresAt.IsZero() {
		l.ExpiresAt = stamp(l.ExpiresAt)
	}
	if l.UsedAt != nil {
		t := stamp(*l.UsedAt)
		l.UsedAt = &t
	}
	if err := checkSpan("login link", l.Hash, l.CreatedAt, l.ExpiresAt); err != nil {
		return wrap("create login link", err)
	}
	_, err := db.writer.q().exec(ctx,
		"INSERT INTO login_links ("+loginLinkCols+") VALUES (?, ?, ?, ?, ?, ?)",
		l.ID, l.Hash, l.UserID, ms(l.CreatedAt), ms(l.ExpiresAt), nullMS(l.UsedAt))
	return wrap("create login link", err)
}

// UseLoginLink implements worldforge.SessionStore. The claim is one
// UPDATE whose predicate (unused, unexpired) the engine re-checks under
// the row's write lock, so of concurrent uses exactly one succeeds. When
// it matches nothing, the row read afterwards says why: not_found,
// conflict: login_link_used, or conflict: login_link_expired (a link is
// expired from its ExpiresAt on).
func (db *DB) UseLoginLink(ctx context.Context, hash []byte, at time.Time) (*worldforge.LoginLink, error) {
	if at.IsZero() {
		return nil, wrap("use login link", worldforge.BadRequest("no time of use"))
	}
	t := ms(stamp(at))
	l, err := scanLoginLink(db.writer.q().queryRow(ctx,
		"UPDATE login_links SET used_at = ? WHERE hash = ? AND used_at IS NULL AND expires_at > ? RETURNING "+loginLinkCols,
		t, hash, t))
	if err == nil {
		return l, nil
	}
	if !errNoRows(err) {
		return nil, wrap("use login link", err)
	}
	l, err = scanLoginLink(db.writer.q().queryRow(ctx, "SELECT "+loginLinkCols+" FROM login_links WHERE hash = ?", hash))
	switch {
	case err != nil:
		return nil, wrap("use login link", err)
	case l.UsedAt != nil:
		return nil, wrap("use login link", &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailLinkUsed})
	default:
		return nil, wrap("use login link", &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailLinkExpired})
	}
}
