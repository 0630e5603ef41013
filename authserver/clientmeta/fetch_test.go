package clientmeta

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestIsClientIDURL(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"https://app.example.com/client.json", true},
		{"https://app.example.com:8443/oauth/client-metadata.json", true},
		{"https://app.example.com/c?v=1", true},
		{"https://127.0.0.1:9/c", true}, // the shape is fine; Fetch's dialer refuses the address

		{"", false},
		{"https://app.example.com", false},
		{"https://app.example.com/", false},
		{"http://app.example.com/client.json", false},
		{"HTTPS://app.example.com/client.json", false},
		{"https://app.example.com/client.json#x", false},
		{"https://app.example.com/client.json#", false},
		{"https://u:p@app.example.com/client.json", false},
		{"https://app.example.com/a/../client.json", false},
		{"https://app.example.com/./client.json", false},
		{"https://app.example.com/a/%2e%2e/client.json", false},
		{"https://app.example.com/a/.%2E/client.json", false},
		{"https:///client.json", false},
		{"https://:443/client.json", false},
		{"https://app.example.com/c lient.json", false},
		{"https://app.example.com/clïent.json", false},
		{"https://app.example.com/" + strings.Repeat("a", MaxURILength), false},
		{"my-client", false},
	} {
		if got := IsClientIDURL(tc.s); got != tc.want {
			t.Errorf("IsClientIDURL(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

// docServer is a real TLS server answering every request with handler,
// counting the requests it got.
func docServer(t *testing.T, handler func(w http.ResponseWriter, r *http.Request, url string)) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	var ts *httptest.Server
	ts = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		handler(w, r, ts.URL+r.URL.RequestURI())
	}))
	t.Cleanup(ts.Close)
	return ts, &hits
}

func serveDoc(doc string) func(w http.ResponseWriter, r *http.Request, url string) {
	return func(w http.ResponseWriter, r *http.Request, url string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, strings.ReplaceAll(doc, "$URL", url))
	}
}

func TestFetch(t *testing.T) {
	ts, hits := docServer(t, func(w http.ResponseWriter, r *http.Request, url string) {
		if r.Method != http.MethodGet || r.Header.Get("Accept") != "application/json" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		serveDoc(`{"client_id":"$URL","client_name":"Doc App","redirect_uris":["http://127.0.0.1/cb","https://doc.example/cb"],"grant_types":["authorization_code","refresh_token"],"token_endpoint_auth_method":"none","jwks_uri":"https://doc.example/jwks"}`)(w, r, url)
	})
	f := &Fetcher{Client: ts.Client(), AllowInternal: true}
	clientID := ts.URL + "/oauth/client.json"
	md, err := f.Fetch(t.Context(), clientID)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if md.ClientID != clientID || md.ClientName != "Doc App" || len(md.RedirectURIs) != 2 ||
		md.TokenEndpointAuthMethod != "none" || strings.Join(md.GrantTypes, " ") != "authorization_code refresh_token" ||
		strings.Join(md.ResponseTypes, " ") != "code" {
		t.Errorf("metadata = %+v", md)
	}
	// Concurrent fetches share one client.
	errs := make(chan error, 20)
	for range 20 {
		go func() {
			_, err := f.Fetch(t.Context(), clientID)
			errs <- err
		}()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent Fetch: %v", err)
		}
	}
	if n := hits.Load(); n != 21 {
		t.Errorf("server got %d requests, want 21", n)
	}
}

func TestFetchRefusals(t *testing.T) {
	valid := `{"client_id":"$URL","redirect_uris":["https://doc.example/cb"]}`
	for _, tc := range []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request, url string)
		desc    string
	}{
		{"garbage", serveDoc(`this is not json`), "not a JSON object"},
		{"html", serveDoc(`<!doctype html><title>hi</title>`), "not a JSON object"},
		{"array", serveDoc(`[` + valid + `]`), "not a JSON object"},
		{"trailing garbage", serveDoc(valid + `x`), "not a JSON object"},
		{"duplicate key", serveDoc(`{"client_id":"$URL","client_id":"$URL","redirect_uris":["https://doc.example/cb"]}`), "more than once"},
		{"empty", serveDoc(``), "not a JSON object"},
		{"oversized", serveDoc(`{"client_id":"$URL","redirect_uris":["https://doc.example/cb"],"x":"` + strings.Repeat("a", DefaultFetchMaxBytes) + `"}`), "larger than 5120 bytes"},
		{"endless", func(w http.ResponseWriter, r *http.Request, url string) {
			for range 1 << 10 {
				if _, err := w.Write([]byte(strings.Repeat(" ", 1<<10))); err != nil {
					return
				}
			}
		}, "larger than"},
		{"client_id missing", serveDoc(`{"redirect_uris":["https://doc.example/cb"]}`), "is not the URL"},
		{"client_id another URL", serveDoc(`{"client_id":"https://other.example/client.json","redirect_uris":["https://doc.example/cb"]}`), "is not the URL"},
		{"client_id with a trailing slash", serveDoc(`{"client_id":"$URL/","redirect_uris":["https://doc.example/cb"]}`), "is not the URL"},
		{"client secret", serveDoc(`{"client_id":"$URL","client_secret":"s","redirect_uris":["https://doc.example/cb"]}`), "client_secret"},
		{"client_secret_post", serveDoc(`{"client_id":"$URL","token_endpoint_auth_method":"client_secret_post","redirect_uris":["https://doc.example/cb"]}`), "client_secret_post"},
		{"private_key_jwt", serveDoc(`{"client_id":"$URL","token_endpoint_auth_method":"private_key_jwt","redirect_uris":["https://doc.example/cb"]}`), "private_key_jwt"},
		{"bad redirect URI", serveDoc(`{"client_id":"$URL","redirect_uris":["http://doc.example/cb"]}`), "loopback"},
		{"no redirect URIs", serveDoc(`{"client_id":"$URL"}`), "redirect_uris is required"},
		{"implicit grant", serveDoc(`{"client_id":"$URL","redirect_uris":["https://doc.example/cb"],"grant_types":["implicit"]}`), "implicit"},
		{"not found", func(w http.ResponseWriter, r *http.Request, url string) { http.NotFound(w, r) }, "404"},
		{"server error", func(w http.ResponseWriter, r *http.Request, url string) {
			http.Error(w, valid, http.StatusInternalServerError)
		}, "500"},
		{"redirect", func(w http.ResponseWriter, r *http.Request, url string) {
			if r.URL.Path == "/moved.json" {
				serveDoc(valid)(w, r, url)
				return
			}
			http.Redirect(w, r, "/moved.json", http.StatusFound)
		}, "302"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, hits := docServer(t, tc.handler)
			f := &Fetcher{Client: ts.Client(), AllowInternal: true}
			md, err := f.Fetch(t.Context(), ts.URL+"/client.json")
			wantInvalidClient(t, md, err, tc.desc)
			if n := hits.Load(); n != 1 {
				t.Errorf("server got %d requests, want 1", n)
			}
		})
	}
}

func wantInvalidClient(t *testing.T, md *Metadata, err error, desc string) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("Fetch accepted it: %+v", md)
	}
	if md != nil {
		t.Errorf("metadata returned with an error: %+v", md)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if e.Code != CodeInvalidClient || !strings.Contains(e.Description, desc) {
		t.Errorf("got %q %q, want code invalid_client with %q", e.Code, e.Description, desc)
	}
	return e
}

func TestFetchNotAClientIDURL(t *testing.T) {
	f := &Fetcher{AllowInternal: true}
	for _, id := range []string{"my-client", "http://app.example.com/c.json", "https://app.example.com/", "https://app.example.com/c#x"} {
		md, err := f.Fetch(t.Context(), id)
		wantInvalidClient(t, md, err, "not an https URL with a path")
	}
}

func TestFetchTimeout(t *testing.T) {
	release := make(chan struct{})
	ts, _ := docServer(t, func(w http.ResponseWriter, r *http.Request, url string) {
		select { // never answers while the client waits
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	f := &Fetcher{Client: ts.Client(), AllowInternal: true, Timeout: 200 * time.Millisecond}
	md, err := f.Fetch(t.Context(), ts.URL+"/client.json")
	e := wantInvalidClient(t, md, err, "fetching the client metadata document failed")
	if !errors.Is(e, context.DeadlineExceeded) {
		t.Errorf("error %v does not wrap context.DeadlineExceeded", e)
	}
}

func TestFetchSlowBody(t *testing.T) {
	// Headers at once, then a body that never ends: the timeout bounds the
	// whole fetch, not only the wait for headers.
	ts, _ := docServer(t, func(w http.ResponseWriter, r *http.Request, url string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, `{"client_id":`)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	f := &Fetcher{Client: ts.Client(), AllowInternal: true, Timeout: 200 * time.Millisecond}
	md, err := f.Fetch(t.Context(), ts.URL+"/client.json")
	// The deadline ends the read; depending on who closes the connection
	// first the cause is the deadline or the truncated document.
	wantInvalidClient(t, md, err, "")
}

func TestFetchRefusesInternalAddresses(t *testing.T) {
	ts, hits := docServer(t, serveDoc(`{"client_id":"$URL","redirect_uris":["https://doc.example/cb"]}`))
	port := ts.Listener.Addr().(interface{ String() string }).String()
	_, port, _ = strings.Cut(port, ":")
	for _, tc := range []struct {
		name string
		f    *Fetcher
		url  string
	}{
		{"loopback IP", &Fetcher{Client: ts.Client()}, ts.URL + "/client.json"},
		{"a name resolving to loopback", &Fetcher{Client: ts.Client()}, "https://localhost:" + port + "/client.json"},
		{"the Fetcher's own client", &Fetcher{}, ts.URL + "/client.json"},
		{"IPv4-mapped loopback", &Fetcher{}, "https://[::ffff:127.0.0.1]:" + port + "/client.json"},
		{"unspecified", &Fetcher{}, "https://0.0.0.0:" + port + "/client.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md, err := tc.f.Fetch(t.Context(), tc.url)
			e := wantInvalidClient(t, md, err, "fetching the client metadata document failed")
			if !errors.Is(e, ErrInternalAddress) {
				t.Errorf("error %v does not wrap ErrInternalAddress", e)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("server got %d requests, want none", n)
	}
}

type otherTransport struct{}

func (otherTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("not used")
}

func TestFetchRefusesUncheckableTransport(t *testing.T) {
	f := &Fetcher{Client: &http.Client{Transport: otherTransport{}}}
	if _, err := f.Fetch(t.Context(), "https://app.example.com/c.json"); err == nil || !strings.Contains(err.Error(), "address check") {
		t.Errorf("Fetch with a non-*http.Transport = %v, want a configuration error", err)
	}
}

func TestIsPublic(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"8.8.8.8", true},
		{"2606:4700:4700::1111", true},
		{"93.184.216.34", true},

		{"127.0.0.1", false}, {"127.1.2.3", false}, {"::1", false}, {"::ffff:127.0.0.1", false},
		{"10.1.2.3", false}, {"172.16.0.1", false}, {"192.168.0.1", false}, {"fd00::1", false},
		{"169.254.169.254", false}, {"fe80::1", false},
		{"0.0.0.0", false}, {"::", false}, {"0.1.2.3", false},
		{"224.0.0.1", false}, {"ff02::1", false}, {"255.255.255.255", false},
		{"100.64.0.1", false}, {"198.18.0.1", false}, {"192.0.2.1", false}, {"240.0.0.1", false},
		{"64:ff9b::a00:1", false}, {"2002:a00:1::", false}, {"2001:db8::1", false}, {"fec0::1", false},
	} {
		if got := isPublic(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("isPublic(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}
