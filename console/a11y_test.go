package console_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/worldforge-go/worldforge/internal/browsertest"
)

// axeViolation is one rule an axe-core run found broken on a page.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []string `json:"target"`
	} `json:"nodes"`
}

// axeResult is what the test keeps of an axe-core run.
type axeResult struct {
	Violations []axeViolation `json:"violations"`
	Passed     int            `json:"passed"`
}

// axeSource is axe-core (Deque's accessibility rules engine, pinned in
// interop/package.json; .ci/run installs it with npm ci), or "" when it
// is not installed.
func axeSource(t *testing.T) string {
	path := os.Getenv("WORLDFORGE_AXE")
	if path == "" {
		path = filepath.Join("..", "interop", "node_modules", "axe-core", "axe.min.js")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// TestBrowserAccessibility runs axe-core's WCAG 2.1 A and AA rules on
// every main page of the console (signed out and signed in, with a
// generated world and pending proposals) in headless Chromium: labels,
// names, contrast, landmarks, headings, table headers, focusable
// controls. A serious or critical violation fails the test; lesser ones
// are logged.
func TestBrowserAccessibility(t *testing.T) {
	b := browsertest.New(t)
	axe := axeSource(t)
	if axe == "" {
		t.Skip("axe-core is not installed (npm ci in interop/, or WORLDFORGE_AXE=path/to/axe.min.js)")
	}
	s, world, edit := tourFixture(t)
	run := func(path string) {
		t.Helper()
		b.Do(chromedp.Navigate(s.URL+path), chromedp.WaitVisible(chromedp.CSS("main h1")))
		// DevTools evaluation is not page script: the CSP does not apply.
		if _, err := chromedp.Run(b.Context(), chromedp.Evaluate[bool](axe+";true")); err != nil {
			t.Fatalf("%s: load axe-core: %v", path, err)
		}
		res := browsertest.Run(b, chromedp.Evaluate[axeResult](
			`axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}).then(r => ({violations: r.violations, passed: r.passes.length}))`,
			chromedp.EvalAwaitPromise))
		if res.Passed == 0 {
			t.Errorf("%s: axe-core checked nothing", path)
		}
		t.Logf("%s: %d rules passed, %d violated", path, res.Passed, len(res.Violations))
		for _, v := range res.Violations {
			var where []string
			for _, n := range v.Nodes {
				where = append(where, strings.Join(n.Target, " "))
			}
			msg := fmt.Sprintf("%s: %s (%s): %s — %s", path, v.ID, v.Impact, v.Help, strings.Join(where, "; "))
			if v.Impact == "serious" || v.Impact == "critical" {
				t.Error(msg)
			} else {
				t.Log(msg)
			}
		}
	}
	run("/signin")
	b.SignIn(s.LoginLink(t, s.Owner))
	for _, path := range []string{"/", "/w/" + world.ID, "/queue", "/p/" + edit, "/rules", "/keys", "/audit"} {
		run(path)
	}
}
