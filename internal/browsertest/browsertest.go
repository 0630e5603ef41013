// Package browsertest drives a real headless Chromium from Go tests,
// through github.com/chromedp/chromedp (the maintained Go client of the
// Chrome DevTools Protocol: no Node, no WebDriver server, and it starts
// the browser itself).
//
// A test calls New, which skips the test unless WORLDFORGE_TEST_BROWSER
// is set (.ci/run sets it after installing Debian's chromium package), and
// gets one browser tab of its own. Every JavaScript dialog the page opens
// (alert, confirm, prompt) is recorded and dismissed, so a test can check
// that no injected script ran (Dialogs). Shot saves a screenshot when
// WORLDFORGE_SCREENSHOTS names a directory.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Browser is one test's browser tab.
type Browser struct {
	t   testing.TB
	ctx context.Context

	mu      sync.Mutex
	dialogs []string
}

// Timeout bounds each Do or Run call.
const Timeout = 30 * time.Second

// chromium finds the browser: $WORLDFORGE_CHROMIUM, else chromium or
// chromium-browser on PATH.
func chromium() (string, error) {
	if p := os.Getenv("WORLDFORGE_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium on PATH (apt-get install chromium, or set WORLDFORGE_CHROMIUM)")
}

// New starts a headless browser for the test (closed when it ends), or
// skips the test unless WORLDFORGE_TEST_BROWSER is set.
func New(t testing.TB) *Browser {
	t.Helper()
	if os.Getenv("WORLDFORGE_TEST_BROWSER") == "" {
		t.Skip("browser tests run with WORLDFORGE_TEST_BROWSER=1 (and Debian's chromium package)")
	}
	path, err := chromium()
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox cannot start
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("window-size", "1280,900"),
		chromedp.Flag("lang", "en-US"),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	b := &Browser{t: t, ctx: ctx}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	// Start the browser before anything else runs in it.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.dialogs = append(b.dialogs, fmt.Sprintf("%s: %s", ev.Type, ev.Message))
			b.mu.Unlock()
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return b
}

// Context is the tab's chromedp context, for chromedp.Run.
func (b *Browser) Context() context.Context { return b.ctx }

// Do runs the steps in the tab and fails the test on an error.
func (b *Browser) Do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.Shot("failure-" + sanitize(b.t.Name()))
		b.t.Fatalf("browser: %v", err)
	}
}

// Run runs one action that returns a value, and fails the test on an
// error.
func Run[T any](b *Browser, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.Shot("failure-" + sanitize(b.t.Name()))
		b.t.Fatalf("browser: %v", err)
	}
	return v
}

// Text is the visible text of the first element the CSS selector
// matches, once it is visible.
func (b *Browser) Text(css string) string {
	b.t.Helper()
	return Run(b, chromedp.Text(chromedp.CSS(css)))
}

// Location is the tab's URL.
func (b *Browser) Location() string {
	b.t.Helper()
	return Run(b, chromedp.Location())
}

// Dialogs are the JavaScript dialogs the pages opened so far.
func (b *Browser) Dialogs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.dialogs...)
}

// SignIn opens a console login link and waits for the page it leads to.
func (b *Browser) SignIn(link string) {
	b.t.Helper()
	b.Do(chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("header.top nav")))
}

// Shot saves a full-page PNG of the tab as NAME.png in the directory
// $WORLDFORGE_SCREENSHOTS names; without it, it does nothing.
func (b *Browser) Shot(name string) {
	dir := os.Getenv("WORLDFORGE_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
	}
}

func sanitize(s string) string {
	out := []rune(s)
	for i, r := range out {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			out[i] = '_'
		}
	}
	return string(out)
}
