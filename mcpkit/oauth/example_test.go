package oauth_test

import (
	"context"
	"fmt"

	"github.com/worldforge-go/worldforge/mcpkit"
	"github.com/worldforge-go/worldforge/mcpkit/oauth"
)

// A desktop host: the user approves the client in a browser, which comes
// back to the loopback redirect URI.
func Example() {
	openBrowser := func(authURL string) error {
		fmt.Println("open", authURL) // exec.Command("xdg-open", authURL).Start(), say
		return nil
	}
	c := mcpkit.NewClient(mcpkit.ServerConfig{
		Name:  "notes",
		URL:   "https://notes.example.com/mcp",
		OAuth: &oauth.Config{Scopes: []string{"notes:read"}},
	}, &mcpkit.ClientOptions{OAuthAuthorize: oauth.LoopbackAuthorizer(openBrowser)})
	defer c.Close()
	// Connect authorizes when the server first answers 401, and the
	// tokens live as long as c.
	_ = c.Connect(context.Background())
}

// The "oauth" object of a configuration file entry, as LoadConfig reads
// it.
func ExampleParseEntry() {
	getenv := func(name string) string { return map[string]string{"CI_BOT_SECRET": "s3cret"}[name] }
	cfg, err := oauth.ParseEntry([]byte(`{"grant": "client_credentials", "clientId": "ci-bot",
		"clientSecretEnv": "CI_BOT_SECRET"}`), "/etc/worldforge/mcp.json", getenv)
	fmt.Println(cfg.Grant, cfg.ClientID, cfg.ClientSecret == "s3cret", err)

	_, err = oauth.ParseEntry([]byte(`{"grant": "client_credentials", "clientSecret": "s3cret"}`), "/etc/worldforge/mcp.json", getenv)
	fmt.Println(err)
	// Output:
	// client_credentials ci-bot true <nil>
	// oauth.clientId: required with a client secret or private key
}
