package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
)

// TokenSource supplies the bearer token when no APIKey or JWT is given.
// Connect calls it once.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

// TokenFunc adapts a function to TokenSource.
type TokenFunc func(ctx context.Context) (string, error)

// Token calls f.
func (f TokenFunc) Token(ctx context.Context) (string, error) { return f(ctx) }

// errNoCredentials is Connect's answer to options without a credential.
var errNoCredentials = errors.New("worldforge client: no credential: set Options.APIKey, JWT or TokenSource")

// resolveToken picks the credential: APIKey, then JWT, then TokenSource.
func resolveToken(ctx context.Context, opts Options) (string, error) {
	switch {
	case opts.APIKey != "":
		return opts.APIKey, nil
	case opts.JWT != "":
		return opts.JWT, nil
	case opts.TokenSource != nil:
		tok, err := opts.TokenSource.Token(ctx)
		if err != nil {
			return "", fmt.Errorf("worldforge client: token source: %w", err)
		}
		if tok == "" {
			return "", errors.New("worldforge client: token source returned an empty token")
		}
		return tok, nil
	}
	return "", errNoCredentials
}

// ErrCredentialRefused is what [Connect] returns, wrapped, when the server
// answered its first request with 401 or 403: the credential was refused,
// and Connect sends nothing more (in particular no initialize after a
// refused server/discover). Match it with errors.Is.
var ErrCredentialRefused = errors.New("worldforge client: credential refused")

// refusedError is ErrCredentialRefused with the HTTP status that refused
// the credential.
type refusedError struct{ status int }

func (e *refusedError) Error() string {
	return fmt.Sprintf("%v: HTTP %d %s", ErrCredentialRefused, e.status, http.StatusText(e.status))
}

func (e *refusedError) Unwrap() error { return ErrCredentialRefused }

// bearerTransport adds "Authorization: Bearer <token>" to every request.
// While Connect runs (connecting is set) it also remembers a 401 or 403
// and fails every later request of that Connect without sending it: the
// go-sdk falls back from a refused server/discover to initialize, which
// would send the same refused credential a second time.
type bearerTransport struct {
	token      string
	base       http.RoundTripper
	connecting atomic.Bool
	refused    atomic.Int32 // the status of a refused request during Connect
}

// connectDone ends the connect phase and returns the status that refused
// the credential during it, if any.
func (b *bearerTransport) connectDone() int {
	b.connecting.Store(false)
	return int(b.refused.Load())
}

func (b *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	connecting := b.connecting.Load()
	if connecting {
		if st := b.refused.Load(); st != 0 {
			if r.Body != nil {
				r.Body.Close() // a RoundTripper closes the body, even on error
			}
			return nil, &refusedError{status: int(st)}
		}
	}
	// A RoundTripper must not modify the request: send a copy with its own
	// header map.
	r2 := new(http.Request)
	*r2 = *r
	r2.Header = r.Header.Clone()
	if r2.Header == nil {
		r2.Header = make(http.Header)
	}
	r2.Header.Set("Authorization", "Bearer "+b.token)
	base := b.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r2)
	if err == nil && connecting && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		b.refused.CompareAndSwap(0, int32(resp.StatusCode))
	}
	return resp, err
}
