package worldforge

import (
	"slices"
	"unicode/utf8"
)

// Bounds of the list-valued arguments of the MCP tools and REST routes, and
// of the strings the server stores or echoes back. They are defined here
// once: the tool input schemas (package mcpserver) carry them as maxItems
// and maxLength, the REST decoders (package httpapi) apply the same checks
// through POIQuery.Check and AutoAcceptRule.Check, and Bounds lists them
// for the documentation and the tests. A list over its bound is refused
// with exactly TooManyItems' text, a string with TooLong's, over MCP and
// REST alike, before anything is read or written.
const (
	// MaxPOITags bounds the tags of a POI search (search_pois
	// request.tags; the REST POI search's tags), and MaxPOITagLength each
	// tag, in characters.
	MaxPOITags      = 32
	MaxPOITagLength = 64
	// MaxRuleKinds bounds an auto-accept rule's kinds: each proposal kind
	// at most once.
	MaxRuleKinds = 6
	// MaxIDLength bounds every id argument, in characters: a tool's ids,
	// an auto-accept rule's worldId, actorId and keyId.
	MaxIDLength = 100
)

// ProposalKinds are the kinds a proposal, and an auto-accept rule, may
// name.
var ProposalKinds = []string{ProposalQuest, ProposalEncounter, ProposalWikiPage, ProposalWikiEdit, ProposalAtlas, ProposalWorld}

// Bound is one bounded argument: a list of at most Max items, or a string
// of at most Max characters (code points, as JSON Schema's maxLength
// counts them).
type Bound struct {
	// Where is the tool's name, or the REST route ("POST /auto-accept-rules").
	Where string
	// Field is the argument as errors name it; "[]" stands for each item
	// of a list (the error names its index: request.tags[3]).
	Field string
	Max   int
	// Items is true for a list (Max items), false for a string (Max
	// characters).
	Items bool
}

// Bounds lists every bounded list argument of the tools and REST routes,
// the bound of their items, and the strings the REST routes store or echo
// back. (The tools' other strings are bounded by their input schemas,
// which tools/list shows.)
var Bounds = []Bound{
	{ToolSearchPOIs, "request.tags", MaxPOITags, true},
	{ToolSearchPOIs, "request.tags[]", MaxPOITagLength, false},
	{ToolProposeLore, "operations", MaxLoreOperations, true},
	{"GET /worlds/{id}/pois/search", "request.tags", MaxPOITags, true},
	{"GET /worlds/{id}/pois/search", "request.tags[]", MaxPOITagLength, false},
	{"GET /worlds/{id}/pois/search", "request.name", MaxQueryLength, false},
	{"GET /worlds/{id}/pois/search", "request.category", MaxQueryLength, false},
	{"POST /worlds/{id}/pois/search", "request.tags", MaxPOITags, true},
	{"POST /worlds/{id}/pois/search", "request.tags[]", MaxPOITagLength, false},
	{"POST /worlds/{id}/pois/search", "request.name", MaxQueryLength, false},
	{"POST /worlds/{id}/pois/search", "request.category", MaxQueryLength, false},
	{"POST /auto-accept-rules", "kinds", MaxRuleKinds, true},
	{"POST /auto-accept-rules", "worldId", MaxIDLength, false},
	{"POST /auto-accept-rules", "actorId", MaxIDLength, false},
	{"POST /auto-accept-rules", "keyId", MaxIDLength, false},
}

// TooManyItems is the error of a list over its bound:
// "bad_request: <field> has <n> items; at most <max>".
func TooManyItems(field string, n, max int) *Error {
	return BadRequest("%s has %d items; at most %d", field, n, max)
}

// TooLong is the error of a string over its bound:
// "bad_request: <field> has <n> characters; at most <max>".
func TooLong(field string, n, max int) *Error {
	return BadRequest("%s has %d characters; at most %d", field, n, max)
}

// CheckItems returns TooManyItems when n is over max, else nil.
func CheckItems(field string, n, max int) error {
	if n > max {
		return TooManyItems(field, n, max)
	}
	return nil
}

// CheckLength returns TooLong when s has more than max characters, else
// nil. It counts only as far as it must.
func CheckLength(field, s string, max int) error {
	if len(s) <= max { // never more characters than bytes
		return nil
	}
	if n := utf8.RuneCountInString(s); n > max {
		return TooLong(field, n, max)
	}
	return nil
}

// Check refuses a rule over the bounds (worldId, actorId and keyId of at
// most MaxIDLength characters, at most MaxRuleKinds kinds) or with a kind
// that is not a proposal kind or is listed twice. It does not check that
// the rule names whom it trusts, nor the world: the REST route does.
func (r *AutoAcceptRule) Check() error {
	for _, f := range []struct{ name, value string }{{"worldId", r.WorldID}, {"actorId", r.ActorID}, {"keyId", r.KeyID}} {
		if err := CheckLength(f.name, f.value, MaxIDLength); err != nil {
			return err
		}
	}
	if err := CheckItems("kinds", len(r.Kinds), MaxRuleKinds); err != nil {
		return err
	}
	for i, k := range r.Kinds {
		if !slices.Contains(ProposalKinds, k) {
			if utf8.RuneCountInString(k) > MaxIDLength {
				return BadRequest("kinds[%d] is not a proposal kind", i)
			}
			return BadRequest("kinds[%d] %q is not a proposal kind", i, k)
		}
		if slices.Contains(r.Kinds[:i], k) {
			return BadRequest("kinds[%d] %q is listed twice", i, k)
		}
	}
	return nil
}
