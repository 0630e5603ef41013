package oauth

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Authorization is one authorization request for the user to approve.
type Authorization struct {
	Server      string // the server's name
	URL         string // the authorization request: open it in a browser
	RedirectURI string // where the authorization server sends the browser back
}

// AuthorizeFunc shows the user an authorization request and returns
// the URL the authorization server sent the browser back to: the redirect
// URI with code, state and iss (or error) in its query.
type AuthorizeFunc func(ctx context.Context, a *Authorization) (*url.URL, error)

// LoopbackAuthorizer returns an AuthorizeFunc for desktop hosts:
// it listens on the redirect URI (an http loopback URI with a port, such as
// DefaultRedirectURI), calls open with the authorization URL (open it
// in the user's browser) and waits for the browser to come back.
func LoopbackAuthorizer(open func(authURL string) error) AuthorizeFunc {
	return func(ctx context.Context, a *Authorization) (*url.URL, error) {
		ru, err := url.Parse(a.RedirectURI)
		if err != nil || ru.Scheme != "http" || !isLoopbackHost(ru.Hostname()) || ru.Port() == "" {
			return nil, fmt.Errorf("loopback authorizer: redirect URI %q is not an http loopback URI with a port", a.RedirectURI)
		}
		ln, err := net.Listen("tcp", ru.Host)
		if err != nil {
			return nil, fmt.Errorf("loopback authorizer: %w", err)
		}
		path := ru.Path
		if path == "" {
			path = "/"
		}
		got := make(chan *url.URL, 1)
		srv := &http.Server{
			ReadHeaderTimeout: 10 * time.Second,
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != path {
					http.NotFound(w, r)
					return
				}
				io.WriteString(w, "Authorization finished: you may close this window.\n")
				cb := *ru
				cb.RawQuery = r.URL.RawQuery
				select {
				case got <- &cb:
				default:
				}
			}),
		}
		go srv.Serve(ln)
		defer srv.Close()
		if err := open(a.URL); err != nil {
			return nil, fmt.Errorf("loopback authorizer: open browser: %w", err)
		}
		select {
		case u := <-got:
			return u, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
