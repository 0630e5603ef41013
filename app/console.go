package app

import (
	"context"
	"time"

	wf "github.com/worldforge-go/worldforge"
)

// The operations only the web console serves (package console). Every
// other console action calls the same operation as its MCP tool or REST
// route, with a Via.Route that names the console route ("console POST
// /p/{id}/commit"), so its audit row says where it came from.
const (
	OpListReviewWorlds  = "list_review_worlds"
	OpReviewQueue       = "review_queue"
	OpReviewProposal    = "review_proposal"
	OpWorldMap          = "world_map"
	OpListWorldMembers  = "list_world_members"
	OpAddWorldMember    = "add_world_member"
	OpRemoveWorldMember = "remove_world_member"
	OpListAPIKeys       = "list_api_keys"
	OpCreateAPIKey      = "create_api_key"
	OpRevokeAPIKey      = "revoke_api_key"
	OpListAudit         = "list_audit"
	OpGrantOAuthApp     = "grant_oauth_app"
	OpDisconnectOAuth   = "disconnect_oauth_app"
)

func consoleRow(op string, routes []string, who Who, readOnly bool, scopes ...string) Access {
	return Access{Op: op, Console: routes, Scopes: scopes, Who: who, ReadOnly: readOnly}
}

// consoleTable is the console's part of the access table. Its reads are
// not audited (a page view is not an action); its writes are.
var consoleTable = []Access{
	unaudited(consoleRow(OpListReviewWorlds, []string{"GET /{$}"}, WhoSelf, true)),
	unaudited(consoleRow(OpReviewQueue, []string{"GET /queue", "GET /queue/events"}, WhoGMWorlds, true, wf.ScopeWorldRead)),
	unaudited(consoleRow(OpReviewProposal, []string{"GET /p/{id}"}, WhoReviewer, true, wf.ScopeWorldRead)),
	unaudited(consoleRow(OpWorldMap, []string{"GET /w/{world}", "GET /w/{world}/map.png"}, WhoOwnerOrGM, true, wf.ScopeWorldRead)),
	unaudited(consoleRow(OpListWorldMembers, []string{"GET /w/{world}"}, WhoOwnerOrGM, true, wf.ScopeWorldRead)),
	consoleRow(OpAddWorldMember, []string{"POST /w/{world}/members"}, WhoOwner, false, wf.ScopeWorldWrite),
	consoleRow(OpRemoveWorldMember, []string{"POST /w/{world}/members/{user}/remove"}, WhoOwner, false, wf.ScopeWorldWrite),
	unaudited(consoleRow(OpListAPIKeys, []string{"GET /keys"}, WhoSelf, true)),
	consoleRow(OpCreateAPIKey, []string{"POST /keys"}, WhoSelf, false),
	consoleRow(OpRevokeAPIKey, []string{"POST /keys/{id}/revoke"}, WhoSelf, false),
	unaudited(consoleRow(OpListAudit, []string{"GET /audit", "GET /audit.csv", "GET /audit.jsonl"}, WhoSelf, true, wf.ScopeWorldRead)),
	consoleRow(OpGrantOAuthApp, []string{"POST /oauth/consent"}, WhoSelf, false),
	consoleRow(OpDisconnectOAuth, []string{"POST /keys/apps/revoke"}, WhoSelf, false),
}

// GrantOAuthApp records a person's consent to an OAuth client (package
// authserver does the granting, through grant, which gets the caller's
// user id and returns where to send the browser), with its audit row.
func (s *Service) GrantOAuthApp(ctx context.Context, r Request, clientID string, grant func(userID string) (string, error)) (string, error) {
	return run(ctx, s, r, OpGrantOAuthApp, func(c *call) (string, error) {
		loc, err := grant(c.owner)
		if err != nil {
			return "", err
		}
		c.target("oauth_client", clientID, "")
		return loc, nil
	})
}

// DisconnectOAuthApp revokes every grant of the client for the caller
// (through revoke), with its audit row.
func (s *Service) DisconnectOAuthApp(ctx context.Context, r Request, clientID string, revoke func(userID, clientID string) error) error {
	_, err := run(ctx, s, r, OpDisconnectOAuth, func(c *call) (struct{}, error) {
		if clientID == "" {
			return struct{}{}, wf.BadRequest("no client")
		}
		if err := revoke(c.owner, clientID); err != nil {
			return struct{}{}, err
		}
		c.target("oauth_client", clientID, "")
		return struct{}{}, nil
	})
	return err
}

// QueueQuery selects a page of the review queue: the proposals of the
// worlds the caller owns or runs as GM (of one of them when WorldID is
// set), newest first.
type QueueQuery struct {
	WorldID string
	Status  string // "" is pending
	Kind    string
	ActorID string
	KeyID   string
	// Before continues after the previous page's last proposal.
	Before *wf.ProposalCursor
	Limit  int
}

// QueuePage is one page of the review queue.
type QueuePage struct {
	Proposals []wf.Proposal
	// Total is how many proposals the query selects in all.
	Total int
	// Next, when set, is the cursor of the next page.
	Next *wf.ProposalCursor
}

// KeyArgs is a new API key: its name and scopes. A caller can grant
// only scopes they hold.
type KeyArgs struct {
	Name   string
	Scopes []string
}

// NewKey is a key just made: its secret, shown once, and its row.
type NewKey struct {
	Secret string
	Key    *wf.APIKey
}

// AuditQuery selects a page of the audit rows the caller may read (their
// own and those of the worlds they own or run as GM).
type AuditQuery struct {
	WorldID, ActorID, KeyID, Tool, Route, Outcome string
	Since, Until                                  time.Time
	BeforeSeq                                     int64
	Limit                                         int
}

// AuditPage is one page of audit rows, newest first.
type AuditPage struct {
	Entries []wf.AuditEntry
	// NextSeq, when positive, is the BeforeSeq of the next page.
	NextSeq int64
}

// ListReviewWorlds lists the worlds the caller owns or runs as GM, with
// their pending-proposal counts (the console's home page).
func (s *Service) ListReviewWorlds(ctx context.Context, r Request) ([]wf.WorldListing, error) {
	return run(ctx, s, r, OpListReviewWorlds, func(c *call) ([]wf.WorldListing, error) {
		list, err := s.store.ListReviewWorlds(ctx, c.owner)
		if err != nil {
			return nil, storeErr(err)
		}
		return list, nil
	})
}
