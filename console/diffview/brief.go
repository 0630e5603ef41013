package diffview

import (
	"fmt"
	"strings"

	wf "github.com/worldforge-go/worldforge"
)

// Brief is a one-line description of what a proposal does, read from its
// payload alone (no current state): what a queue row shows next to the
// proposer's own diff summary. A payload that cannot be read says so.
func Brief(p *wf.Proposal) string {
	switch p.Kind {
	case wf.ProposalQuest, wf.ProposalEncounter:
		pl, err := decode[wf.QuestPayload](p.Payload)
		if err != nil {
			return "Unreadable payload"
		}
		if p.TargetID == "" {
			return fmt.Sprintf("New %s “%s”", p.Kind, pl.Name)
		}
		return fmt.Sprintf("Change of %s %s, named “%s”", article(p.Kind), p.Kind, pl.Name)
	case wf.ProposalWikiPage:
		pl, err := decode[wf.WikiPagePayload](p.Payload)
		if err != nil {
			return "Unreadable payload"
		}
		return fmt.Sprintf("New wiki page “%s”", pl.Title)
	case wf.ProposalWikiEdit:
		pl, err := decode[wf.WikiEditPayload](p.Payload)
		if err != nil {
			return "Unreadable payload"
		}
		var what []string
		if pl.Title != nil {
			what = append(what, "title")
		}
		if pl.Body != nil {
			what = append(what, "body")
		}
		if pl.Audience != nil {
			what = append(what, "audience")
		}
		return "Edit of a wiki page: " + strings.Join(what, ", ")
	case wf.ProposalAtlas:
		pl, err := decode[wf.AtlasPlacePayload](p.Payload)
		if err != nil {
			return "Unreadable payload"
		}
		return fmt.Sprintf("New atlas place “%s”", pl.Name)
	case wf.ProposalWorld:
		pl, err := decode[wf.LorePayload](p.Payload)
		if err != nil {
			return "Unreadable payload"
		}
		counts := map[string]int{}
		for _, op := range pl.Operations {
			counts[op.Op]++
		}
		var parts []string
		for _, op := range []string{wf.LoreOpUpsert, wf.LoreOpAdd, wf.LoreOpRemove} {
			if n := counts[op]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, op))
			}
		}
		s := fmt.Sprintf("Lore: %d operation%s", len(pl.Operations), plural(len(pl.Operations)))
		if len(parts) > 0 {
			s += " (" + strings.Join(parts, ", ") + ")"
		}
		return s
	}
	return fmt.Sprintf("Unknown kind %q", p.Kind)
}
