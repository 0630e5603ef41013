package diffview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine/lore"
)

// State is the current state of what a proposal changes, as read from
// the store. A nil pointer is a row that does not exist (a new row, or
// one deleted since).
type State struct {
	// Doc is the quest or encounter a change proposal targets.
	Doc *wf.Quest
	// Page is the wiki page a wiki_edit targets.
	Page *wf.WikiPage
	// Parent is the parent place an atlas_place names.
	Parent *wf.AtlasNode
	// Lore holds the stored entities the operations of a lore proposal
	// touch (absent ones are not listed).
	Lore []wf.LoreEntity
}

// Change says how a field differs; its value is the CSS class the
// templates give the row.
type Change string

// The changes.
const (
	Unchanged Change = "same"
	Added     Change = "added"
	Removed   Change = "removed"
	Modified  Change = "changed"
)

// Field is one field's old and new value, as text for people: strings as
// they are, other JSON values as compact JSON, "" for absent (OldSet and
// NewSet tell absent from empty).
type Field struct {
	Name           string
	Old, New       string
	OldSet, NewSet bool
	Change         Change
	// Lines is the line diff of a multi-line text value, nil otherwise.
	Lines *LineDiff
}

// field compares one value.
func field(name string, old, new string, oldSet, newSet bool) Field {
	f := Field{Name: name, Old: old, New: new, OldSet: oldSet, NewSet: newSet}
	switch {
	case oldSet && newSet && old == new:
		f.Change = Unchanged
	case oldSet && newSet:
		f.Change = Modified
	case newSet:
		f.Change = Added
	case oldSet:
		f.Change = Removed
	default:
		f.Change = Unchanged
	}
	if f.Change != Unchanged && (strings.Contains(old, "\n") || strings.Contains(new, "\n")) {
		f.Lines = Lines(old, new)
	}
	return f
}

// LoreOp is the diff of one operation of a lore proposal.
type LoreOp struct {
	// Index is the operation's position (from 0).
	Index      int
	Op         string // upsert, add or remove
	Collection string
	ID, Name   string
	PresetID   string
	// Effect is what committing it would do, given the entity's state
	// after the proposal's earlier operations: "create", "replace",
	// "unchanged" (an upsert of an identical entity), "keep existing"
	// (an add whose id is taken: nothing changes), "delete" or "nothing
	// to remove".
	Effect string
	// Valid and Verdict are the lore schema's verdict on the new entity
	// (upsert and add): Verdict is "valid" or why it is not. A remove has
	// no verdict (Verdict "").
	Valid   bool
	Verdict string
	// Fields compare the entity before and after the operation, field by
	// field (every field of either side, in the new entity's order).
	Fields []Field
}

// View is what a proposal would change.
type View struct {
	Kind string
	// Summary is one sentence for people: "New wiki page “Harbor”".
	Summary string
	// Target names the current row: "Quest “Old name” (version 3)", ""
	// for a new row.
	Target string
	// Gone says that the row the proposal changes (or the place it is
	// put under) no longer exists.
	Gone bool
	// Fields are the field diffs (quests, encounters, wiki pages, atlas
	// places).
	Fields []Field
	// Body is the line diff of a wiki body (new page: against empty).
	Body *LineDiff
	// Ops are the operations of a lore proposal.
	Ops []LoreOp
	// Problem says why the payload could not be read ("" if it could).
	Problem string
}

// Proposal is the diff of p against the current state.
func Proposal(p *wf.Proposal, cur State) *View {
	v := &View{Kind: p.Kind}
	var err error
	switch p.Kind {
	case wf.ProposalQuest, wf.ProposalEncounter:
		err = docView(v, p, cur.Doc)
	case wf.ProposalWikiPage:
		err = wikiPageView(v, p)
	case wf.ProposalWikiEdit:
		err = wikiEditView(v, p, cur.Page)
	case wf.ProposalAtlas:
		err = atlasView(v, p, cur.Parent)
	case wf.ProposalWorld:
		err = loreView(v, p, cur.Lore)
	default:
		err = fmt.Errorf("unknown proposal kind %q", p.Kind)
	}
	if err != nil {
		v.Problem = err.Error()
	}
	return v
}

// decode reads a payload strictly enough to show it: it must be a JSON
// object of the kind's shape.
func decode[T any](raw json.RawMessage) (T, error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("the payload cannot be read: %w", err)
	}
	return v, nil
}

func docView(v *View, p *wf.Proposal, row *wf.Quest) error {
	what := "quest"
	if p.Kind == wf.ProposalEncounter {
		what = "encounter"
	}
	pl, err := decode[wf.QuestPayload](p.Payload)
	if err != nil {
		return err
	}
	if p.TargetID == "" {
		v.Summary = fmt.Sprintf("New %s “%s”", what, pl.Name)
		v.Fields = append([]Field{field("name", "", pl.Name, false, true)}, objectFields(nil, pl.JSON)...)
		return nil
	}
	if row == nil {
		v.Gone = true
		v.Summary = fmt.Sprintf("Change of %s %s that no longer exists", article(what), what)
		v.Fields = append([]Field{field("name", "", pl.Name, false, true)}, objectFields(nil, pl.JSON)...)
		return nil
	}
	v.Summary = fmt.Sprintf("Change of %s “%s”", what, row.Name)
	v.Target = fmt.Sprintf("%s “%s” (version %d)", upper(what), row.Name, row.Version)
	v.Fields = append([]Field{field("name", row.Name, pl.Name, true, true)}, objectFields(row.JSON, pl.JSON)...)
	return nil
}

func wikiPageView(v *View, p *wf.Proposal) error {
	pl, err := decode[wf.WikiPagePayload](p.Payload)
	if err != nil {
		return err
	}
	v.Summary = fmt.Sprintf("New wiki page “%s”", pl.Title)
	v.Fields = []Field{
		field("title", "", pl.Title, false, true),
		field("kind", "", pl.Kind, false, true),
		field("audience", "", pl.Audience, false, true),
	}
	v.Body = Lines("", pl.Body)
	return nil
}

func wikiEditView(v *View, p *wf.Proposal, page *wf.WikiPage) error {
	pl, err := decode[wf.WikiEditPayload](p.Payload)
	if err != nil {
		return err
	}
	if page == nil {
		v.Gone = true
		v.Summary = "Edit of a wiki page that no longer exists"
		page = &wf.WikiPage{}
	} else {
		v.Summary = fmt.Sprintf("Edit of wiki page “%s”", page.Title)
		v.Target = fmt.Sprintf("Wiki page “%s” (version %d)", page.Title, page.Version)
	}
	known := !v.Gone
	edit := func(name, cur string, to *string) Field {
		if to == nil {
			return field(name, cur, cur, known, known)
		}
		return field(name, cur, *to, known, true)
	}
	v.Fields = []Field{edit("title", page.Title, pl.Title), edit("audience", page.Audience, pl.Audience)}
	if pl.Body != nil {
		v.Body = Lines(page.Body, *pl.Body)
	}
	return nil
}

func atlasView(v *View, p *wf.Proposal, parent *wf.AtlasNode) error {
	pl, err := decode[wf.AtlasPlacePayload](p.Payload)
	if err != nil {
		return err
	}
	v.Summary = fmt.Sprintf("New atlas place “%s”", pl.Name)
	level := "1"
	parentText := "(none: a top-level place)"
	if pl.ParentID != "" {
		if parent == nil {
			v.Gone = true
			parentText = pl.ParentID + " (no longer exists)"
			level = "?"
		} else {
			parentText = fmt.Sprintf("%s (%s, level %d)", parent.Name, parent.ID, parent.Level)
			level = fmt.Sprint(parent.Level + 1)
		}
	}
	v.Fields = []Field{
		field("name", "", pl.Name, false, true),
		field("terrainType", "", pl.TerrainType, false, pl.TerrainType != ""),
		field("parent", "", parentText, false, true),
		field("level", "", level, false, true),
	}
	return nil
}

// loreKey names an entity of a world.
type loreKey struct{ collection, id string }

func loreView(v *View, p *wf.Proposal, stored []wf.LoreEntity) error {
	pl, err := decode[wf.LorePayload](p.Payload)
	if err != nil {
		return err
	}
	// state is each touched entity's JSON as the operations so far left
	// it (absent: no entity).
	state := map[loreKey]json.RawMessage{}
	for _, e := range stored {
		state[loreKey{e.Collection, e.ID}] = e.JSON
	}
	counts := map[string]int{}
	for i, op := range pl.Operations {
		k := loreKey{op.Collection, op.ID}
		old, exists := state[k]
		o := LoreOp{Index: i, Op: op.Op, Collection: op.Collection, ID: op.ID, Name: op.Name, PresetID: op.PresetID}
		switch op.Op {
		case wf.LoreOpUpsert, wf.LoreOpAdd:
			o.Valid, o.Verdict = verdict(op)
			switch {
			case op.Op == wf.LoreOpAdd && exists:
				o.Effect = "keep existing"
				o.Fields = objectFields(old, old)
			case !exists:
				o.Effect = "create"
				o.Fields = objectFields(nil, op.Entity)
				state[k] = op.Entity
			default:
				o.Effect = "replace"
				if jsonEqual(old, op.Entity) {
					o.Effect = "unchanged"
				}
				o.Fields = objectFields(old, op.Entity)
				state[k] = op.Entity
			}
		case wf.LoreOpRemove:
			if exists {
				o.Effect = "delete"
				o.Fields = objectFields(old, nil)
				if o.Name == "" {
					o.Name = nameOf(old)
				}
				delete(state, k)
			} else {
				o.Effect = "nothing to remove"
			}
		default:
			o.Effect = "unknown operation"
			o.Verdict = fmt.Sprintf("unknown operation %q", op.Op)
		}
		counts[o.Effect]++
		v.Ops = append(v.Ops, o)
	}
	v.Summary = fmt.Sprintf("Lore: %d operation%s", len(pl.Operations), plural(len(pl.Operations)))
	var parts []string
	for _, e := range []string{"create", "replace", "delete", "unchanged", "keep existing", "nothing to remove", "unknown operation"} {
		if n := counts[e]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, e))
		}
	}
	if len(parts) > 0 {
		v.Summary += " (" + strings.Join(parts, ", ") + ")"
	}
	return nil
}

// verdict is the lore schema's verdict on an upserted or added entity:
// it must validate, and its id and name must be the operation's.
func verdict(op wf.StoredLoreOp) (bool, string) {
	if op.Entity == nil {
		return false, "the operation carries no entity"
	}
	e, err := lore.Validate(op.Collection, op.Entity)
	if err != nil {
		var we *wf.Error
		if errors.As(err, &we) {
			return false, we.Detail
		}
		return false, err.Error()
	}
	if e.ID != op.ID {
		return false, fmt.Sprintf("the entity's id %q is not the operation's %q", e.ID, op.ID)
	}
	return true, "valid"
}

// nameOf is the name in an entity's JSON, "" if none.
func nameOf(raw json.RawMessage) string {
	var e struct {
		Name string `json:"name"`
	}
	json.Unmarshal(raw, &e)
	return e.Name
}

// member is one top-level member of a JSON object.
type member struct {
	key string
	raw json.RawMessage
}

// members lists the top-level members of a JSON object in document
// order; ok is false for anything that is not one (nil or null: no
// members, ok).
func members(raw json.RawMessage) (list []member, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		list = append(list, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	return list, true
}

// objectFields compares two JSON objects member by member: the new
// object's members in its order, then those only the old one has. A
// side that is not an object is compared whole, as the field "json".
func objectFields(old, new json.RawMessage) []Field {
	om, okOld := members(old)
	nm, okNew := members(new)
	if !okOld || !okNew {
		return []Field{field("json", display(old), display(new), len(old) > 0, len(new) > 0)}
	}
	oldBy := map[string]json.RawMessage{}
	for _, m := range om {
		oldBy[m.key] = m.raw
	}
	seen := map[string]bool{}
	var out []Field
	for _, m := range nm {
		if seen[m.key] {
			continue // a duplicate key: the first is shown
		}
		seen[m.key] = true
		o, had := oldBy[m.key]
		f := field(m.key, display(o), display(m.raw), had, true)
		if had {
			// Compare values, not their renderings: 1 and 1.0 are one
			// value, "1" and 1 are two.
			if jsonEqual(o, m.raw) {
				f.Change, f.Lines = Unchanged, nil
			} else if f.Change == Unchanged {
				f.Change = Modified
			}
		}
		out = append(out, f)
	}
	for _, m := range om {
		if !seen[m.key] {
			seen[m.key] = true
			out = append(out, field(m.key, display(m.raw), "", true, false))
		}
	}
	return out
}

// display renders a JSON value for people: a string as its text, any
// other value as compact JSON, nothing as "".
func display(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// jsonEqual reports whether two JSON documents hold the same value.
func jsonEqual(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func article(noun string) string {
	if strings.IndexByte("aeiou", noun[0]) >= 0 {
		return "an"
	}
	return "a"
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
