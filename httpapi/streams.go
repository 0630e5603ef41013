package httpapi

// Open GET /mcp streams.
//
// A stream holds a connection, a file descriptor and two goroutines for as
// long as the client keeps it, so streams are capped per credential
// (Limits.MaxStreamsPerCredential) and per server (Limits.MaxStreams); one
// over either cap is 429 rate_limited at once. An open stream re-verifies
// its credential every streamRecheck through the Authenticator, whose cache
// lives CacheTTL (500 ms by default): a stream whose key is revoked (through
// any replica), whose session JWT expires, or whose credential no longer
// names the same user ends within about 750 ms. A check that fails for
// another reason (a slow or unreachable database) keeps the stream open
// for up to streamUnverifiedGrace since the last check that succeeded.

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/worldforge-go/worldforge"
)

// streamRecheck is how often an open stream re-verifies its credential.
// With the authenticator's 500 ms cache, a revocation anywhere is seen
// within streamRecheck + CacheTTL.
const streamRecheck = 250 * time.Millisecond

// streamRecheckTimeout bounds one re-verification.
const streamRecheckTimeout = 2 * time.Second

// streamUnverifiedGrace is how long a stream stays open while its
// re-verifications fail for another reason than a refused credential (a
// slow or unreachable database): a check that only timed out under load
// must not end the stream, since a go-sdk client whose standalone stream
// the server ends may give up its whole session; a credential that cannot
// be verified for this long ends it.
const streamUnverifiedGrace = 5 * time.Second

// streamVerdict is the outcome of one re-verification of a stream's
// credential.
type streamVerdict int

const (
	streamValid   streamVerdict = iota // verified: the same user and key
	streamRefused                      // revoked, expired, or another owner now
	streamUnknown                      // the check itself failed
)

// streamRetryAfter is the Retry-After of a stream refused by a cap: a slot
// frees only when another stream ends.
const streamRetryAfter = 5 * time.Second

// Details of the 429 of a stream over a cap.
const (
	detailStreamsPerCredential = "too many open streams for this credential"
	detailStreamsServer        = "too many open streams on this server"
)

// streamCaps counts the open streams per credential key and in all.
type streamCaps struct {
	perCred, total int // 0: no cap

	mu    sync.Mutex
	byKey map[string]int
	n     int
}

func newStreamCaps(perCred, total int) *streamCaps {
	return &streamCaps{perCred: max(0, perCred), total: max(0, total), byKey: map[string]int{}}
}

// acquire counts a stream for key, or says which cap refuses it.
func (c *streamCaps) acquire(key string) (ok bool, detail string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.perCred > 0 && c.byKey[key] >= c.perCred {
		return false, detailStreamsPerCredential
	}
	if c.total > 0 && c.n >= c.total {
		return false, detailStreamsServer
	}
	c.byKey[key]++
	c.n++
	return true, ""
}

// release ends a stream acquire counted.
func (c *streamCaps) release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey[key] <= 1 {
		delete(c.byKey, key)
	} else {
		c.byKey[key]--
	}
	if c.n > 0 {
		c.n--
	}
}

// OpenStreams is the number of GET /mcp streams open now.
func (s *Server) OpenStreams() int {
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	return s.streams.n
}

// streamCredential re-verifies an open stream's credential: refused when
// it no longer verifies or now names another user or key, unknown when
// the check itself failed.
func (s *Server) streamCredential(ctx context.Context, token string, was *worldforge.Actor) (streamVerdict, error) {
	ctx, cancel := context.WithTimeout(ctx, streamRecheckTimeout)
	defer cancel()
	now, err := s.opts.Auth.Authenticate(ctx, token)
	switch {
	case errors.Is(err, worldforge.ErrUnauthorized):
		s.log.InfoContext(ctx, "stream closed: its credential was revoked or expired", "user_id", was.UserID, "key_id", was.KeyID)
		return streamRefused, err
	case err != nil:
		return streamUnknown, err
	case now.UserID != was.UserID || now.KeyID != was.KeyID:
		s.log.InfoContext(ctx, "stream closed: its credential changed owner", "user_id", was.UserID, "key_id", was.KeyID)
		return streamRefused, nil
	}
	return streamValid, nil
}
