package sqlstore_test

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// The wiki search answers through plans (wiki_search.go) that must give
// exactly what the plain query gives: the same pages in the same order.
// These tests check every plan against the plain query and against a
// reference computed in Go from all the pages.

// wikiVocab are the words of the generated pages: common and rare words,
// LIKE wildcards and the escape character, quotes (FTS5 syntax), case and
// accent variants, several scripts.
var wikiVocab = []string{
	"the", "tower", "Tower", "TOWER", "river", "of", "a", "market", "crypt", "harbor", "Harbor",
	"guild", "thieves'", "dragon", "Dragonfly", "lantern", "ember", "Kestrel", "zephyr",
	"100%", "50%_off", "a_b", "C:\\path", "back\\slash", "%", "_", "\\", `"quoted"`, `say "hi"`, "it's",
	"École", "école", "ÉCOLE", "Öl", "öl", "straße", "ΣΟΦΙΑ", "σοφία", "日本", "東京タワー", "🐉", "naïve", "NAÏVE",
	"x", "xy", "xyz", "ab", "abc", "abcd", "q-17", "Q-17", "--", "...", "  ",
}

// wikiWorld is what the reference knows of a page.
type wikiRef struct {
	id, world, title, body, kind string
	live                         bool
}

func randomText(r *rand.Rand, words int) string {
	var b strings.Builder
	for i := range words {
		if i > 0 {
			b.WriteString([]string{" ", " ", " ", "-", ", ", ""}[r.IntN(6)])
		}
		b.WriteString(wikiVocab[r.IntN(len(wikiVocab))])
	}
	return b.String()
}

// engineSemantics probes how the engine lower-cases and orders text: the
// reference matches with lower, and compares orders only when the engine
// orders bytewise (SQLite always; PostgreSQL under the C collations).
func engineSemantics(t testing.TB, db *sqlstore.DB) (lower func(string) string, bytewise bool) {
	t.Helper()
	ctx := t.Context()
	folded, err := db.QueryStringForTest(ctx, "SELECT LOWER(?)", "ÉΣÖ")
	if err != nil {
		t.Fatal(err)
	}
	lower = asciiLower
	if folded == strings.ToLower("ÉΣÖ") {
		lower = strings.ToLower
	} else if folded != "ÉΣÖ" {
		t.Fatalf("LOWER('ÉΣÖ') = %q: neither ASCII-only nor Unicode folding", folded)
	}
	n, err := db.QueryIntForTest(ctx, "SELECT CASE WHEN 'B' < 'a' AND 'a' < 'é' AND 'Z' < '_' AND 'a b' < 'ab' THEN 1 ELSE 0 END")
	if err != nil {
		t.Fatal(err)
	}
	return lower, n == 1
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// referenceSearch is the search computed in Go: the ids of the matching
// live pages of the worlds (and kind), by (title, id) bytewise, all of them.
func referenceSearch(pages map[string]*wikiRef, s worldforge.WikiSearch, lower func(string) string) []string {
	lq := lower(strings.ToLower(s.Q))
	var hits []*wikiRef
	for _, p := range pages {
		if !p.live || !slices.Contains(s.WorldIDs, p.world) || (s.Kind != "" && p.kind != s.Kind) {
			continue
		}
		if strings.Contains(lower(p.title), lq) || strings.Contains(lower(p.body), lq) {
			hits = append(hits, p)
		}
	}
	slices.SortFunc(hits, func(a, b *wikiRef) int { return cmp.Or(strings.Compare(a.title, b.title), strings.Compare(a.id, b.id)) })
	ids := make([]string, len(hits))
	for i, p := range hits {
		ids[i] = p.id
	}
	return ids
}

func wantLimit(limit int) int {
	switch {
	case limit <= 0:
		return 20
	case limit > 100:
		return 100
	}
	return limit
}

// TestWikiSearchDifferential runs random searches (common and rare words,
// substrings of the pages, texts of one and two characters, wildcards,
// escapes, quotes, case and accent variants, kinds, one to four worlds,
// limits) on pages created, imported, edited (through proposals and
// directly), archived, restored and deleted with their world, under the
// default budgets and under tiny ones that make the plans race for several
// rounds. Every answer must be the plain query's, and the Go reference's.
func TestWikiSearchDifferential(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		lower, bytewise := engineSemantics(t, db)
		r := rand.New(rand.NewPCG(8, uint64(len(t.Name()))))
		owner := newUser(t, db, "owner")
		pages := map[string]*wikiRef{}
		var worlds []string

		// Four worlds: two imported in bulk, two page by page.
		for wi, n := range []int{260, 90, 40, 25} {
			var content []worldforge.WikiPage
			for range n {
				p := worldforge.WikiPage{Title: randomText(r, 1+r.IntN(4)), Body: randomText(r, r.IntN(30)),
					Kind: worldforge.WikiKinds[r.IntN(len(worldforge.WikiKinds))], Audience: worldforge.AudienceGM}
				if r.IntN(10) == 0 {
					p.DeletedAt = ptr(t0)
				}
				content = append(content, p)
			}
			w := &worldforge.World{OwnerID: owner.ID, Name: fmt.Sprint("world ", wi)}
			if wi < 2 {
				c := &worldforge.WorldContent{WikiPages: content}
				must(t, db.CreateWorldContent(ctx, w, c, owner.ID))
				content = c.WikiPages
			} else {
				must(t, db.CreateWorld(ctx, w))
				for i := range content {
					content[i].WorldID = w.ID
					must(t, db.CreateWikiPage(ctx, &content[i], owner.ID))
				}
			}
			worlds = append(worlds, w.ID)
			for _, p := range content {
				pages[p.ID] = &wikiRef{id: p.ID, world: w.ID, title: p.Title, body: p.Body, kind: p.Kind, live: p.DeletedAt == nil}
			}
		}
		ids := func() []string {
			out := make([]string, 0, len(pages))
			for id := range pages {
				out = append(out, id)
			}
			slices.Sort(out)
			return out
		}
		// Edits through proposals (the store's edit path).
		for _, id := range ids()[:40] {
			p := pages[id]
			if !p.live {
				continue
			}
			var pl worldforge.WikiEditPayload
			switch r.IntN(3) {
			case 0:
				pl.Title = ptr(randomText(r, 2))
			case 1:
				pl.Body = ptr(randomText(r, 10))
			default:
				pl.Audience = ptr(worldforge.AudienceParty) // no text change
			}
			b, err := json.Marshal(pl)
			must(t, err)
			page, err := db.FindWikiPageByID(ctx, id)
			must(t, err)
			prop := &worldforge.Proposal{WorldID: p.world, Kind: worldforge.ProposalWikiEdit, TargetID: id, BaseVersion: page.Version,
				ActorID: owner.ID, DiffSummary: "edit", Payload: b}
			must(t, db.CreateProposal(ctx, prop, nil))
			_, err = db.CommitProposal(ctx, prop.ID, owner.ID, nil, commitAudit(owner.ID))
			must(t, err)
			if pl.Title != nil {
				p.title = *pl.Title
			}
			if pl.Body != nil {
				p.body = *pl.Body
			}
		}
		// Thirteen small worlds more: searches of all seventeen go over the
		// index of every world, or the plain query.
		for wi := range 13 {
			content := make([]worldforge.WikiPage, 5)
			for i := range content {
				content[i] = worldforge.WikiPage{Title: randomText(r, 2), Body: randomText(r, 8),
					Kind: worldforge.WikiKinds[r.IntN(len(worldforge.WikiKinds))], Audience: worldforge.AudienceGM}
			}
			w := &worldforge.World{OwnerID: owner.ID, Name: fmt.Sprint("small ", wi)}
			c := &worldforge.WorldContent{WikiPages: content}
			must(t, db.CreateWorldContent(ctx, w, c, owner.ID))
			for _, p := range c.WikiPages {
				pages[p.ID] = &wikiRef{id: p.ID, world: w.ID, title: p.Title, body: p.Body, kind: p.Kind, live: true}
			}
			worlds = append(worlds, w.ID)
		}
		// Archiving, restoring, direct edits and moves to another world.
		for _, id := range ids()[40:100] {
			p := pages[id]
			switch r.IntN(4) {
			case 3:
				p.world = worlds[r.IntN(len(worlds))]
				must(t, db.ExecForTest(ctx, "UPDATE wiki_pages SET world_id = ? WHERE id = ?", p.world, id))
			case 0:
				must(t, db.ExecForTest(ctx, "UPDATE wiki_pages SET deleted_at = ? WHERE id = ?", int64(1_700_000_000_000), id))
				p.live = false
			case 1:
				must(t, db.ExecForTest(ctx, "UPDATE wiki_pages SET deleted_at = NULL WHERE id = ?", id))
				p.live = true
			default:
				p.title, p.body = randomText(r, 3), randomText(r, 5)
				must(t, db.ExecForTest(ctx, "UPDATE wiki_pages SET title = ?, body = ? WHERE id = ?", p.title, p.body, id))
			}
		}
		// One world more, deleted with its pages.
		gone := newWorld(t, db, owner.ID, "gone")
		for range 10 {
			p := &worldforge.WikiPage{WorldID: gone.ID, Title: "tower " + randomText(r, 2), Body: randomText(r, 5), Kind: worldforge.WikiKindLore, Audience: worldforge.AudienceGM}
			must(t, db.CreateWikiPage(ctx, p, owner.ID))
		}
		must(t, db.ExecForTest(ctx, "DELETE FROM worlds WHERE id = ?", gone.ID))
		must(t, db.CheckWikiSearchIndexForTest(ctx))

		// The texts searched.
		var texts []string
		texts = append(texts, wikiVocab...)
		for _, w := range wikiVocab {
			texts = append(texts, strings.ToUpper(w), strings.ToLower(w))
		}
		texts = append(texts, "", "zzz-nowhere", "tower of", "of the", "%%", "__", `\\`, `\%`, `%_\`, `""`, "É", "é", "ß", "SS", "İ",
			"日", "日本", "ab%", "a_", "qu", " ", "  ", "t", "to", "tow")
		all := ids()
		for range 150 {
			p := pages[all[r.IntN(len(all))]]
			text := []rune(p.title + " " + p.body)
			from := r.IntN(len(text))
			sub := string(text[from:min(len(text), from+1+r.IntN(12))])
			switch r.IntN(3) {
			case 0:
				sub = strings.ToUpper(sub)
			case 1:
				sub = strings.ToLower(sub)
			}
			texts = append(texts, sub)
		}
		worldSets := [][]string{{worlds[0]}, {worlds[1]}, {worlds[3]}, {worlds[0], worlds[1]}, worlds[:4], worlds,
			{worlds[2], worlds[2]}, {"world_missing"}, {gone.ID}}
		budgets := [][2]int{{0, 0}, {1, 1}, {2, 3}, {5, 1}, {1, 10_000}, {10_000, 1}}

		searches := 0
		for _, text := range texts {
			for range 2 {
				s := worldforge.WikiSearch{WorldIDs: worldSets[r.IntN(len(worldSets))], Q: text,
					Limit: []int{0, 1, 3, 7, 20, 100, 500}[r.IntN(7)]}
				if r.IntN(3) == 0 {
					s.Kind = worldforge.WikiKinds[r.IntN(len(worldforge.WikiKinds))]
				}
				if r.IntN(20) == 0 {
					s.Kind = "no-such-kind"
				}
				plain, err := db.SearchWikiPagesScanForTest(ctx, s)
				must(t, err)
				ref := referenceSearch(pages, s, lower)
				n := wantLimit(s.Limit)
				if got := summaryIDs(plain); len(got) != min(n, len(ref)) {
					t.Fatalf("%+v: plain query gives %d pages, reference %d (limit %d)", s, len(got), len(ref), n)
				} else if bytewise {
					diff(t, ref[:len(got)], got)
				} else {
					for _, id := range got {
						if !slices.Contains(ref, id) {
							t.Fatalf("%+v: plain query gives %s, not a match", s, id)
						}
					}
				}
				for _, b := range budgets {
					db.SetWikiSearchBudgetsForTest(b[0], b[1])
					got, err := db.SearchWikiPages(ctx, s)
					must(t, err)
					searches++
					if d := cmpIDs(plain, got); d != "" {
						t.Fatalf("%+v, budgets %v: %s", s, b, d)
					}
					diff(t, plain, got)
				}
			}
		}
		db.SetWikiSearchBudgetsForTest(0, 0)
		scan, walk, index := db.WikiSearchPlansForTest()
		t.Logf("%d searches: %d plain, %d walked, %d through the index", searches, scan, walk, index)
		if walk == 0 || scan == 0 || (index == 0 && db.WikiSearchIndexedForTest()) {
			t.Errorf("a plan was never used: %d plain, %d walked, %d through the index", scan, walk, index)
		}
		if !db.WikiSearchIndexedForTest() {
			t.Errorf("no text index on %s", db.Engine())
		}
	})
}

func cmpIDs(want, got []worldforge.WikiPageSummary) string {
	w, g := summaryIDs(want), summaryIDs(got)
	if slices.Equal(w, g) {
		return ""
	}
	return fmt.Sprintf("got %v, want %v", g, w)
}

// TestWikiSearchIndexedPlans checks which plan answers on a world larger
// than the first budgets: a common word is walked, a rare one found
// through the index, a text too short for trigrams walked by the plain
// query, and a text common in another world but absent from this one
// answered without reading every page (the race stops at the index).
func TestWikiSearchIndexedPlans(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		build := func(name string, n int, title func(i int) string) string {
			pages := make([]worldforge.WikiPage, n)
			for i := range pages {
				pages[i] = worldforge.WikiPage{Title: title(i), Body: "lorem ipsum dolor", Kind: worldforge.WikiKinds[i%4], Audience: worldforge.AudienceGM}
			}
			w := &worldforge.World{OwnerID: owner.ID, Name: name}
			must(t, db.CreateWorldContent(ctx, w, &worldforge.WorldContent{WikiPages: pages}, owner.ID))
			return w.ID
		}
		big := build("big", 2000, func(i int) string {
			return fmt.Sprintf("Page %04d of the %s", i, []string{"river", "tower", "market", "crypt"}[i%4])
		})
		other := build("other", 600, func(i int) string { return fmt.Sprintf("Beacon %d", i) })

		plans := func() [3]int64 {
			a, b, c := db.WikiSearchPlansForTest()
			return [3]int64{a, b, c}
		}
		for _, c := range []struct {
			name   string
			s      worldforge.WikiSearch
			plans  [3]int64 // searches by the plain query, worlds walked, worlds through the index
			result int
		}{
			{"common word", worldforge.WikiSearch{WorldIDs: []string{big}, Q: "tower"}, [3]int64{0, 1, 0}, 20},
			{"rare title", worldforge.WikiSearch{WorldIDs: []string{big}, Q: "Page 1234 "}, [3]int64{0, 0, 1}, 1},
			{"nothing", worldforge.WikiSearch{WorldIDs: []string{big}, Q: "zzz-nowhere"}, [3]int64{0, 0, 1}, 0},
			{"two characters", worldforge.WikiSearch{WorldIDs: []string{big}, Q: "zz"}, [3]int64{1, 0, 0}, 0},
			{"no text", worldforge.WikiSearch{WorldIDs: []string{big}, Kind: worldforge.WikiKindPlace}, [3]int64{1, 0, 0}, 20},
			// Common in the other world: this one's candidates are none.
			{"common elsewhere", worldforge.WikiSearch{WorldIDs: []string{big}, Q: "beacon"}, [3]int64{0, 0, 1}, 0},
			{"two worlds, rare", worldforge.WikiSearch{WorldIDs: []string{big, other}, Q: "beacon 42"}, [3]int64{0, 0, 2}, 11},
			{"two worlds, common", worldforge.WikiSearch{WorldIDs: []string{big, other}, Q: "LOREM", Limit: 100}, [3]int64{0, 2, 0}, 100},
			{"two worlds, common in one", worldforge.WikiSearch{WorldIDs: []string{big, other}, Q: "beacon", Limit: 100}, [3]int64{0, 1, 1}, 100},
		} {
			before := plans()
			got, err := db.SearchWikiPages(ctx, c.s)
			must(t, err)
			plain, err := db.SearchWikiPagesScanForTest(ctx, c.s)
			must(t, err)
			diff(t, plain, got)
			if len(got) != c.result {
				t.Errorf("%s: %d results, want %d", c.name, len(got), c.result)
			}
			after := plans()
			if d := [3]int64{after[0] - before[0], after[1] - before[1], after[2] - before[2]}; d != c.plans {
				t.Errorf("%s: plans %v, want %v", c.name, d, c.plans)
			}
		}
	})
}

// TestWikiMatchPhrase checks the FTS5 query of a text: its quotes doubled,
// a long text cut to the piece with the fewest spaces.
func TestWikiMatchPhrase(t *testing.T) {
	for lq, want := range map[string]string{
		"abc":                                    `"abc"`,
		`say "hi"`:                               `"say ""hi"""`,
		"the tower of the long river":            `"the tower of"`,
		"a b c d e f g h i j k l mnopqrstuvwxyz": `"mnopqrstuvwx"`,
		"日本語のテキスト":                               `"日本語のテキスト"`,
	} {
		if got := sqlstore.WikiMatchPhraseForTest(lq); got != want {
			t.Errorf("%q: %s, want %s", lq, got, want)
		}
		if n := utf8.RuneCountInString(want); n > 2+12+strings.Count(want[1:len(want)-1], `""`) {
			t.Errorf("%q: phrase of %d characters", lq, n)
		}
	}
}

// FuzzSearchWikiPages searches fuzzed texts for a fuzzed page (title and
// body) among 300 others, on SQLite and, when configured, PostgreSQL, with
// fuzzed budgets: no error where the plain query has none, the answer of
// the plain query, and, for texts of valid UTF-8 without NUL (ASCII only on
// PostgreSQL, whose LOWER follows the server's locale), the pages of the Go
// reference.
func FuzzSearchWikiPages(f *testing.F) {
	for _, s := range [][3]string{
		{"tower", "The Tower", "of the river"},
		{"TOWER", "the tower", ""},
		{"zz", "a zz b", "zz"},
		{"100%", "100% pure", "50%_off"},
		{`_`, "a_b", `\`},
		{`\%`, `back\%slash`, ""},
		{`"`, `say "hi"`, `"quoted"`},
		{"é", "ÉCOLE", "école"},
		{"ÉCOLE", "école", "ÉCOLE"},
		{"σοφ", "ΣΟΦΙΑ", "σοφία"},
		{"日本", "東京 日本", ""},
		{"a\x00b", "a\x00b", "ab"},
		{"\xff\xfe", "x\xffy", "\xfe"},
		{"ab", "", ""},
		{"", "anything", "at all"},
		{"page 12 of", "Page 12 of", "x"},
	} {
		f.Add(s[0], s[1], s[2], uint8(0), uint8(0))
	}
	type store struct {
		db       *sqlstore.DB
		world    string
		owner    string
		pages    map[string]*wikiRef
		lower    func(string) string
		bytewise bool
	}
	var stores []store
	for _, engine := range dbtest.Engines {
		if engine == sqlstore.EnginePostgres && os.Getenv(dbtest.EnvPostgresDSN) == "" {
			continue
		}
		db := dbtest.MustOpen(f, dbtest.DSN(f, engine))
		owner := &worldforge.User{Name: "fuzz"}
		if err := db.CreateUser(f.Context(), owner); err != nil {
			f.Fatal(err)
		}
		pages := make([]worldforge.WikiPage, 300)
		for i := range pages {
			pages[i] = worldforge.WikiPage{Title: fmt.Sprintf("Page %d of the %s", i, wikiVocab[i%len(wikiVocab)]),
				Body: wikiVocab[(i*7)%len(wikiVocab)] + " " + wikiVocab[(i*13)%len(wikiVocab)], Kind: worldforge.WikiKinds[i%4], Audience: worldforge.AudienceGM}
		}
		w := &worldforge.World{OwnerID: owner.ID, Name: "fuzz"}
		c := &worldforge.WorldContent{WikiPages: pages}
		if err := db.CreateWorldContent(f.Context(), w, c, owner.ID); err != nil {
			f.Fatal(err)
		}
		refs := map[string]*wikiRef{}
		for _, p := range c.WikiPages {
			refs[p.ID] = &wikiRef{id: p.ID, world: w.ID, title: p.Title, body: p.Body, kind: p.Kind, live: true}
		}
		lower, bytewise := engineSemantics(f, db)
		stores = append(stores, store{db: db, world: w.ID, owner: owner.ID, pages: refs, lower: lower, bytewise: bytewise})
	}
	f.Fuzz(func(t *testing.T, q, title, body string, kindLimit, budget uint8) {
		ctx := context.Background()
		for _, st := range stores {
			db := st.db
			p := &worldforge.WikiPage{WorldID: st.world, Title: title, Body: body, Kind: worldforge.WikiKinds[kindLimit%4], Audience: worldforge.AudienceGM}
			if err := db.CreateWikiPage(ctx, p, st.owner); err != nil {
				if db.Engine() == sqlstore.EnginePostgres {
					continue // a text PostgreSQL refuses (NUL, invalid UTF-8)
				}
				t.Fatal(err)
			}
			s := worldforge.WikiSearch{WorldIDs: []string{st.world}, Q: q, Limit: int(kindLimit>>2) % 40}
			if kindLimit&0x80 != 0 {
				s.Kind = p.Kind
			}
			db.SetWikiSearchBudgetsForTest(int(budget&0x0f), int(budget>>4))
			got, err := db.SearchWikiPages(ctx, s)
			db.SetWikiSearchBudgetsForTest(0, 0)
			plain, perr := db.SearchWikiPagesScanForTest(ctx, s)
			if (err != nil) != (perr != nil) {
				t.Fatalf("%s %q: error %v, the plain query's %v", db.Engine(), q, err, perr)
			}
			if err == nil {
				if d := cmpIDs(plain, got); d != "" {
					t.Fatalf("%s %q (page %q / %q): %s", db.Engine(), q, title, body, d)
				}
				clean := func(s string) bool {
					if db.Engine() == sqlstore.EnginePostgres {
						return isASCII(s) && !strings.ContainsRune(s, 0)
					}
					return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
				}
				if clean(q) && clean(title) && clean(body) {
					st.pages[p.ID] = &wikiRef{id: p.ID, world: st.world, title: title, body: body, kind: p.Kind, live: true}
					ref := referenceSearch(st.pages, s, st.lower)
					delete(st.pages, p.ID)
					n := min(wantLimit(s.Limit), len(ref))
					if len(got) != n {
						t.Fatalf("%s %q (page %q / %q): %d pages, want %d", db.Engine(), q, title, body, len(got), n)
					}
					if st.bytewise {
						diff(t, ref[:n], summaryIDs(got))
					}
				}
			}
			if err := db.ExecForTest(ctx, "DELETE FROM wiki_pages WHERE id = ?", p.ID); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// TestWikiSearchMigration reapplies migration 005 to a database whose pages
// were written without it: the index is built for them (the backfill). On
// PostgreSQL, indexes missing although the migration is recorded (the
// extension was missing then) are built by the next Open.
func TestWikiSearchMigration(t *testing.T) {
	t.Parallel()
	dbtest.ForEachDSN(t, func(t *testing.T, dsn string) {
		ctx := t.Context()
		db, err := sqlstore.Open(ctx, dsn, dbtest.Options())
		must(t, err)
		owner := newUser(t, db, "owner")
		w := newWorld(t, db, owner.ID, "old")
		var drop []string
		if db.Engine() == sqlstore.EngineSQLite {
			drop = []string{"DROP TRIGGER wiki_search_insert", "DROP TRIGGER wiki_search_update", "DROP TRIGGER wiki_search_delete",
				"DROP TRIGGER wiki_search_world_delete", "DROP TABLE wiki_search", "DROP TABLE wiki_search_docs", "DROP TABLE wiki_search_worlds"}
		} else {
			drop = []string{"DROP INDEX wiki_pages_title_trgm", "DROP INDEX wiki_pages_body_trgm"}
		}
		for _, q := range append(drop, "DELETE FROM schema_migrations WHERE version = 5") {
			must(t, db.ExecForTest(ctx, q))
		}
		var want []string
		for i := range 300 {
			p := &worldforge.WikiPage{WorldID: w.ID, Title: fmt.Sprintf("Old page %03d", i), Body: fmt.Sprintf("written before the index, number %d", i),
				Kind: worldforge.WikiKindLore, Audience: worldforge.AudienceGM}
			if i%10 == 0 {
				p.DeletedAt = ptr(t0)
			}
			must(t, db.CreateWikiPage(ctx, p, owner.ID))
			if i%10 != 0 && strings.Contains(p.Body, "number 1") {
				want = append(want, p.ID)
			}
		}
		must(t, db.Close())

		check := func(db *sqlstore.DB) {
			t.Helper()
			must(t, db.CheckWikiSearchIndexForTest(ctx))
			if !db.WikiSearchIndexedForTest() {
				t.Fatal("no text index after Open")
			}
			db.SetWikiSearchBudgetsForTest(1, 1000)
			_, _, before := db.WikiSearchPlansForTest()
			got, err := db.SearchWikiPages(ctx, worldforge.WikiSearch{WorldIDs: []string{w.ID}, Q: "NUMBER 1", Limit: 100})
			must(t, err)
			if _, _, after := db.WikiSearchPlansForTest(); after != before+1 {
				t.Errorf("the index did not answer")
			}
			diff(t, want, summaryIDs(got))
		}
		again := dbtest.MustOpen(t, dsn)
		check(again)
		if again.Engine() == sqlstore.EnginePostgres {
			// The migration is recorded, the indexes are gone: Open builds them.
			must(t, again.ExecForTest(ctx, "DROP INDEX wiki_pages_title_trgm"))
			check(dbtest.MustOpen(t, dsn))
		}
	})
}

// TestWikiSearchWithoutTrigram opens a PostgreSQL store as a role that may
// not create pg_trgm on a private server where it is not installed: Open
// succeeds with a warning, searches take the plain query and give the same
// answers; once the extension is installed, the next Open builds the
// indexes.
func TestWikiSearchWithoutTrigram(t *testing.T) {
	t.Parallel()
	cluster := dbtest.StartCluster(t)
	ctx := t.Context()
	admin, err := sql.Open("pgx", cluster.DSN)
	must(t, err)
	defer admin.Close()
	for _, q := range []string{"CREATE ROLE wf LOGIN", "CREATE SCHEMA wf AUTHORIZATION wf"} {
		_, err := admin.ExecContext(ctx, q)
		must(t, err)
	}
	dsn := strings.Replace(cluster.DSN, "postgres@", "wf@", 1) + "&search_path=wf"
	var logs strings.Builder
	opts := &sqlstore.Options{Logger: slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	db, err := sqlstore.Open(ctx, dsn, opts)
	must(t, err)
	if db.WikiSearchIndexedForTest() || !strings.Contains(logs.String(), "pg_trgm") {
		t.Errorf("indexed %v, logs %q: want no index and a warning", db.WikiSearchIndexedForTest(), logs.String())
	}
	owner := newUser(t, db, "owner")
	w := newWorld(t, db, owner.ID, "w")
	for i := range 50 {
		must(t, db.CreateWikiPage(ctx, &worldforge.WikiPage{WorldID: w.ID, Title: fmt.Sprint("Page ", i), Body: "body",
			Kind: worldforge.WikiKindLore, Audience: worldforge.AudienceGM}, owner.ID))
	}
	s := worldforge.WikiSearch{WorldIDs: []string{w.ID}, Q: "page 4"}
	got, err := db.SearchWikiPages(ctx, s)
	must(t, err)
	if len(got) != 11 {
		t.Errorf("%d results, want 11", len(got))
	}
	if scan, walk, index := db.WikiSearchPlansForTest(); scan != 1 || walk+index != 0 {
		t.Errorf("plans %d %d %d, want the plain query", scan, walk, index)
	}
	must(t, db.Close())

	_, err = admin.ExecContext(ctx, "CREATE EXTENSION pg_trgm")
	must(t, err)
	db = dbtest.MustOpen(t, dsn)
	if !db.WikiSearchIndexedForTest() {
		t.Fatal("no index once pg_trgm is installed")
	}
	again, err := db.SearchWikiPages(ctx, s)
	must(t, err)
	diff(t, got, again)
}

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
