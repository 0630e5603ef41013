package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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

// bearerTransport adds "Authorization: Bearer <token>" to every request.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
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
	return base.RoundTrip(r2)
}
