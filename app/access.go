package app

import (
	"slices"

	wf "github.com/worldforge-go/worldforge"
)

// Who says who may perform an operation beyond holding its scopes.
// Everyone else gets not_found (proposal_not_found for a proposal), as for
// an id that does not exist, so a caller cannot learn whether someone
// else's row exists.
type Who int

// The callers an operation admits.
const (
	// WhoAnyone: any caller; the operation reads or creates only the
	// caller's own rows (a world named as a filter or parent must be one
	// the caller owns or runs as GM).
	WhoAnyone Who = iota + 1
	// WhoGMWorlds: any caller; the search covers only the worlds the
	// caller owns or runs as GM, and a world named must be one of them.
	WhoGMWorlds
	// WhoOwner: the owner of the row named (of the world, for world and
	// POI tools; of the quest or encounter, for commits).
	WhoOwner
	// WhoOwnerOrGM: the owner of the world the row belongs to, or one of
	// its GMs.
	WhoOwnerOrGM
	// WhoMember: the owner of the world or any of its members (GM, player,
	// observer).
	WhoMember
	// WhoRowOwnerOrGM: anyone for a new row; for a change, the row's owner
	// or the owner or a GM of its world.
	WhoRowOwnerOrGM
	// WhoPlayerOrGM: the owner of the world, a GM or a player; a player
	// acts only for themselves.
	WhoPlayerOrGM
	// WhoReviewer: the proposal's reviewer: the world's owner or a GM,
	// or, for a quest or encounter proposal outside any world, the row's
	// owner (for a new row, the proposer).
	WhoReviewer
	// WhoSelf: any caller, for their own rows only (a world named must be
	// one they own).
	WhoSelf
)

// String is the sentence the tool descriptions and the docs' access
// table use.
func (w Who) String() string {
	switch w {
	case WhoAnyone:
		return "anyone, for their own rows (a world named must be one they own or run as GM)"
	case WhoGMWorlds:
		return "anyone, over the worlds they own or run as GM"
	case WhoOwner:
		return "the owner of the row named"
	case WhoOwnerOrGM:
		return "the world's owner or a GM"
	case WhoMember:
		return "the world's owner or a member (GM, player or observer)"
	case WhoRowOwnerOrGM:
		return "anyone for a new one; for a change, its owner or the world's owner or a GM"
	case WhoPlayerOrGM:
		return "the world's owner, a GM or a player (a player only for themselves)"
	case WhoReviewer:
		return "the proposal's reviewer: the world's owner or a GM; outside a world, the row's owner"
	case WhoSelf:
		return "anyone, for their own rows (a world named must be one they own)"
	}
	return "nobody"
}

// The operations served only over REST; every MCP tool is an operation
// named by its tool name (worldforge.Tool*).
const (
	OpMe                   = "me"
	OpPlacePresence        = "place_presence"
	OpSearchWorldPOIs      = "search_world_pois"
	OpListProposals        = "list_proposals"
	OpGetProposal          = "get_proposal"
	OpCommitProposal       = "commit_proposal"
	OpRejectProposal       = "reject_proposal"
	OpCommitChangeset      = "commit_changeset"
	OpListAutoAcceptRules  = "list_auto_accept_rules"
	OpCreateAutoAcceptRule = "create_auto_accept_rule"
	OpDeleteAutoAcceptRule = "delete_auto_accept_rule"
)

// Access is one operation's row of the access table: what serves it (an
// MCP tool, REST routes), the scopes a credential needs, who, holding
// them, may perform it, whether it only reads (a read is audited all the
// same) and whether it writes no audit row at all.
type Access struct {
	Op       string
	Tool     string   // the MCP tool serving it, or ""
	Routes   []string // the REST route patterns serving it
	Scopes   []string // required: all of them, or any one if AnyScope
	AnyScope bool
	Who      Who
	ReadOnly bool
	// NoAudit: a success writes no audit row (the REST reads of the
	// caller's own review queue, rules and identity). Every other success
	// writes one (a changeset commit, one per proposal).
	NoAudit bool
	// Console names the web console's routes ("METHOD /path") of an
	// operation only the console serves.
	Console []string
}

func toolRow(name string, who Who, scopes ...string) Access {
	return Access{Op: name, Tool: name, Scopes: scopes, Who: who, ReadOnly: true}
}

func writeRow(name string, who Who, scopes ...string) Access {
	return Access{Op: name, Tool: name, Scopes: scopes, Who: who}
}

func anyScope(a Access) Access { a.AnyScope = true; return a }

func unaudited(a Access) Access { a.NoAudit = true; return a }

func routeRow(op string, routes []string, who Who, readOnly bool, scopes ...string) Access {
	return Access{Op: op, Routes: routes, Scopes: scopes, Who: who, ReadOnly: readOnly}
}

// apiTable is the MCP and REST part of the access table: the MCP tools in the order the spec lists
// them (which the docs' table follows), then the REST operations. A tool
// and a route for similar operations with different rules (search_pois,
// owner only; the REST POI search, owner and GMs all, players and
// observers the party's) are separate rows.
var apiTable = []Access{
	toolRow(wf.ToolReadWorld, WhoOwner, wf.ScopeWorldRead),
	toolRow(wf.ToolReadCampaign, WhoOwner, wf.ScopeCampaignRead),
	toolRow(wf.ToolListCampaigns, WhoAnyone, wf.ScopeCampaignRead),
	toolRow(wf.ToolReadQuest, WhoOwner, wf.ScopeQuestRead),
	toolRow(wf.ToolListQuests, WhoAnyone, wf.ScopeQuestRead),
	toolRow(wf.ToolReadEncounter, WhoOwner, wf.ScopeEncounterRead),
	toolRow(wf.ToolListEncounters, WhoAnyone, wf.ScopeEncounterRead),
	toolRow(wf.ToolListWikiPages, WhoOwnerOrGM, wf.ScopeWikiRead),
	toolRow(wf.ToolReadWikiPage, WhoOwnerOrGM, wf.ScopeWikiRead),
	toolRow(wf.ToolSearchWikiPages, WhoGMWorlds, wf.ScopeWikiRead),
	toolRow(wf.ToolWikiPageHistory, WhoOwnerOrGM, wf.ScopeWikiRead),
	toolRow(wf.ToolListFactions, WhoOwnerOrGM, wf.ScopeWikiRead),
	toolRow(wf.ToolGetWorldSummary, WhoOwnerOrGM, wf.ScopeWikiRead, wf.ScopeAtlasRead),
	toolRow(wf.ToolListAtlasPlaces, WhoOwnerOrGM, wf.ScopeAtlasRead),
	toolRow(wf.ToolReadAtlasNode, WhoOwnerOrGM, wf.ScopeAtlasRead),
	toolRow(wf.ToolSearchAtlasNodes, WhoGMWorlds, wf.ScopeAtlasRead),
	toolRow(wf.ToolSearchPOIs, WhoOwner, wf.ScopeWorldRead),
	anyScope(toolRow(wf.ToolListLore, WhoOwnerOrGM, wf.ScopeLoreRead, wf.ScopeWorldRead)),

	writeRow(wf.ToolCreateWorld, WhoAnyone, wf.ScopeWorldWrite),
	writeRow(wf.ToolResizeWorld, WhoOwner, wf.ScopeWorldWrite),
	writeRow(wf.ToolPlayerPickup, WhoMember, wf.ScopeWorldWrite),
	writeRow(wf.ToolPlayerOpen, WhoMember, wf.ScopeWorldWrite),

	writeRow(wf.ToolProposeQuest, WhoRowOwnerOrGM, wf.ScopeQuestWrite),
	writeRow(wf.ToolProposeEncounter, WhoRowOwnerOrGM, wf.ScopeEncounterWrite),
	writeRow(wf.ToolProposeWikiPage, WhoOwnerOrGM, wf.ScopeWikiPropose),
	writeRow(wf.ToolProposeWikiEdit, WhoOwnerOrGM, wf.ScopeWikiPropose),
	writeRow(wf.ToolProposeAtlasPlace, WhoOwnerOrGM, wf.ScopeAtlasPropose),
	anyScope(writeRow(wf.ToolProposeLore, WhoOwnerOrGM, wf.ScopeLorePropose, wf.ScopeWorldWrite)),
	writeRow(wf.ToolCommitQuest, WhoOwner, wf.ScopeQuestCommit),
	writeRow(wf.ToolCommitEncounter, WhoOwner, wf.ScopeEncounterCommit),
	writeRow(wf.ToolCreateCampaign, WhoAnyone, wf.ScopeCampaignWrite),

	unaudited(routeRow(OpMe, []string{"GET /me"}, WhoSelf, true)),
	routeRow(OpPlacePresence, []string{"PUT /worlds/{id}/presence"}, WhoPlayerOrGM, false, wf.ScopeWorldWrite),
	routeRow(OpSearchWorldPOIs, []string{"GET /worlds/{id}/pois/search", "POST /worlds/{id}/pois/search"}, WhoMember, true, wf.ScopeWorldRead),
	unaudited(routeRow(OpListProposals, []string{"GET /worlds/{id}/proposals"}, WhoOwnerOrGM, true, wf.ScopeWorldRead)),
	unaudited(routeRow(OpGetProposal, []string{"GET /proposals/{id}"}, WhoReviewer, true, wf.ScopeWorldRead)),
	routeRow(OpCommitProposal, []string{"POST /proposals/{id}/commit"}, WhoReviewer, false, wf.ScopeWorldWrite),
	routeRow(OpRejectProposal, []string{"POST /proposals/{id}/reject"}, WhoReviewer, false, wf.ScopeWorldWrite),
	routeRow(OpCommitChangeset, []string{"POST /worlds/{id}/changesets/{changeset}/commit"}, WhoOwnerOrGM, false, wf.ScopeWorldWrite),
	unaudited(routeRow(OpListAutoAcceptRules, []string{"GET /auto-accept-rules"}, WhoSelf, true, wf.ScopeWorldRead)),
	routeRow(OpCreateAutoAcceptRule, []string{"POST /auto-accept-rules"}, WhoSelf, false, wf.ScopeWorldWrite),
	routeRow(OpDeleteAutoAcceptRule, []string{"DELETE /auto-accept-rules/{id}"}, WhoSelf, false, wf.ScopeWorldWrite),
}

// table is the access table, the console's operations (console.go) last.
var table = append(apiTable, consoleTable...)

// byOp, byTool and byRoute index table.
var byOp, byTool, byRoute = func() (ops, tools, routes map[string]*Access) {
	ops, tools, routes = map[string]*Access{}, map[string]*Access{}, map[string]*Access{}
	for i := range table {
		a := &table[i]
		ops[a.Op] = a
		if a.Tool != "" {
			tools[a.Tool] = a
		}
		for _, r := range a.Routes {
			routes[r] = a
		}
	}
	return ops, tools, routes
}()

// Table returns the access table: every operation's row, the MCP tools
// first in the spec's order, then the REST operations.
func Table() []Access {
	out := make([]Access, len(table))
	for i, a := range table {
		out[i] = a.clone()
	}
	return out
}

// ToolAccess returns the row of the operation the named MCP tool serves.
func ToolAccess(tool string) (Access, bool) {
	a, ok := byTool[tool]
	if !ok {
		return Access{}, false
	}
	return a.clone(), true
}

// RouteAccess returns the row of the operation a REST route pattern
// ("METHOD /path/{var}") serves.
func RouteAccess(pattern string) (Access, bool) {
	a, ok := byRoute[pattern]
	if !ok {
		return Access{}, false
	}
	return a.clone(), true
}

func (a *Access) clone() Access {
	c := *a
	c.Scopes, c.Routes, c.Console = slices.Clone(a.Scopes), slices.Clone(a.Routes), slices.Clone(a.Console)
	return c
}

// Admit checks r's actor against the row: every scope (or any one, for
// AnyScope) and then a resolvable owner, answering missing_scopes with
// every scope missing, or missing_scopes:unresolved_owner. It returns the
// owner: the user on whose behalf the actor acts. Every operation begins
// with it; an adapter that reads its input only once the caller is
// admitted (the MCP tools validate arguments after these checks) calls it
// first as well.
func Admit(r Request, row Access) (owner string, err error) {
	if r.Actor == nil {
		return "", wf.MissingScopes(wf.UnresolvedOwner)
	}
	if row.AnyScope {
		err = r.Actor.RequireAnyScope(row.Scopes...)
	} else {
		err = r.Actor.RequireScopes(row.Scopes...)
	}
	if err != nil {
		return "", err
	}
	return r.Actor.Owner()
}
