package servecmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/mcpserver"
)

// DemoIDs are the rows the demo made, kept as a store secret so that a
// second `serve --demo` on the same database reuses them.
type DemoIDs struct {
	Owner  string `json:"owner"`
	GM     string `json:"gm"`
	Player string `json:"player"`
	World  string `json:"world"`
}

const demoTokenTTL = 24 * time.Hour

// seedDemo makes (or finds) the demo rows, mints a fresh API key with every
// scope and a session JWT for the owner, and prints them with an MCP client
// config to w; with the console on (consoleURL set), a one-time sign-in
// link for the owner too.
func seedDemo(ctx context.Context, db wf.Store, a *auth.Authenticator, baseURL, consoleURL string, w io.Writer) error {
	raw, err := db.Secret(ctx, "demo-ids", func() ([]byte, error) {
		ids, err := CreateDemo(ctx, db)
		if err != nil {
			return nil, err
		}
		return json.Marshal(ids)
	})
	if err != nil {
		return err
	}
	var ids DemoIDs
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
	login := ""
	if consoleURL != "" {
		link, _, err := a.CreateLoginLink(ctx, ids.Owner, demoTokenTTL)
		if err != nil {
			return err
		}
		login = fmt.Sprintf("  web console sign-in link (owner, works once, %s): %s/login/%s\n", demoTokenTTL, consoleURL, link)
	}
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
%s
MCP client config:
%s
`, endpoint, ids.Owner, ids.GM, ids.Player, ids.World, key, demoTokenTTL, jwt, login, cfg)
	return nil
}

// CreateDemo makes the demo users and a small world with something in
// every part the read tools show.
func CreateDemo(ctx context.Context, db wf.Store) (*DemoIDs, error) {
	owner := &wf.User{Name: "Demo Owner"}
	gm := &wf.User{Name: "Demo GM"}
	player := &wf.User{Name: "Demo Player"}
	for _, u := range []*wf.User{owner, gm, player} {
		if err := db.CreateUser(ctx, u); err != nil {
			return nil, err
		}
	}
	// The demo world is generated as an agent would make it: the
	// create-world tool, as the owner.
	tools, err := mcpserver.New(db, nil)
	if err != nil {
		return nil, err
	}
	actor := &wf.Actor{UserID: owner.ID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}
	res, err := tools.CallTool(ctx, actor, wf.ToolCreateWorld,
		mustJSON(wf.CreateWorldArgs{Name: "Demo World", Template: "starter-wetland", Seed: ptr(int64(1)), Size: "small"}))
	if err != nil {
		return nil, err
	}
	worldID := res.(wf.CreateWorldResult).ID
	if err := db.AddWorldMember(ctx, worldID, gm.ID, wf.RoleGM); err != nil {
		return nil, err
	}
	if err := db.AddWorldMember(ctx, worldID, player.ID, wf.RolePlayer); err != nil {
		return nil, err
	}
	camp := &wf.Campaign{OwnerID: owner.ID, WorldID: worldID, Name: "The Sunken Crown", JSON: mustJSON(map[string]any{"session": 1})}
	if err := db.CreateCampaign(ctx, camp); err != nil {
		return nil, err
	}
	if err := db.CreateQuest(ctx, &wf.Quest{OwnerID: owner.ID, CampaignID: camp.ID, WorldID: worldID, Name: "Find the crown", JSON: mustJSON(map[string]any{"steps": []string{"Reach the lake", "Dive"}})}); err != nil {
		return nil, err
	}
	if err := db.CreateEncounter(ctx, &wf.Encounter{OwnerID: owner.ID, CampaignID: camp.ID, WorldID: worldID, Name: "Drowned sentries", JSON: mustJSON(map[string]any{"foes": []string{"drowned sentry", "drowned sentry"}})}); err != nil {
		return nil, err
	}
	if err := db.CreateWikiPage(ctx, &wf.WikiPage{WorldID: worldID, Title: "Session 1", Body: "The party met at the ford.",
		Kind: wf.WikiKindQuestLog, Audience: wf.AudienceGM}, owner.ID); err != nil {
		return nil, err
	}
	// The player starts on the cell of the first pickable POI the player
	// sees, so that worldforge_player_pickup works at once.
	pois, err := db.ListPOIs(ctx, worldID)
	if err != nil {
		return nil, err
	}
	x, y := 0, 0
	for _, p := range pois {
		if p.Pickable && len(p.Items) > 0 && wf.POISightOf(wf.RolePlayer).Sees(&p) {
			x, y = p.X, p.Y
			break
		}
	}
	if err := db.SetPresence(ctx, &wf.Presence{WorldID: worldID, UserID: player.ID, X: x, Y: y}); err != nil {
		return nil, err
	}
	return &DemoIDs{Owner: owner.ID, GM: gm.ID, Player: player.ID, World: worldID}, nil
}

func ptr[T any](v T) *T { return &v }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
