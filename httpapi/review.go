package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
)

// The review queue over REST (scopes and rules: package app). The world's
// owner and GMs list, read, commit and reject its proposals; for a quest
// or encounter proposal outside any world, its row's owner does. Everyone
// else gets 404, as for a missing proposal. Commits and rejections write
// their audit row in their own transaction.
//
//	GET  /worlds/{id}/proposals?status=&changeset=&limit=   {"proposals":[…]}, newest first
//	GET  /proposals/{id}                                     the proposal
//	POST /proposals/{id}/commit                              the commit result
//	POST /proposals/{id}/reject                              the rejected proposal; optional body {"reason":"…"}
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
	list, err := s.app.ListProposals(r.Context(), request(r), r.PathValue("id"), func(q *app.ProposalQuery) error {
		return proposalQuery(r.URL.Query(), q)
	})
	if err != nil {
		s.storeError(w, "list proposals", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"proposals": list})
}

// proposalQuery reads the filter of GET /worlds/{id}/proposals.
func proposalQuery(v url.Values, q *app.ProposalQuery) error {
	q.Status, q.ChangesetID = v.Get("status"), v.Get("changeset")
	if q.Status != "" && !proposalStatuses[q.Status] {
		return worldforge.BadRequest("status must be pending, committed or rejected")
	}
	if q.ChangesetID != "" && !worldforge.ValidChangesetID(q.ChangesetID) {
		return worldforge.BadRequest("changeset must match %s", worldforge.ChangesetIDPattern)
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 200 {
			return worldforge.BadRequest("limit must be between 1 and 200")
		}
		q.Limit = n
	}
	return nil
}

func (s *Server) getProposal(w http.ResponseWriter, r *http.Request) {
	p, err := s.app.GetProposal(r.Context(), request(r), r.PathValue("id"))
	if err != nil {
		s.storeError(w, "get proposal", err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) commitProposal(w http.ResponseWriter, r *http.Request) {
	res, err := s.app.CommitProposal(r.Context(), request(r), r.PathValue("id"))
	if err != nil {
		s.storeError(w, "commit proposal", err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

const rejectRoute = "POST /proposals/{id}/reject"

// rejectRequest is the optional body of POST /proposals/{id}/reject.
type rejectRequest struct {
	Reason string `json:"reason"`
}

func (s *Server) rejectProposal(w http.ResponseWriter, r *http.Request) {
	// The body is read only once the caller is admitted (scopes, owner),
	// as the other bodies are read inside their operation.
	req := request(r)
	row, ok := app.RouteAccess(rejectRoute)
	if !ok {
		s.storeError(w, "reject proposal", errors.New("no access row for "+rejectRoute))
		return
	}
	if _, err := app.Admit(req, row); err != nil {
		s.storeError(w, "reject proposal", err)
		return
	}
	var body rejectRequest
	if err := s.readOptionalJSON(w, r, &body); err != nil {
		s.storeError(w, "reject proposal", err)
		return
	}
	p, err := s.app.RejectProposal(r.Context(), req, r.PathValue("id"), body.Reason)
	if err != nil {
		s.storeError(w, "reject proposal", err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) commitChangeset(w http.ResponseWriter, r *http.Request) {
	res, err := s.app.CommitChangeset(r.Context(), request(r), r.PathValue("id"), r.PathValue("changeset"))
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
	rules, err := s.app.ListAutoAcceptRules(r.Context(), request(r))
	if err != nil {
		s.storeError(w, "list rules", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"rules": rules})
}

func (s *Server) createRule(w http.ResponseWriter, r *http.Request) {
	rule, err := s.app.CreateAutoAcceptRule(r.Context(), request(r), func(in *app.RuleArgs) error {
		var req ruleRequest
		if err := s.readJSON(w, r, &req, false); err != nil {
			return err
		}
		*in = app.RuleArgs{WorldID: req.WorldID, ActorID: req.ActorID, KeyID: req.KeyID, Kinds: req.Kinds}
		return nil
	})
	if err != nil {
		s.storeError(w, "create rule", err)
		return
	}
	writeJSON(w, http.StatusCreated, rule)
}

func (s *Server) deleteRule(w http.ResponseWriter, r *http.Request) {
	if err := s.app.DeleteAutoAcceptRule(r.Context(), request(r), r.PathValue("id")); err != nil {
		s.storeError(w, "delete rule", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
