package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/console/diffview"
)

// The review pages: the queue of pending proposals across the worlds the
// signed-in user reviews (live: new proposals are announced without a
// reload), one proposal with its diff against the current state and the
// conflict a commit would meet, and the commit, reject and
// commit-changeset forms. Every read and action goes through package app
// (ReviewQueue, ReviewProposal, CommitProposal, RejectProposal,
// CommitChangeset) with the console route in the audit row.

func init() { routeSets = append(routeSets, reviewRoutes) }

func reviewRoutes(c *Console) []route {
	return []route{
		{pattern: "GET /queue", h: c.queue},
		{pattern: "GET /queue/events", h: c.queueEvents},
		{pattern: "GET /p/{id}", h: c.proposal},
		{pattern: "POST /p/{id}/commit", h: c.commitProposal},
		{pattern: "POST /p/{id}/reject", h: c.rejectProposal},
		{pattern: "POST /w/{world}/changesets/{cs}/commit", h: c.commitChangeset},
	}
}

// queueFilter is the queue's filter form as the request gave it.
type queueFilter struct {
	World, Kind, Actor, Key, Status string
}

// queueQuery reads the queue's filters and page cursor from the URL.
func queueQuery(r *http.Request) (app.QueueQuery, queueFilter, error) {
	v := r.URL.Query()
	f := queueFilter{
		World: strings.TrimSpace(v.Get("world")), Kind: v.Get("kind"),
		Actor: strings.TrimSpace(v.Get("actor")), Key: strings.TrimSpace(v.Get("key")), Status: v.Get("status"),
	}
	q := app.QueueQuery{WorldID: f.World, Kind: f.Kind, ActorID: f.Actor, KeyID: f.Key, Status: f.Status}
	if s := v.Get("before"); s != "" {
		cur, err := parseCursor(s)
		if err != nil {
			return q, f, err
		}
		q.Before = cur
	}
	return q, f, nil
}

// formatCursor and parseCursor carry a page cursor in a URL:
// "<unix nanoseconds>.<proposal id>".
func formatCursor(c *wf.ProposalCursor) string {
	return strconv.FormatInt(c.CreatedAt.UnixNano(), 10) + "." + c.ID
}

func parseCursor(s string) (*wf.ProposalCursor, error) {
	ns, id, ok := strings.Cut(s, ".")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || n <= 0 || !wf.ValidID("prop", id) {
		return nil, wf.BadRequest("the page link is broken (before=%q); start again from the first page", truncate(s, 80))
	}
	return &wf.ProposalCursor{CreatedAt: time.Unix(0, n).UTC(), ID: id}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// queueRow is one proposal of the queue as its row shows it.
type queueRow struct {
	P     wf.Proposal
	World string // the world's name
	User  string // the proposer's name
	Key   string // the key's name, or its prefix; "" for a session
	Brief string
}

// queueGroup is the rows of one changeset (or a single proposal filed
// outside any), in the queue's order.
type queueGroup struct {
	ChangesetID string
	WorldID     string
	World       string
	Rows        []queueRow
}

type queueData struct {
	Filter   queueFilter
	Worlds   []wf.WorldListing
	Kinds    []string
	Statuses []string
	Groups   []queueGroup
	Total    int
	Shown    int
	// First is set on a later page (a link back to the first).
	First string
	// Next is the next page's URL, "" on the last.
	Next string
	// Live is set when the page announces new proposals (the pending
	// queue): the events URL and the state the page shows.
	Live       bool
	EventsURL  string
	LiveTotal  int
	LiveNewest string
}

// names looks up people's and keys' names for a page of proposals, each
// once.
type names struct {
	c     *Console
	users map[string]string
	keys  map[string]string
}

func (c *Console) names() *names {
	return &names{c: c, users: map[string]string{}, keys: map[string]string{}}
}

func (n *names) user(ctx context.Context, id string) string {
	if id == "" {
		return ""
	}
	if s, ok := n.users[id]; ok {
		return s
	}
	s := id
	if u, err := n.c.store.FindUserByID(ctx, id); err == nil {
		s = u.Name
	} else if !errors.Is(err, wf.ErrNotFound) {
		n.c.log.WarnContext(ctx, "console: user name", "user", id, "err", err)
	}
	n.users[id] = s
	return s
}

func (n *names) key(ctx context.Context, id string) string {
	if id == "" {
		return ""
	}
	if s, ok := n.keys[id]; ok {
		return s
	}
	s := id
	if k, err := n.c.store.FindAPIKeyByID(ctx, id); err == nil {
		s = k.Name
		if s == "" {
			s = k.Prefix + "…"
		}
	} else if !errors.Is(err, wf.ErrNotFound) {
		n.c.log.WarnContext(ctx, "console: key name", "key", id, "err", err)
	}
	n.keys[id] = s
	return s
}

// queueURL is the queue's URL with the filter and more parameters.
func queueURL(f queueFilter, extra ...string) string {
	return withQuery("/queue", append([]string{"world", f.World, "kind", f.Kind, "actor", f.Actor, "key", f.Key, "status", f.Status}, extra...)...)
}

func (c *Console) queue(w http.ResponseWriter, r *http.Request, v *visit) {
	ctx := r.Context()
	q, f, err := queueQuery(r)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	page, err := c.app.ReviewQueue(ctx, v.req(), q)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	worlds, err := c.app.ListReviewWorlds(ctx, v.req())
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	worldNames := map[string]string{}
	for _, l := range worlds {
		worldNames[l.World.ID] = l.World.Name
	}
	d := &queueData{Filter: f, Worlds: worlds, Kinds: wf.ProposalKinds, Statuses: app.ProposalStatuses(),
		Total: page.Total, Shown: len(page.Proposals)}
	n := c.names()
	at := map[string]int{} // changeset key → index in Groups
	for _, p := range page.Proposals {
		row := queueRow{P: p, World: worldNames[p.WorldID], User: n.user(ctx, p.ActorID), Key: n.key(ctx, p.KeyID), Brief: diffview.Brief(&p)}
		if p.ChangesetID == "" {
			d.Groups = append(d.Groups, queueGroup{WorldID: p.WorldID, World: row.World, Rows: []queueRow{row}})
			continue
		}
		k := p.WorldID + "\x00" + p.ChangesetID
		i, ok := at[k]
		if !ok {
			i = len(d.Groups)
			at[k] = i
			d.Groups = append(d.Groups, queueGroup{ChangesetID: p.ChangesetID, WorldID: p.WorldID, World: row.World})
		}
		d.Groups[i].Rows = append(d.Groups[i].Rows, row)
	}
	if page.Next != nil {
		d.Next = queueURL(f, "before", formatCursor(page.Next))
	}
	if q.Before != nil {
		d.First = queueURL(f)
	}
	if q.Status == "" || q.Status == wf.ProposalPending {
		d.Live = true
		d.EventsURL = strings.Replace(queueURL(f), "/queue", "/queue/events", 1)
		d.LiveTotal = page.Total
		if q.Before == nil {
			if len(page.Proposals) > 0 {
				d.LiveNewest = page.Proposals[0].ID
			}
		} else if d.LiveNewest, err = c.queueState(ctx, v, q); err != nil {
			c.fail(w, r, v, err)
			return
		}
	}
	c.render(w, r, v, http.StatusOK, "queue", "Review queue", d)
}

// queueState is the newest pending proposal the query selects ("" for
// none).
func (c *Console) queueState(ctx context.Context, v *visit, q app.QueueQuery) (string, error) {
	q.Before, q.Limit, q.Status = nil, 1, ""
	page, err := c.app.ReviewQueue(ctx, v.req(), q)
	if err != nil {
		return "", err
	}
	if len(page.Proposals) == 0 {
		return "", nil
	}
	return page.Proposals[0].ID, nil
}

// liveState is what the queue's event stream reports: how many pending
// proposals the page's filter selects, and the newest of them.
type liveState struct {
	Total  int    `json:"total"`
	Newest string `json:"newest"`
}

// liveMaxAge ends an event stream after a while; the browser reconnects
// (EventSource does on its own), and the session is checked again.
const liveMaxAge = 30 * time.Minute

// liveWriteTimeout bounds each write of an event stream.
const liveWriteTimeout = 10 * time.Second

// liveKeepAlive is how often an unchanged stream sends a comment, so
// that a closed connection is noticed.
const liveKeepAlive = 15 * time.Second

// queueEvents streams server-sent events to the queue page: an event
// "queue" with the live state when the connection opens and whenever it
// changes (the store is read every LiveInterval), and "signout" when the
// session ends. ?once=1 sends the first event and ends.
func (c *Console) queueEvents(w http.ResponseWriter, r *http.Request, v *visit) {
	ctx := r.Context()
	q, _, err := queueQuery(r)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	q.Before, q.Limit, q.Status = nil, 1, ""
	state := func() (liveState, error) {
		page, err := c.app.ReviewQueue(ctx, v.req(), q)
		if err != nil {
			return liveState{}, err
		}
		s := liveState{Total: page.Total}
		if len(page.Proposals) > 0 {
			s.Newest = page.Proposals[0].ID
		}
		return s, nil
	}
	last, err := state()
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// The server's write timeout is for answers, not for a stream meant
	// to stay open: each write gets a deadline of its own instead, so a
	// client that stops reading is still cut off.
	write := func(text string) error {
		_ = rc.SetWriteDeadline(time.Now().Add(liveWriteTimeout)) // ErrNotSupported: no connection (tests)
		if _, err := fmt.Fprint(w, text); err != nil {
			return err
		}
		return rc.Flush()
	}
	send := func(event string, data any) error {
		b, err := json.Marshal(data)
		if err != nil {
			return err
		}
		return write("event: " + event + "\ndata: " + string(b) + "\n\n")
	}
	if write("retry: 5000\n\n") != nil || send("queue", last) != nil || r.URL.Query().Get("once") != "" {
		return
	}
	tick := time.NewTicker(c.opts.LiveInterval)
	defer tick.Stop()
	end := time.NewTimer(liveMaxAge)
	defer end.Stop()
	quiet := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.closing:
			return
		case <-end.C:
			return
		case <-tick.C:
		}
		if _, err := c.auth.Session(ctx, v.secret); errors.Is(err, wf.ErrUnauthorized) {
			send("signout", struct{}{})
			return
		} else if err != nil {
			// The browser reconnects, and the session is checked anew.
			return
		}
		s, err := state()
		if err != nil {
			if ctx.Err() == nil {
				c.log.WarnContext(ctx, "console: queue events", "err", err)
			}
			return
		}
		if s != last {
			last, quiet = s, 0
			if send("queue", s) != nil {
				return
			}
			continue
		}
		if quiet += c.opts.LiveInterval; quiet >= liveKeepAlive {
			quiet = 0
			if write(": keep-alive\n\n") != nil {
				return
			}
		}
	}
}

// proposalData is the proposal page's data.
type proposalData struct {
	Review *app.ProposalReview
	View   *diffview.View
	World  string
	User   string
	Key    string
	// Decider is who committed or rejected it.
	Decider string
	// ConflictText is the foreseen conflict for people.
	ConflictText string
	// Changeset lists the changeset's pending proposals.
	Changeset []changesetRow
	// Conflicts counts the changeset's foreseen conflicts.
	Conflicts int
	// Failure is why the action just tried was refused ("" if none);
	// FailedID names the changeset proposal that failed.
	Failure         string
	FailedID        string
	changesetFailed bool
	// TargetURL is the console page of the row the proposal created or
	// changed, once committed ("" if none).
	TargetURL string
}

type changesetRow struct {
	P        wf.Proposal
	Brief    string
	User     string
	Conflict string
	This     bool
}

// pathProposal is the proposal id a URL names; one that cannot be an id
// is a page that does not exist (404), like a missing one.
func pathProposal(r *http.Request) (string, bool) {
	id := r.PathValue("id")
	return id, wf.ValidID("prop", id)
}

func (c *Console) proposal(w http.ResponseWriter, r *http.Request, v *visit) {
	id, ok := pathProposal(r)
	if !ok {
		c.fail(w, r, v, wf.ErrProposalNotFound)
		return
	}
	c.showProposal(w, r, v, id, http.StatusOK, "", nil)
}

// showProposal renders the proposal page with a status, and the reason an
// action on it was refused; cs, when a changeset commit was refused,
// names the proposal that stopped it ("" when the error did not say).
func (c *Console) showProposal(w http.ResponseWriter, r *http.Request, v *visit, id string, status int, failure string, cs *string) {
	ctx := r.Context()
	rv, err := c.app.ReviewProposal(ctx, v.req(), id)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	p := &rv.Proposal
	d := &proposalData{Review: rv, Failure: failure}
	if cs != nil {
		d.changesetFailed, d.FailedID = true, *cs
	}
	d.View = diffview.Proposal(p, diffview.State{Doc: rv.Target.Doc, Page: rv.Target.Page, Parent: rv.Target.Parent, Lore: rv.Target.Lore})
	if p.WorldID != "" {
		if wh, err := c.store.FindWorldHeader(ctx, p.WorldID); err == nil {
			d.World = wh.Name
		}
	}
	n := c.names()
	d.User, d.Key, d.Decider = n.user(ctx, p.ActorID), n.key(ctx, p.KeyID), n.user(ctx, p.DecidedBy)
	if rv.Conflict != nil && p.Status == wf.ProposalPending {
		d.ConflictText = conflictText(rv.Conflict)
	}
	for _, e := range rv.Changeset {
		row := changesetRow{P: e.Proposal, Brief: diffview.Brief(&e.Proposal), User: n.user(ctx, e.Proposal.ActorID), This: e.Proposal.ID == p.ID}
		if e.Conflict != nil {
			row.Conflict = conflictText(e.Conflict)
			d.Conflicts++
		}
		d.Changeset = append(d.Changeset, row)
	}
	if d.changesetFailed && d.FailedID == "" {
		// The store commits a changeset's proposals oldest first and
		// stops at the first that fails: the first with a conflict now.
		for _, row := range d.Changeset {
			if row.Conflict != "" {
				d.FailedID = row.P.ID
				d.Failure += fmt.Sprintf(" Proposal %s (“%s”): %s", row.P.ID, row.P.DiffSummary, row.Conflict)
				break
			}
		}
	}
	if p.Status == wf.ProposalCommitted && p.WorldID != "" {
		d.TargetURL = "/w/" + p.WorldID
		if p.Kind == wf.ProposalWikiEdit {
			d.TargetURL += "/wiki/" + p.TargetID
		}
	}
	c.render(w, r, v, status, "proposal", "Proposal "+p.ID, d)
}

// conflictText says for people what a commit would meet.
func conflictText(e *wf.Error) string {
	switch e.Code {
	case wf.EVersionConflict:
		return "Version conflict: what this proposal changes was changed since it was filed. A commit would apply nothing."
	case wf.ENotFound:
		return "Not found: what this proposal changes (or the place it goes under) no longer exists. A commit would apply nothing."
	case wf.EConflict:
		if e.Detail == wf.DetailNotPending {
			return "Already decided: it was committed or rejected before."
		}
	}
	return errorText(e)
}

// actionFailed answers a refused commit or rejection: the proposal page
// again, with the status its code calls for and why (the page checks
// again that the caller may see the proposal); anything else is the
// error page.
func (c *Console) actionFailed(w http.ResponseWriter, r *http.Request, v *visit, id string, err error) {
	var e *wf.Error
	if !errors.As(err, &e) || !wf.ValidID("prop", id) {
		c.fail(w, r, v, err)
		return
	}
	switch e.Code {
	case wf.EConflict, wf.EVersionConflict, wf.ENotFound:
		c.showProposal(w, r, v, id, http.StatusConflict, conflictText(e), nil)
	case wf.EBadRequest:
		c.showProposal(w, r, v, id, http.StatusBadRequest, errorText(e), nil)
	default:
		c.fail(w, r, v, err)
	}
}

func (c *Console) commitProposal(w http.ResponseWriter, r *http.Request, v *visit) {
	id, ok := pathProposal(r)
	if !ok {
		c.fail(w, r, v, wf.ErrProposalNotFound)
		return
	}
	res, err := c.app.CommitProposal(r.Context(), v.req(), id)
	if err != nil {
		c.actionFailed(w, r, v, id, err)
		return
	}
	msg := "Committed."
	if res.TargetID != "" {
		msg = fmt.Sprintf("Committed: %s is now at version %d.", res.TargetID, res.Version)
	}
	c.redirect(w, r, "/p/"+id, msg)
}

func (c *Console) rejectProposal(w http.ResponseWriter, r *http.Request, v *visit) {
	id, ok := pathProposal(r)
	if !ok {
		c.fail(w, r, v, wf.ErrProposalNotFound)
		return
	}
	reason := strings.TrimSpace(strings.ReplaceAll(r.PostFormValue("reason"), "\r\n", "\n"))
	if _, err := c.app.RejectProposal(r.Context(), v.req(), id, reason); err != nil {
		c.actionFailed(w, r, v, id, err)
		return
	}
	c.redirect(w, r, "/p/"+id, "Rejected.")
}

// failedProposal finds the proposal a changeset commit names in its
// error ("proposal prop_…: version_conflict").
var failedProposal = regexp.MustCompile(`proposal (prop_[a-z0-9_-]+):`)

func (c *Console) commitChangeset(w http.ResponseWriter, r *http.Request, v *visit) {
	world, cs := r.PathValue("world"), r.PathValue("cs")
	from := r.PostFormValue("from")
	if !wf.ValidChangesetID(cs) {
		c.fail(w, r, v, wf.ErrNotFound)
		return
	}
	res, err := c.app.CommitChangeset(r.Context(), v.req(), world, cs)
	if err == nil {
		c.redirect(w, r, "/queue?world="+url.QueryEscape(world), fmt.Sprintf("Changeset %s committed: %d proposal%s applied.", cs, len(res), plural(len(res))))
		return
	}
	var e *wf.Error
	// The error names the proposal that failed when the store's wrapping
	// reaches here; else the page works it out from the foreseen
	// conflicts.
	failed := ""
	if m := failedProposal.FindStringSubmatch(err.Error()); m != nil {
		failed = m[1]
	}
	if !errors.As(err, &e) {
		c.fail(w, r, v, err)
		return
	}
	var text string
	status := http.StatusConflict
	switch e.Code {
	case wf.EProposalNotFound:
		text = fmt.Sprintf("Changeset %s has no pending proposals left: nothing was committed.", cs)
	case wf.EVersionConflict, wf.EConflict, wf.EBadRequest:
		text = "The changeset was not committed, and nothing of it was applied."
		if failed != "" {
			text += fmt.Sprintf(" Proposal %s: %s", failed, conflictText(e))
		}
		if e.Code == wf.EBadRequest {
			status = http.StatusBadRequest
		}
	case wf.ENotFound:
		// The world itself, for a caller who may not see it, or a
		// target gone: the proposal page tells them apart (it is a 404
		// for whoever may not see the proposal).
		if !wf.ValidID("prop", from) {
			c.fail(w, r, v, err)
			return
		}
		text = "The changeset was not committed, and nothing of it was applied."
	default:
		c.fail(w, r, v, err)
		return
	}
	if !wf.ValidID("prop", from) {
		c.renderError(w, r, v, status, "Changeset not committed", text+" "+errorText(e))
		return
	}
	c.showProposal(w, r, v, from, status, text, &failed)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
