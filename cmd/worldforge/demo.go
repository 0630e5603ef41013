package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
)

// demoIDs are the rows the demo made, kept as a store secret so that a
// second `serve --demo` on the same database reuses them.
type demoIDs struct {
	Owner  string `json:"owner"`
	GM     string `json:"gm"`
	Player string `json:"player"`
	World  string `json:"world"`
}

const demoTokenTTL = 24 * time.Hour

// seedDemo makes (or finds) the demo rows, mints a fresh API key with every
// scope and a session JWT for the owner, and prints them with an MCP client
// config to w.
func seedDemo(ctx context.Context, db wf.Store, a *auth.Authenticator, baseURL string, w io.Writer) error {
	raw, err := db.Secret(ctx, "demo-ids", func() ([]byte, error) {
		ids, err := createDemo(ctx, db)
		if err != nil {
			return nil, err
		}
		return json.Marshal(ids)
	})
	if err != nil {
		return err
	}
	var ids demoIDs
	if err := json.Unmarshal(raw, &ids); err != nil {
		return fmt.Errorf("read demo ids: %w", err)
	}
	key, _, err := a.CreateKey(ctx, ids.Owner, []string{wf.ScopeAll})
	if err != nil {
		return err
	}
	jwt, err := a.IssueToken(ctx, ids.Owner, demoTokenTTL)
	if err != nil {
		return err
	}
	endpoint := baseURL + "/mcp"
	cfg, _ := json.MarshalIndent(map[string]any{
		"mcpServers": map[string]any{
			"worldforge": map[string]any{
				"type":    "http",
				"url":     endpoint,
				"headers": map[string]string{"Authorization": "Bearer " + key},
			},
		},
	}, "", "  ")
	fmt.Fprintf(w, `WorldForge demo
  MCP endpoint:  %s
  owner:         %s
  GM:            %s
  player:        %s
  world:         %s
  API key (owner, every scope): %s
  session JWT (owner, %s): %s

MCP client config:
%s
`, endpoint, ids.Owner, ids.GM, ids.Player, ids.World, key, demoTokenTTL, jwt, cfg)
	return nil
}

// createDemo makes the demo users and a small world with something in
// every part the read tools show.
func createDemo(ctx context.Context, db wf.Store) (*demoIDs, error) {
	owner := &wf.User{Name: "Demo Owner"}
	gm := &wf.User{Name: "Demo GM"}
	player := &wf.User{Name: "Demo Player"}
	for _, u := range []*wf.User{owner, gm, player} {
		if err := db.CreateUser(ctx, u); err != nil {
			return nil, err
		}
	}
	const cols, rows = 32, 24
	world := &wf.World{
		OwnerID: owner.ID, Name: "Demo World", Seed: 1, Cols: cols, Rows: rows,
		JSON: mustJSON(map[string]any{
			"grid":        map[string]any{"type": "hex", "cols": cols, "rows": rows, "defaultTerrain": "plains", "defaultElevation": 0},
			"description": "A blank hex grid: the demo world before any template was applied.",
		}),
	}
	if err := db.CreateWorld(ctx, world); err != nil {
		return nil, err
	}
	if err := db.AddWorldMember(ctx, world.ID, gm.ID, wf.RoleGM); err != nil {
		return nil, err
	}
	if err := db.AddWorldMember(ctx, world.ID, player.ID, wf.RolePlayer); err != nil {
		return nil, err
	}
	camp := &wf.Campaign{OwnerID: owner.ID, WorldID: world.ID, Name: "The Sunken Crown", JSON: mustJSON(map[string]any{"session": 1})}
	if err := db.CreateCampaign(ctx, camp); err != nil {
		return nil, err
	}
	if err := db.CreateQuest(ctx, &wf.Quest{OwnerID: owner.ID, CampaignID: camp.ID, WorldID: world.ID, Name: "Find the crown", JSON: mustJSON(map[string]any{"steps": []string{"Reach the lake", "Dive"}})}); err != nil {
		return nil, err
	}
	if err := db.CreateEncounter(ctx, &wf.Encounter{OwnerID: owner.ID, CampaignID: camp.ID, WorldID: world.ID, Name: "Drowned sentries", JSON: mustJSON(map[string]any{"foes": []string{"drowned sentry", "drowned sentry"}})}); err != nil {
		return nil, err
	}
	pages := []*wf.WikiPage{
		{Title: "The Lake Kingdom", Body: "Once a realm of bridges; now under water.", Kind: wf.WikiKindLore, Audience: wf.AudienceParty},
		{Title: "The Tide Wardens", Body: "Keepers of the sluices.", Kind: wf.WikiKindFaction, Audience: wf.AudienceParty},
		{Title: "Brindle Ford", Body: "A village at the only crossing.", Kind: wf.WikiKindPlace, Audience: wf.AudienceParty},
		{Title: "Session 1", Body: "The party met at Brindle Ford.", Kind: wf.WikiKindQuestLog, Audience: wf.AudienceGM},
	}
	for _, p := range pages {
		p.WorldID = world.ID
		if err := db.CreateWikiPage(ctx, p, owner.ID); err != nil {
			return nil, err
		}
	}
	cont := &wf.AtlasNode{WorldID: world.ID, Name: "Aldmere", Level: 1, TerrainType: "plains"}
	if err := db.CreateAtlasNode(ctx, cont); err != nil {
		return nil, err
	}
	region := &wf.AtlasNode{WorldID: world.ID, ParentID: cont.ID, Name: "The Drowned Vale", Level: 2, TerrainType: "wetland"}
	if err := db.CreateAtlasNode(ctx, region); err != nil {
		return nil, err
	}
	if err := db.CreateAtlasNode(ctx, &wf.AtlasNode{WorldID: world.ID, ParentID: region.ID, Name: "Brindle Ford", Level: 4, TerrainType: "plains"}); err != nil {
		return nil, err
	}
	pois := []*wf.POI{
		{Name: "Old chest", Category: "container", Tags: []string{"loot"}, X: 5, Y: 5, Openable: true, Pickable: true,
			Items: []wf.POIItem{{ID: "item_rusty_key", Name: "Rusty key"}}, Visibility: wf.AudienceParty},
		{Name: "Shrine of the Tide", Category: "shrine", Tags: []string{"holy", "water"}, X: 12, Y: 8, Visibility: wf.AudienceParty},
		{Name: "Hidden cache", Category: "container", Tags: []string{"loot", "secret"}, X: 20, Y: 15, Openable: true, Visibility: wf.AudienceGM},
	}
	for _, p := range pois {
		p.WorldID = world.ID
		if err := db.CreatePOI(ctx, p); err != nil {
			return nil, err
		}
	}
	lore := []*wf.LoreEntity{
		{Collection: "pantheons", ID: "deep-court", Name: "The Deep Court"},
		{Collection: "deities", ID: "maren", Name: "Maren of the Tides", JSON: mustJSON(map[string]any{"id": "maren", "name": "Maren of the Tides", "pantheonId": "deep-court"})},
		{Collection: "factions", ID: "tide-wardens", Name: "The Tide Wardens"},
	}
	for _, e := range lore {
		e.WorldID = world.ID
		if len(e.JSON) == 0 {
			e.JSON = mustJSON(map[string]any{"id": e.ID, "name": e.Name})
		}
		if err := db.UpsertLore(ctx, e); err != nil {
			return nil, err
		}
	}
	if err := db.SetPresence(ctx, &wf.Presence{WorldID: world.ID, UserID: player.ID, X: 4, Y: 5}); err != nil {
		return nil, err
	}
	return &demoIDs{Owner: owner.ID, GM: gm.ID, Player: player.ID, World: world.ID}, nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// redactDSN hides a password in a database URL for logs.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
