package httpapi

import (
	"net/http"
	"strconv"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/review"
)

// The review queue over REST (scopes: routes.go). The world's owner and
// GMs list, read, commit and reject its proposals; for a quest or
// encounter proposal outside any world, its row's owner does. Everyone
// else gets 404, as for a missing proposal. Commits and rejections write
// their audit row in their own transaction.
//
//	GET  /worlds/{id}/proposals?status=&changeset=&limit=   {"proposals":[…]}, newest first
//	GET  /proposals/{id}                                     the proposal
//	POST /proposals/{id}/commit                              the commit result
//	POST /proposals/{id}/reject                              the rejected proposal
//	POST /worlds/{id}/changesets/{changeset}/commit          {"results":[…]}: every pending proposal of the changeset, all or none
//
// Changeset ids are scoped to their world (for a quest or encounter
// proposal outside any world, to its proposer): {changeset} names the
// world's own changeset, and the same id in another world changes no
// answer.
//
// Auto-accept rules are the caller's own:
//
//	GET    /auto-accept-rules        {"rules":[…]}
//	POST   /auto-accept-rules        {"worldId"?, "actorId"?, "keyId"?, "kinds"?: […]} → the rule
//
// A rule's worldId, actorId and keyId hold at most worldforge.MaxIDLength
// characters, its kinds at most worldforge.MaxRuleKinds proposal kinds,
// none twice (AutoAcceptRule.Check).
//	DELETE /auto-accept-rules/{id}   204

// proposalStatuses are the status filter's values.
var proposalStatuses = map[string]bool{
	worldforge.ProposalPending: true, worldforge.ProposalCommitted: true, worldforge.ProposalRejected: true,
}

func (s *Server) listProposals(w http.ResponseWriter, r *http.Request) {
	_, _, worldID, role, ok := s.worldCaller(w, r)
	if !ok {
		return
	}
	if role != worldforge.RoleOwner && role != worldforge.RoleGM {
		writeError(w, worldforge.ErrNotFound)
		return
	}
	v := r.URL.Query()
	f := worldforge.ProposalFilter{WorldID: worldID, Status: v.Get("status"), ChangesetID: v.Get("changeset")}
	if f.Status != "" && !proposalStatuses[f.Status] {
		writeError(w, worldforge.BadRequest("status must be pending, committed or rejected"))
		return
	}
	if f.ChangesetID != "" && !worldforge.ValidChangesetID(f.ChangesetID) {
		writeError(w, worldforge.BadRequest("changeset must match %s", worldforge.ChangesetIDPattern))
		return
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 200 {
			writeError(w, worldforge.BadRequest("limit must be between 1 and 200"))
			return
		}
		f.Limit = n
	}
	list, err := s.opts.Store.ListProposals(r.Context(), f)
	if err != nil {
		s.storeError(w, "list proposals", err)
		return
	}
	if list == nil {
		list = []worldforge.Proposal{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"proposals": list})
}

// proposalID reads and checks the {id} of a /proposals/{id} route.
func proposalID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if !worldforge.ValidID("prop", id) {
		writeError(w, worldforge.BadRequest("%q is not a proposal id", id))
		return "", false
	}
	return id, true
}

func (s *Server) getProposal(w http.ResponseWriter, r *http.Request) {
	_, owner, id, ok := proposalCaller(w, r)
	if !ok {
		return
	}
	p, err := s.opts.Store.FindProposal(r.Context(), id)
	if err == nil {
		err = s.review.CanReview(r.Context(), owner, p)
	}
	if err != nil {
		s.storeError(w, "get proposal", err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// proposalCaller is caller plus the checked {id} of a /proposals/{id}
// route.
func proposalCaller(w http.ResponseWriter, r *http.Request) (a *worldforge.Actor, owner, id string, ok bool) {
	if a, owner, ok = caller(w, r); !ok {
		return nil, "", "", false
	}
	if id, ok = proposalID(w, r); !ok {
		return nil, "", "", false
	}
	return a, owner, id, true
}

func (s *Server) commitProposal(w http.ResponseWriter, r *http.Request) {
	a, owner, id, ok := proposalCaller(w, r)
	if !ok {
		return
	}
	res, err := s.review.Commit(r.Context(), owner, a.KeyID, review.Via{Route: "POST /proposals/{id}/commit"}, id, nil)
	if err != nil {
		s.storeError(w, "commit proposal", err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) rejectProposal(w http.ResponseWriter, r *http.Request) {
	a, owner, id, ok := proposalCaller(w, r)
	if !ok {
		return
	}
	p, err := s.review.Reject(r.Context(), owner, a.KeyID, review.Via{Route: "POST /proposals/{id}/reject"}, id)
	if err != nil {
		s.storeError(w, "reject proposal", err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) commitChangeset(w http.ResponseWriter, r *http.Request) {
	a, owner, ok := caller(w, r)
	if !ok {
		return
	}
	cs := r.PathValue("changeset")
	if !worldforge.ValidChangesetID(cs) {
		writeError(w, worldforge.BadRequest("changeset must match %s", worldforge.ChangesetIDPattern))
		return
	}
	res, err := s.review.CommitChangeset(r.Context(), owner, a.KeyID,
		review.Via{Route: "POST /worlds/{id}/changesets/{changeset}/commit"}, r.PathValue("id"), cs)
	if err != nil {
		s.storeError(w, "commit changeset", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": res})
}

// ruleRequest is the body of POST /auto-accept-rules.
type ruleRequest struct {
	WorldID string   `json:"worldId"`
	ActorID string   `json:"actorId"`
	KeyID   string   `json:"keyId"`
	Kinds   []string `json:"kinds"`
}

func (s *Server) listRules(w http.ResponseWriter, r *http.Request) {
	_, owner, ok := caller(w, r)
	if !ok {
		return
	}
	rules, err := s.opts.Store.ListAutoAcceptRules(r.Context(), owner)
	if err != nil {
		s.storeError(w, "list rules", err)
		return
	}
	if rules == nil {
		rules = []worldforge.AutoAcceptRule{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"rules": rules})
}

// createRule makes an auto-accept rule of the caller's. It must name whom
// it trusts (actorId or keyId); a worldId must be a world the caller owns.
func (s *Server) createRule(w http.ResponseWriter, r *http.Request) {
	a, owner, ok := caller(w, r)
	if !ok {
		return
	}
	var req ruleRequest
	if err := s.readJSON(w, r, &req, false); err != nil {
		writeError(w, err)
		return
	}
	rule := &worldforge.AutoAcceptRule{OwnerID: owner, WorldID: req.WorldID, ActorID: req.ActorID, KeyID: req.KeyID, Kinds: req.Kinds}
	if err := rule.Check(); err != nil {
		writeError(w, err)
		return
	}
	if req.ActorID == "" && req.KeyID == "" {
		writeError(w, worldforge.BadRequest("a rule must name the actorId or keyId whose proposals it accepts"))
		return
	}
	if req.WorldID != "" {
		role, err := s.opts.Store.WorldRole(r.Context(), req.WorldID, owner)
		if err != nil {
			s.storeError(w, "create rule", err)
			return
		}
		if role != worldforge.RoleOwner {
			writeError(w, worldforge.ErrNotFound)
			return
		}
	}
	if rule.Kinds == nil {
		rule.Kinds = []string{}
	}
	if err := s.opts.Store.CreateAutoAcceptRule(r.Context(), rule); err != nil {
		s.storeError(w, "create rule", err)
		return
	}
	if err := s.opts.Store.AppendAudit(r.Context(), &worldforge.AuditEntry{ActorID: owner, KeyID: a.KeyID,
		Route: "POST /auto-accept-rules", TargetType: "auto_accept_rule", TargetID: rule.ID, WorldID: rule.WorldID, Outcome: "ok"}); err != nil {
		s.storeError(w, "create rule: audit", err)
		return
	}
	writeJSON(w, http.StatusCreated, rule)
}

func (s *Server) deleteRule(w http.ResponseWriter, r *http.Request) {
	a, owner, ok := caller(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if err := s.opts.Store.DeleteAutoAcceptRule(r.Context(), owner, id); err != nil {
		s.storeError(w, "delete rule", err)
		return
	}
	if err := s.opts.Store.AppendAudit(r.Context(), &worldforge.AuditEntry{ActorID: owner, KeyID: a.KeyID,
		Route: "DELETE /auto-accept-rules/{id}", TargetType: "auto_accept_rule", TargetID: id, Outcome: "ok"}); err != nil {
		s.storeError(w, "delete rule: audit", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
