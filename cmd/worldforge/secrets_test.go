package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// TestSecretsStayOut runs a server with debug logging through a mix of
// good and bad credentials, tool calls that succeed and fail, and REST
// routes, then looks for every credential (and every part of one that
// could identify it) in the server's whole output, in every answer it
// gave, in every audit row and, on SQLite, in the database files.
func TestSecretsStayOut(t *testing.T) {
	dbtest.ForEachDSN(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		db := openStore(t, dsn)
		a := authenticator(t, db)
		user := &wf.User{Name: "Keeper"}
		if err := db.CreateUser(ctx, user); err != nil {
			t.Fatal(err)
		}
		key, _, err := a.CreateKey(ctx, user.ID, []string{wf.ScopeAll})
		if err != nil {
			t.Fatal(err)
		}
		narrow, _, err := a.CreateKey(ctx, user.ID, []string{wf.ScopeWikiRead})
		if err != nil {
			t.Fatal(err)
		}
		revoked, _, err := a.CreateKey(ctx, user.ID, []string{wf.ScopeAll})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.RevokeKey(ctx, revoked); err != nil {
			t.Fatal(err)
		}
		jwt, err := a.IssueToken(ctx, user.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		world := createWorld(t, db, user.ID)
		// Wrong credentials of the right shape, and a tampered token.
		wrongKey := "wk_live_" + strings.Repeat("q", 32)
		tampered := jwt[:len(jwt)-4] + "AAAA"
		secrets := map[string]string{
			"key": key, "key body": strings.TrimPrefix(key, "wk_live_"),
			"narrow key": narrow, "revoked key": revoked, "wrong key": wrongKey,
			"jwt": jwt, "jwt signature": jwt[strings.LastIndexByte(jwt, '.')+1:],
			"tampered jwt": tampered,
		}

		child := startCrashChild(t, dsn, "--log-level", "debug")
		var answers bytes.Buffer
		client := &http.Client{Timeout: 10 * time.Second}
		do := func(method, path, token, body string) {
			t.Helper()
			req, err := http.NewRequest(method, child.base+path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			for k, vs := range resp.Header {
				answers.WriteString(k + ": " + strings.Join(vs, ",") + "\n")
			}
			answers.Write(b)
		}
		call := func(token, tool string, args map[string]any) {
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
				"params": map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{}}})
			do("POST", "/mcp", token, string(body))
		}

		// Through the official client: successes and tool errors.
		for _, tok := range []string{key, jwt} {
			cs := testserver.Connect(t, child.url, tok, "2025-11-25")
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{wf.ToolReadWorld, map[string]any{"id": world}},
				{wf.ToolReadWorld, map[string]any{"id": "world_nothereatall0000"}},
				{wf.ToolListCampaigns, nil},
				{wf.ToolProposeQuest, map[string]any{"payload": map[string]any{"name": "Q"}, "diff_summary": "new"}},
				{wf.ToolCreateCampaign, map[string]any{"name": ""}},
			} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				if err != nil {
					t.Fatalf("%s: %v", c.tool, err)
				}
				b, _ := json.Marshal(res)
				answers.Write(b)
			}
		}
		// Raw requests: a missing scope, every bad credential, REST.
		call(narrow, wf.ToolReadWorld, map[string]any{"id": world})
		for _, bad := range []string{wrongKey, revoked, tampered, key + "x", "Basic " + key} {
			call(bad, wf.ToolListCampaigns, nil)
			do("GET", "/me", bad, "")
			do("POST", "/proposals/prop_nothereatall000000/commit", bad, "")
		}
		do("GET", "/me", key, "")
		do("GET", "/me", jwt, "")
		do("POST", "/proposals/prop_nothereatall000000/commit", key, "")
		do("POST", "/mcp", key, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{`)

		if err := child.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		child.wait(t, "SIGTERM")
		child.checkLog(t, "secrets")
		logs := child.stderr.String() + child.stdout.String()
		if !strings.Contains(logs, "level=DEBUG") && !strings.Contains(logs, `"level":"DEBUG"`) {
			t.Logf("no debug lines in the log (the server may log little at debug):\n%s", logs)
		}

		rows, err := db.ListAudit(ctx, wf.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			t.Fatal("no audit rows: the calls did not reach the tools")
		}
		audit, _ := json.Marshal(rows)

		places := map[string]string{"log": logs, "answers": answers.String(), "audit": string(audit)}
		if strings.HasPrefix(dsn, "postgres") {
			t.Log("PostgreSQL: database files not searched")
		} else {
			path := strings.TrimPrefix(strings.SplitN(dsn, "?", 2)[0], "sqlite:")
			for _, f := range []string{path, path + "-wal"} {
				if b, err := os.ReadFile(f); err == nil {
					places["file "+filepath.Base(f)] = string(b)
				}
			}
			if len(places["file "+filepath.Base(path)]) == 0 {
				t.Errorf("could not read the database file %s", path)
			}
		}
		for where, text := range places {
			for what, secret := range secrets {
				if strings.Contains(text, secret) {
					t.Errorf("%s holds the %s", where, what)
				}
			}
		}
	})
}
