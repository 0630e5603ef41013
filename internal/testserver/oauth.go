package testserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	wf "github.com/worldforge-go/worldforge"
)

// Browser is a person's browser for OAuth tests: a cookie jar signed in
// to the console through a one-time login link (as a person clicks it),
// that answers authorization requests on the consent page. It follows
// redirects within the server and stops at the first one leaving it —
// the redirect back to the app, which Approve and Deny return.
type Browser struct {
	s  *Server
	hc *http.Client

	mu sync.Mutex
	// Scopes, if set, are the only scopes left ticked on the consent
	// page (the person narrows the request); nil keeps every ticked one.
	Scopes []string
	visits int
	pages  []string // the consent pages seen, as HTML
}

// Browser signs u in to the console (the server must run it: Config.Console)
// and returns the browser.
func (s *Server) Browser(t testing.TB, u *wf.User) *Browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &Browser{s: s}
	b.hc = &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if len(via) >= 10 || !b.onServer(r.URL) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	// The login link's page holds a form that spends the link on POST.
	link := s.LoginLink(t, u)
	page, err := b.get(context.Background(), link)
	if err != nil {
		t.Fatalf("login page: %v", err)
	}
	csrf := field(csrfRE, page)
	if csrf == "" {
		t.Fatalf("login page has no csrf field: %s", page)
	}
	resp, err := b.hc.PostForm(link, url.Values{"csrf": {csrf}})
	if err != nil {
		t.Fatalf("sign in: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("sign in: %s", resp.Status)
	}
	return b
}

func (b *Browser) onServer(u *url.URL) bool {
	base, _ := url.Parse(b.s.URL)
	return u.Scheme == base.Scheme && u.Host == base.Host
}

var (
	csrfRE    = regexp.MustCompile(`name="csrf" value="([^"]*)"`)
	requestRE = regexp.MustCompile(`name="request" value="([^"]*)"`)
	scopeRE   = regexp.MustCompile(`<input type="checkbox" name="scope" value="([^"]*)"( checked)?`)
)

func field(re *regexp.Regexp, page string) string {
	m := re.FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// get fetches u and returns its body; anything but 200 is an error.
func (b *Browser) get(ctx context.Context, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s (Location %q): %s", u, resp.Status, resp.Header.Get("Location"), body)
	}
	return string(body), nil
}

// Visits is how many authorization requests the browser was shown.
func (b *Browser) Visits() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.visits
}

// ConsentPages returns the consent pages the browser was shown.
func (b *Browser) ConsentPages() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.pages...)
}

// Approve opens the authorization URL, approves on the consent page
// (with the ticked scopes, narrowed to Scopes if set) and returns the
// redirect back to the app, without following it.
func (b *Browser) Approve(ctx context.Context, authURL string) (*url.URL, error) {
	return b.decide(ctx, authURL, "approve")
}

// Deny opens the authorization URL, denies, and returns the redirect
// back to the app.
func (b *Browser) Deny(ctx context.Context, authURL string) (*url.URL, error) {
	return b.decide(ctx, authURL, "deny")
}

func (b *Browser) decide(ctx context.Context, authURL, decision string) (*url.URL, error) {
	page, err := b.get(ctx, authURL)
	if err != nil {
		return nil, fmt.Errorf("consent page: %w", err)
	}
	b.mu.Lock()
	b.visits++
	b.pages = append(b.pages, page)
	keep := b.Scopes
	b.mu.Unlock()
	csrf, request := field(csrfRE, page), field(requestRE, page)
	if csrf == "" || request == "" {
		return nil, fmt.Errorf("consent page has no form: %s", page)
	}
	form := url.Values{"csrf": {csrf}, "request": {request}, "decision": {decision}}
	for _, m := range scopeRE.FindAllStringSubmatch(page, -1) {
		s := html.UnescapeString(m[1])
		if m[2] != "" && (keep == nil || slices.Contains(keep, s)) {
			form.Add("scope", s)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.s.URL+"/oauth/consent", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := b.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || loc == "" {
		return nil, fmt.Errorf("consent %s: %s: %s", decision, resp.Status, body)
	}
	u, err := url.Parse(loc)
	if err != nil {
		return nil, err
	}
	if b.onServer(u) {
		return nil, fmt.Errorf("consent %s redirected within the server, to %s", decision, loc)
	}
	return u, nil
}

// Follow visits the redirect back to the app (a loopback callback
// listener of a client), as the browser would.
func (b *Browser) Follow(ctx context.Context, u *url.URL) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return errors.New("callback answered " + resp.Status)
	}
	return nil
}

// Disconnect presses the revoke button of the connected app clientID on
// the console's keys page.
func (b *Browser) Disconnect(ctx context.Context, clientID string) error {
	page, err := b.get(ctx, b.s.URL+"/keys")
	if err != nil {
		return err
	}
	csrf := field(csrfRE, page)
	if csrf == "" {
		return fmt.Errorf("keys page has no csrf field")
	}
	if !strings.Contains(page, html.EscapeString(clientID)) {
		return fmt.Errorf("keys page does not list the connected app %s", clientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.s.URL+"/keys/apps/revoke",
		strings.NewReader(url.Values{"csrf": {csrf}, "client": {clientID}}.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := b.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "App disconnected") {
		return fmt.Errorf("disconnect: %s: %s", resp.Status, body)
	}
	return nil
}

// RegisterClient registers an OAuth client through dynamic registration
// (POST /register with the JSON body) and returns its client_id; anything
// but 201 with an id fails the test.
func (s *Server) RegisterClient(t testing.TB, body string) string {
	t.Helper()
	resp, err := http.Post(s.URL+"/register", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reg); err != nil || resp.StatusCode != http.StatusCreated || reg.ClientID == "" {
		t.Fatalf("register: %s (%v)", resp.Status, err)
	}
	return reg.ClientID
}
