package worldforge

import (
	"strings"
	"testing"
)

// TestRuleCheck: an auto-accept rule over its bounds, with an unknown kind
// or a kind twice is refused with its exact text; at the bounds it passes.
func TestRuleCheck(t *testing.T) {
	if MaxRuleKinds != len(ProposalKinds) {
		t.Fatalf("MaxRuleKinds is %d, but there are %d proposal kinds", MaxRuleKinds, len(ProposalKinds))
	}
	long := strings.Repeat("é", MaxIDLength)
	for _, c := range []struct {
		name string
		r    AutoAcceptRule
		want string // "" for nil
	}{
		{"at the bounds", AutoAcceptRule{WorldID: long, ActorID: long, KeyID: long, Kinds: ProposalKinds}, ""},
		{"no kinds", AutoAcceptRule{ActorID: "user_a"}, ""},
		{"worldId too long", AutoAcceptRule{WorldID: long + "x"}, "bad_request: worldId has 101 characters; at most 100"},
		{"actorId too long", AutoAcceptRule{ActorID: long + "x"}, "bad_request: actorId has 101 characters; at most 100"},
		{"keyId too long", AutoAcceptRule{KeyID: long + "x"}, "bad_request: keyId has 101 characters; at most 100"},
		{"too many kinds", AutoAcceptRule{Kinds: make([]string, 300_000)}, "bad_request: kinds has 300000 items; at most 6"},
		{"unknown kind", AutoAcceptRule{Kinds: []string{ProposalQuest, "poem"}}, `bad_request: kinds[1] "poem" is not a proposal kind`},
		{"unknown long kind", AutoAcceptRule{Kinds: []string{strings.Repeat("k", 4<<20)}}, "bad_request: kinds[0] is not a proposal kind"},
		{"kind twice", AutoAcceptRule{Kinds: []string{ProposalQuest, ProposalWorld, ProposalQuest}}, `bad_request: kinds[2] "quest" is listed twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.r.Check()
			if got := errText(err); got != c.want {
				t.Errorf("Check() = %q, want %q", got, c.want)
			}
		})
	}
}

// TestPOIQueryCheckBounds: a POI query over its bounds is refused with
// the exact text the tool and the REST route give.
func TestPOIQueryCheckBounds(t *testing.T) {
	tags := func(n int) []string { return make([]string, n) }
	q := strings.Repeat("é", MaxQueryLength)
	tag := strings.Repeat("é", MaxPOITagLength)
	for _, c := range []struct {
		name string
		q    POIQuery
		want string
	}{
		{"at the bounds", POIQuery{Name: q, Category: q, Tags: append(tags(MaxPOITags-1), tag)}, ""},
		{"name too long", POIQuery{Name: q + "x"}, "bad_request: request.name has 201 characters; at most 200"},
		{"category too long", POIQuery{Category: q + "x"}, "bad_request: request.category has 201 characters; at most 200"},
		{"too many tags", POIQuery{Tags: tags(10_000)}, "bad_request: request.tags has 10000 items; at most 32"},
		{"a tag too long", POIQuery{Tags: []string{"a", tag + "x"}}, "bad_request: request.tags[1] has 65 characters; at most 64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := errText(c.q.Check()); got != c.want {
				t.Errorf("Check() = %q, want %q", got, c.want)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
