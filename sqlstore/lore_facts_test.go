package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine/lore"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/loretest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// engineIssues is what engine/lore.Issues says of the world's stored lore
// (of one collection's entities when collection is set): the in-memory
// checker that LoreIssues must agree with.
func engineIssues(t *testing.T, db *sqlstore.DB, worldID, collection string) []worldforge.LoreIssue {
	t.Helper()
	all, err := dbtest.Lore(t.Context(), db, worldID, "")
	must(t, err)
	in := make([]lore.Entity, 0, len(all))
	for _, e := range all {
		in = append(in, lore.Entity{Collection: e.Collection, ID: e.ID, Name: e.Name, JSON: e.JSON})
	}
	out := []worldforge.LoreIssue{}
	for _, is := range lore.Issues(in) {
		if collection != "" && is.Collection != collection {
			continue
		}
		li := worldforge.LoreIssue{Collection: is.Collection, ID: is.ID, Kind: is.Kind, Field: is.Field, Detail: is.Detail}
		if is.Ref != nil {
			li.Ref = &worldforge.LoreRef{Collection: is.Ref.Collection, ID: is.Ref.ID}
		}
		out = append(out, li)
	}
	return out
}

// checkIssues compares LoreIssues with engineIssues on the whole world,
// on each collection, and with a cap; it returns the issues.
func checkIssues(t *testing.T, db *sqlstore.DB, worldID string) []worldforge.LoreIssue {
	t.Helper()
	ctx := t.Context()
	want := engineIssues(t, db, worldID, "")
	got, total, err := db.LoreIssues(ctx, worldID, "", 1_000_000)
	must(t, err)
	diff(t, want, got)
	if total != len(want) {
		t.Errorf("total %d, want %d", total, len(want))
	}
	for _, c := range worldforge.LoreCollections {
		wantC := engineIssues(t, db, worldID, c)
		gotC, totalC, err := db.LoreIssues(ctx, worldID, c, 1_000_000)
		must(t, err)
		if totalC != len(wantC) {
			t.Errorf("%s: total %d, want %d", c, totalC, len(wantC))
		}
		diff(t, wantC, gotC)
	}
	// The counts kept by triggers are those of the stored rows.
	all, err := dbtest.Lore(ctx, db, worldID, "")
	must(t, err)
	wantCounts := map[string]int{}
	for _, c := range worldforge.LoreCollections {
		wantCounts[c] = 0
	}
	for _, e := range all {
		wantCounts[e.Collection]++
	}
	counts, err := db.CountLore(ctx, worldID)
	must(t, err)
	diff(t, wantCounts, counts)
	if len(want) > 1 {
		k := len(want)/2 + 1
		capped, total, err := db.LoreIssues(ctx, worldID, "", k)
		must(t, err)
		diff(t, want[:k], capped)
		if total != len(want) {
			t.Errorf("capped: total %d, want %d", total, len(want))
		}
	}
	return want
}

// randomLore makes n entities of a small world in which every kind of issue
// is likely: ids from a small pool (dangling and self references, and
// upserts replacing entities), names from a small pool of case variants
// (duplicates, with Unicode folding), random era bounds and event years,
// spells of levels out of range, documents that are not JSON and stored
// names that differ from the document's.
func randomLore(rng *rand.Rand, n int) []worldforge.LoreEntity {
	ids := []string{"a", "b", "c", "d", "e", "f", "a-1", "a_1", "B0"}
	names := []string{"Zeus", "zeus", "ZEUS", "Æther", "æTHER", "Kraken", "\u212araken", "Hera", "Ares", "Iris"}
	colls := []string{"pantheons", "deities", "factions", "entries", "rumours", "eras", "events", "spells", "strongholds"}
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	year := func() any { return rng.IntN(40) - 20 }
	refs := func() []string {
		var out []string
		for _, id := range ids {
			if rng.IntN(4) == 0 {
				out = append(out, id)
			}
		}
		return out
	}
	anyRefs := func() []map[string]string {
		var out []map[string]string
		seen := map[string]bool{}
		for range rng.IntN(4) {
			r := map[string]string{"collection": pick(colls), "id": pick(ids)}
			if k := r["collection"] + "/" + r["id"]; !seen[k] {
				seen[k] = true
				out = append(out, r)
			}
		}
		return out
	}
	var out []worldforge.LoreEntity
	for range n {
		c, id, name := pick(colls), pick(ids), pick(names)
		m := map[string]any{"id": id, "name": name}
		switch c {
		case "pantheons":
			if rng.IntN(2) == 0 {
				m["headDeityId"] = pick(ids)
			}
		case "deities":
			if rng.IntN(2) == 0 {
				m["pantheonId"] = pick(ids)
			}
			if r := refs(); len(r) > 0 {
				m["parentIds"] = r
			}
		case "factions":
			if r := refs(); len(r) > 0 {
				m["allies"] = r
			}
			if r := refs(); len(r) > 0 {
				m["rivals"] = r
			}
			if rng.IntN(2) == 0 {
				m["headquartersId"] = pick(ids)
			}
		case "entries":
			if r := anyRefs(); len(r) > 0 {
				m["related"] = r
			}
		case "rumours":
			if r := anyRefs(); len(r) > 0 {
				m["subjects"] = r
			}
		case "eras":
			if rng.IntN(3) > 0 {
				m["startYear"] = year()
			}
			if rng.IntN(3) > 0 {
				m["endYear"] = year()
			}
		case "events":
			if rng.IntN(4) > 0 {
				m["eraId"] = pick(ids)
			}
			if rng.IntN(4) > 0 {
				m["year"] = year()
			}
			if r := anyRefs(); len(r) > 0 {
				m["participants"] = r
			}
		case "spells":
			m["level"] = rng.IntN(12) // 10 and 11 are invalid
		}
		raw, err := json.Marshal(m)
		if err != nil {
			panic(err)
		}
		switch rng.IntN(12) {
		case 0:
			raw = []byte(`{"id":`) // not JSON
		case 1:
			name += " (renamed)" // stored name differs from the JSON's
		case 2:
			raw = nil // no document at all
		}
		out = append(out, worldforge.LoreEntity{Collection: c, ID: id, Name: name, JSON: raw})
	}
	return out
}

// TestLoreIssuesMatchEngine: on worlds with every kind of issue, the
// store's issues (found from facts stored at write time) are exactly those
// engine/lore.Issues finds on the whole world in memory, in the same order,
// per collection too, and capped with the right total — after upserts
// (replacing entities and their references), world creation, and lore
// proposals that add, replace and remove entities.
func TestLoreIssuesMatchEngine(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")

		t.Run("generated", func(t *testing.T) {
			for _, every := range []int{0, 1, 3} {
				w := &worldforge.World{OwnerID: owner.ID, Name: fmt.Sprint("Generated ", every)}
				must(t, db.CreateWorldContent(ctx, w, &worldforge.WorldContent{Lore: loretest.World(170, every)}, owner.ID))
				issues := checkIssues(t, db, w.ID)
				kinds := map[string]bool{}
				for _, is := range issues {
					kinds[is.Kind] = true
				}
				if every == 0 && len(issues) != 0 {
					t.Errorf("clean world: %d issues", len(issues))
				}
				if every == 3 { // every=1 has no clean creature to duplicate
					for _, k := range []string{lore.KindDanglingReference, lore.KindSelfReference, lore.KindDuplicateName,
						lore.KindEraOrder, lore.KindEventOutsideEra, lore.KindInvalidEntity} {
						if !kinds[k] {
							t.Errorf("every %d: no %s issue", every, k)
						}
					}
				}
			}
		})

		t.Run("presets", func(t *testing.T) {
			w := newWorld(t, db, owner.ID, "Presets")
			for _, p := range lore.Presets() {
				for _, e := range p.Entities {
					must(t, db.UpsertLore(ctx, &worldforge.LoreEntity{WorldID: w.ID, Collection: e.Collection, ID: e.ID, Name: e.Name, JSON: e.JSON}))
				}
			}
			if issues := checkIssues(t, db, w.ID); len(issues) != 0 {
				t.Errorf("presets together: %v", issues)
			}
		})

		t.Run("random", func(t *testing.T) {
			kinds := map[string]int{}
			defer func() {
				for _, k := range []string{lore.KindDanglingReference, lore.KindSelfReference, lore.KindDuplicateName,
					lore.KindEraOrder, lore.KindEventOutsideEra, lore.KindInvalidEntity} {
					if kinds[k] == 0 {
						t.Errorf("no %s issue in any random world", k)
					}
				}
				t.Logf("issues of the random worlds: %v", kinds)
			}()
			for seed := range uint64(12) {
				rng := rand.New(rand.NewPCG(seed, 8))
				w := newWorld(t, db, owner.ID, fmt.Sprint("Random ", seed))
				for _, e := range randomLore(rng, 40) {
					e.WorldID = w.ID
					must(t, db.UpsertLore(ctx, &e))
				}
				for _, is := range checkIssues(t, db, w.ID) {
					kinds[is.Kind]++
				}

				// A committed proposal: replace some, add some (existing
				// kept), remove some (their references go with them).
				var ops []worldforge.StoredLoreOp
				for i, e := range randomLore(rng, 30) {
					op := []string{worldforge.LoreOpUpsert, worldforge.LoreOpAdd, worldforge.LoreOpRemove}[i%3]
					if !json.Valid(e.JSON) {
						e.JSON = nil // a payload holds JSON; no document stands for a broken one
					}
					ops = append(ops, worldforge.StoredLoreOp{Op: op, Collection: e.Collection, ID: e.ID, Name: e.Name, Entity: e.JSON})
				}
				hdr, err := db.FindWorldHeader(ctx, w.ID)
				must(t, err)
				raw, err := json.Marshal(worldforge.LorePayload{Operations: ops})
				must(t, err)
				p := &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalWorld, TargetID: w.ID, BaseVersion: hdr.Version,
					ActorID: owner.ID, Payload: raw, DiffSummary: "random"}
				must(t, db.CreateProposal(ctx, p, nil))
				_, err = db.CommitProposal(ctx, p.ID, owner.ID, nil, nil)
				must(t, err)
				checkIssues(t, db, w.ID)
			}
		})

		t.Run("eras and events", func(t *testing.T) {
			// Eras moved, replaced and deleted after their events were
			// written, and events written before their eras: the
			// triggers place the events again each time.
			kinds := map[string]int{}
			for seed := range uint64(10) {
				rng := rand.New(rand.NewPCG(seed, 9))
				w := newWorld(t, db, owner.ID, fmt.Sprint("Eras ", seed))
				ids := []string{"a", "b", "c"}
				bound := func(m map[string]any, k string) {
					if rng.IntN(4) > 0 {
						m[k] = rng.IntN(20) - 10
					}
				}
				for step := range 60 {
					id := ids[rng.IntN(len(ids))]
					switch rng.IntN(5) {
					case 0, 1:
						m := map[string]any{"id": id, "name": "Era " + id}
						bound(m, "startYear")
						bound(m, "endYear")
						raw, _ := json.Marshal(m)
						must(t, db.UpsertLore(ctx, &worldforge.LoreEntity{WorldID: w.ID, Collection: "eras", ID: id, Name: "Era " + id, JSON: raw}))
					case 2, 3:
						ev := fmt.Sprint("v", rng.IntN(6))
						m := map[string]any{"id": ev, "name": "Event " + ev, "eraId": id}
						bound(m, "year")
						raw, _ := json.Marshal(m)
						must(t, db.UpsertLore(ctx, &worldforge.LoreEntity{WorldID: w.ID, Collection: "events", ID: ev, Name: "Event " + ev, JSON: raw}))
					case 4:
						must(t, db.ExecForTest(ctx, "DELETE FROM lore_entities WHERE world_id = ? AND collection = 'eras' AND id = ?", w.ID, id))
					}
					if step%10 == 9 {
						for _, is := range checkIssues(t, db, w.ID) {
							kinds[is.Kind]++
						}
					}
				}
			}
			if kinds[lore.KindEraOrder] == 0 || kinds[lore.KindEventOutsideEra] == 0 || kinds[lore.KindDanglingReference] == 0 {
				t.Errorf("issues of the era worlds: %v", kinds)
			}
		})

		t.Run("concurrent writers", func(t *testing.T) {
			// Writers racing on one world, each adding entities that refer
			// to the others' (and removing some): whatever the
			// interleaving, no reference is left marked dangling when its
			// target exists, or resolved when it does not.
			w := newWorld(t, db, owner.ID, "Race")
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 3))
					for i := range 25 {
						id := fmt.Sprintf("f%d", rng.IntN(30))
						allies, _ := json.Marshal([]string{fmt.Sprintf("f%d", rng.IntN(30)), fmt.Sprintf("f%d", rng.IntN(30)) + "x"})
						raw := fmt.Sprintf(`{"id":%q,"name":"Faction %d","allies":%s}`, id, i%5, allies)
						if err := db.UpsertLore(ctx, &worldforge.LoreEntity{WorldID: w.ID, Collection: "factions", ID: id,
							Name: fmt.Sprintf("Faction %d", i%5), JSON: json.RawMessage(raw)}); err != nil {
							t.Error(err)
							return
						}
						if i%7 == 6 {
							if err := removeLore(ctx, db, owner.ID, w.ID, "factions", fmt.Sprintf("f%d", rng.IntN(30))); err != nil {
								t.Error(err)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			checkIssues(t, db, w.ID)
		})

		t.Run("removal takes the references", func(t *testing.T) {
			w := newWorld(t, db, owner.ID, "Removal")
			must(t, db.UpsertLore(ctx, &worldforge.LoreEntity{WorldID: w.ID, Collection: "factions", ID: "f", Name: "F",
				JSON: json.RawMessage(`{"id":"f","name":"F","allies":["g","h"],"rivals":["f"]}`)}))
			refs := func() int {
				n, err := db.QueryIntForTest(ctx, "SELECT COUNT(*) FROM lore_refs WHERE world_id = ?", w.ID)
				must(t, err)
				return n
			}
			if n := refs(); n != 3 {
				t.Errorf("%d references stored, want 3", n)
			}
			// Replacing the entity replaces its references.
			must(t, db.UpsertLore(ctx, &worldforge.LoreEntity{WorldID: w.ID, Collection: "factions", ID: "f", Name: "F",
				JSON: json.RawMessage(`{"id":"f","name":"F","allies":["g"]}`)}))
			if n := refs(); n != 1 {
				t.Errorf("%d references after the replacement, want 1", n)
			}
			checkIssues(t, db, w.ID)
			raw, err := json.Marshal(worldforge.LorePayload{Operations: []worldforge.StoredLoreOp{{Op: worldforge.LoreOpRemove, Collection: "factions", ID: "f"}}})
			must(t, err)
			p := &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalWorld, TargetID: w.ID, BaseVersion: 1, ActorID: owner.ID, Payload: raw, DiffSummary: "rm"}
			must(t, db.CreateProposal(ctx, p, nil))
			_, err = db.CommitProposal(ctx, p.ID, owner.ID, nil, nil)
			must(t, err)
			if n := refs(); n != 0 {
				t.Errorf("%d references after the removal, want 0", n)
			}
		})

		wantCode(t, func() error { _, _, err := db.LoreIssues(ctx, "world_x", "dragons", 10); return err }(), worldforge.EBadRequest)
	})
}

// removeLore removes an entity the way the server does, through a
// committed lore proposal, filed again while another commit to the world
// wins the race for its version.
func removeLore(ctx context.Context, db *sqlstore.DB, actorID, worldID, collection, id string) error {
	raw, err := json.Marshal(worldforge.LorePayload{Operations: []worldforge.StoredLoreOp{{Op: worldforge.LoreOpRemove, Collection: collection, ID: id}}})
	if err != nil {
		return err
	}
	for {
		w, err := db.FindWorldHeader(ctx, worldID)
		if err != nil {
			return err
		}
		p := &worldforge.Proposal{WorldID: worldID, Kind: worldforge.ProposalWorld, TargetID: worldID, BaseVersion: w.Version,
			ActorID: actorID, Payload: raw, DiffSummary: "remove " + id}
		if err := db.CreateProposal(ctx, p, nil); err != nil {
			return err
		}
		_, err = db.CommitProposal(ctx, p.ID, actorID, nil, nil)
		if worldforge.ErrorCode(err) != worldforge.EVersionConflict {
			return err
		}
	}
}

// TestLoreFactsBackfill: entities stored without facts (before migration
// 004, or by an older binary while this one runs) are analysed before
// their world's issues are listed, and by Open for every world.
func TestLoreFactsBackfill(t *testing.T) {
	t.Parallel()
	dbtest.ForEachDSN(t, func(t *testing.T, dsn string) {
		ctx := t.Context()
		db := dbtest.MustOpen(t, dsn)
		owner := newUser(t, db, "owner")
		old := func(w *worldforge.World) {
			t.Helper()
			for _, e := range loretest.World(68, 2) {
				must(t, db.ExecForTest(ctx, `INSERT INTO lore_entities (world_id, collection, id, name, doc, version, updated_at)
					VALUES (?, ?, ?, ?, ?, 1, 0)`, w.ID, e.Collection, e.ID, e.Name, string(e.JSON)))
			}
		}
		stale := func() int {
			n, err := db.QueryIntForTest(ctx, "SELECT COUNT(*) FROM lore_entities WHERE facts_version <> ?", lore.FactsVersion)
			must(t, err)
			return n
		}
		a := newWorld(t, db, owner.ID, "A")
		old(a)
		if n := stale(); n != 68 {
			t.Fatalf("%d stale entities, want 68", n)
		}
		if issues := checkIssues(t, db, a.ID); len(issues) == 0 {
			t.Error("no issues found in a broken world")
		}
		if n := stale(); n != 0 {
			t.Errorf("%d stale entities after listing issues", n)
		}
		// An older binary replaces an analysed entity: new document and
		// version, old facts. The next listing analyses it again.
		before := len(checkIssues(t, db, a.ID))
		must(t, db.ExecForTest(ctx, `UPDATE lore_entities SET doc = ?, name = ?, version = version + 1
			WHERE world_id = ? AND collection = 'factions' AND id = 'x1'`,
			`{"id":"x1","name":"Faction 1","allies":["nobody","x1"]}`, "Faction 1", a.ID))
		if after := len(checkIssues(t, db, a.ID)); after != before+2 {
			t.Errorf("%d issues after the old binary's write, want %d", after, before+2)
		}

		b, c := newWorld(t, db, owner.ID, "B"), newWorld(t, db, owner.ID, "C")
		old(b)
		old(c)
		again := dbtest.MustOpen(t, dsn) // Open analyses every world
		n, err := again.QueryIntForTest(ctx, "SELECT COUNT(*) FROM lore_entities WHERE facts_version <> ?", lore.FactsVersion)
		must(t, err)
		if n != 0 {
			t.Errorf("%d stale entities after Open", n)
		}
		checkIssues(t, again, b.ID)
		checkIssues(t, again, c.ID)
	})
}

// TestListLorePage: pages come in bytewise id order on both engines, each
// entity once, under concurrent inserts and replacements; the byte cap
// ends a page early but never leaves it empty.
func TestListLorePage(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w := newWorld(t, db, owner.ID, "Pages")
		ent := func(id string) *worldforge.LoreEntity {
			return &worldforge.LoreEntity{WorldID: w.ID, Collection: "deities", ID: id, Name: "N " + id,
				JSON: json.RawMessage(`{"id":"` + id + `","name":"N ` + id + `"}`)}
		}
		walk := func(limit int) []string {
			t.Helper()
			var ids []string
			after := ""
			for {
				p, err := db.ListLorePage(ctx, worldforge.LorePageQuery{WorldID: w.ID, Collection: "deities", After: after, Limit: limit})
				must(t, err)
				if len(p.Items) > limit || len(p.Items) == 0 && p.More {
					t.Fatalf("page of %d items, more %v, limit %d", len(p.Items), p.More, limit)
				}
				for _, e := range p.Items {
					ids = append(ids, e.ID)
				}
				if !p.More {
					return ids
				}
				after = p.Items[len(p.Items)-1].ID
			}
		}

		// Bytewise order, whatever the database's locale.
		odd := []string{"b", "B", "_x", "-y", "a-b", "a_b", "ab", "Z1", "z", "0"}
		for _, id := range odd {
			must(t, db.UpsertLore(ctx, ent(id)))
		}
		got := walk(3)
		want := slices.Clone(odd)
		slices.Sort(want)
		diff(t, want, got)
		for _, id := range odd {
			must(t, db.ExecForTest(ctx, "DELETE FROM lore_entities WHERE world_id = ? AND id = ?", w.ID, id))
		}

		// Walks under concurrent inserts (odd numbers) and replacements
		// (even ones): every entity present before the walk is seen once,
		// none twice, in increasing order.
		const n = 400
		for i := 0; i < n; i += 2 {
			must(t, db.UpsertLore(ctx, ent(fmt.Sprintf("d%04d", i))))
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 1; i < n; i += 2 {
				if err := db.UpsertLore(ctx, ent(fmt.Sprintf("d%04d", i))); err != nil {
					t.Error(err)
					return
				}
				if err := db.UpsertLore(ctx, ent(fmt.Sprintf("d%04d", i-1))); err != nil {
					t.Error(err)
					return
				}
			}
		})
		for _, limit := range []int{1, 7, 50} {
			ids := walk(limit)
			if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
				t.Errorf("limit %d: ids out of order or repeated", limit)
			}
			for i := 0; i < n; i += 2 {
				if _, ok := slices.BinarySearch(ids, fmt.Sprintf("d%04d", i)); !ok {
					t.Errorf("limit %d: d%04d missing", limit, i)
				}
			}
		}
		wg.Wait()
		var all []string
		for i := range n {
			all = append(all, fmt.Sprintf("d%04d", i))
		}
		diff(t, all, walk(33))

		// The byte cap.
		p, err := db.ListLorePage(ctx, worldforge.LorePageQuery{WorldID: w.ID, Collection: "deities", Limit: 10, MaxBytes: 1})
		must(t, err)
		if len(p.Items) != 1 || !p.More {
			t.Errorf("1-byte cap: %d items, more %v", len(p.Items), p.More)
		}
		size := len(p.Items[0].JSON)
		p, err = db.ListLorePage(ctx, worldforge.LorePageQuery{WorldID: w.ID, Collection: "deities", Limit: 10, MaxBytes: 3*size + 1})
		must(t, err)
		if len(p.Items) != 3 || !p.More {
			t.Errorf("3-entity cap: %d items, more %v", len(p.Items), p.More)
		}
		// Defaults, the end, an empty collection, an unknown one.
		p, err = db.ListLorePage(ctx, worldforge.LorePageQuery{WorldID: w.ID, Collection: "deities"})
		must(t, err)
		if len(p.Items) != worldforge.DefaultLoreLimit || !p.More {
			t.Errorf("default page: %d items, more %v", len(p.Items), p.More)
		}
		p, err = db.ListLorePage(ctx, worldforge.LorePageQuery{WorldID: w.ID, Collection: "deities", After: "d0399"})
		must(t, err)
		if len(p.Items) != 0 || p.More {
			t.Errorf("after the last: %d items, more %v", len(p.Items), p.More)
		}
		p, err = db.ListLorePage(ctx, worldforge.LorePageQuery{WorldID: w.ID, Collection: "eras"})
		must(t, err)
		if p.Items == nil || len(p.Items) != 0 || p.More {
			t.Errorf("empty collection: %#v", p)
		}
		_, err = db.ListLorePage(ctx, worldforge.LorePageQuery{WorldID: w.ID, Collection: "dragons"})
		wantCode(t, err, worldforge.EBadRequest)
	})
}
