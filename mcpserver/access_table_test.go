package mcpserver

import (
	"os"
	"strings"
	"testing"
)

// accessTableMarkdown renders the access table as docs/endpoint.md shows it.
func accessTableMarkdown(rows []ToolAccess) string {
	var b strings.Builder
	b.WriteString("| tool | scopes | caller |\n|---|---|---|\n")
	for _, r := range rows {
		sep := " and "
		if r.AnyScope {
			sep = " or "
		}
		b.WriteString("| `" + r.Tool + "` | `" + strings.Join(r.Scopes, "`"+sep+"`") + "` | " + r.Who.String() + " |\n")
	}
	return b.String()
}

// TestREADMEAccessTable keeps the tool table of docs/endpoint.md equal to the access
// table the server enforces. WORLDFORGE_UPDATE_DOCS=1 (or the older WORLDFORGE_UPDATE_README=1) rewrites it.
func TestREADMEAccessTable(t *testing.T) {
	s, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- access-table -->\n", "<!-- /access-table -->"
	raw, err := os.ReadFile("../docs/endpoint.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i, j := strings.Index(readme, begin), strings.Index(readme, end)
	if i < 0 || j < i {
		t.Fatalf("docs/endpoint.md has no %q … %q block", begin, end)
	}
	want := accessTableMarkdown(s.AccessTable())
	if got := readme[i+len(begin) : j]; got != want {
		if os.Getenv("WORLDFORGE_UPDATE_README") == "1" || os.Getenv("WORLDFORGE_UPDATE_DOCS") == "1" {
			if err := os.WriteFile("../docs/endpoint.md", []byte(readme[:i+len(begin)]+want+readme[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("docs/endpoint.md access table is stale; run WORLDFORGE_UPDATE_DOCS=1 go test ./mcpserver -run TestREADMEAccessTable. Want:\n%s", want)
	}
}
