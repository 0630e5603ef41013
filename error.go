package worldforge

import (
	"errors"
	"fmt"
	"strings"
)

// Error codes. They are the texts that MCP tool errors carry (the spec's
// "missing_scopes:…", "not_found", "bad_request: …", …) and the keys of the
// HTTP status table in package httpapi.
const (
	ENotFound         = "not_found"
	EMissingScopes    = "missing_scopes"
	EBadRequest       = "bad_request"
	EConflict         = "conflict"
	EVersionConflict  = "version_conflict"
	EProposalNotFound = "proposal_not_found"
	EUnknownTemplate  = "unknown_template"
	EUnauthorized     = "unauthorized"
	EInternal         = "internal"
	EUnavailable      = "unavailable"

	// InternalErrorText is the whole text of the isError tool result for
	// an internal error (code EInternal): no detail, so no internals leak.
	// It is what MCP clients see on the wire; REST answers say EInternal.
	InternalErrorText = "internal_error"

	// Abuse limits (package httpapi): transport refusals, never tool
	// results.
	ERateLimited   = "rate_limited"   // over a credential's rate or concurrency limit (429, Retry-After)
	EForbiddenHost = "forbidden_host" // a Host or Origin the server does not serve (DNS-rebinding protection, 403)
	ETooLarge      = "too_large"      // a REST request body over the limit (413)

	// EQuotaExceeded is a write that would take its user over a quota
	// (see Quotas): a tool error "quota_exceeded: <what>" and a REST 429
	// whose detail is <what> (QuotaWorlds, QuotaCells, …).
	EQuotaExceeded = "quota_exceeded"

	// Resize refusals (worldforge_resize_world). Each renders as the bare
	// code.
	EFreeformGrid   = "freeform_grid"     // the world's map is a freeform image, not a grid
	EOutOfBoundsCap = "out_of_bounds_cap" // a side is over the 4096 cap
	ETooSmall       = "too_small"         // a side is under 1
	ENonInteger     = "non_integer"       // a side is NaN, infinite or fractional
	ENoGrid         = "no_grid"           // the world document has no grid
	ENoSize         = "no_size"           // a size is missing (argument or grid cols/rows)
)

// UnresolvedOwner is the detail of the missing_scopes error given when the
// caller's credential resolves to no existing user.
const UnresolvedOwner = "unresolved_owner"

// Error is a domain error with a machine-readable code and a detail for
// people. Its Error text is the exact text the spec gives tool failures.
type Error struct {
	Code   string
	Detail string
}

// Error renders the wire text: "not_found", "missing_scopes:a,b",
// "bad_request: too_far", "conflict: no_presence".
func (e *Error) Error() string {
	switch {
	case e.Detail == "":
		return e.Code
	case e.Code == EMissingScopes:
		return e.Code + ":" + e.Detail
	default:
		return e.Code + ": " + e.Detail
	}
}

// Is makes errors.Is(err, &Error{Code: c}) match any *Error with code c.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Detail == "" || t.Detail == e.Detail)
}

// Errorf returns an *Error with the given code and a formatted detail.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// Sentinel-like values for errors.Is.
var (
	ErrNotFound         = &Error{Code: ENotFound}
	ErrVersionConflict  = &Error{Code: EVersionConflict}
	ErrProposalNotFound = &Error{Code: EProposalNotFound}
	ErrUnauthorized     = &Error{Code: EUnauthorized}
)

// MissingScopes returns the missing_scopes error naming every scope missing.
func MissingScopes(scopes ...string) *Error {
	return &Error{Code: EMissingScopes, Detail: strings.Join(scopes, ",")}
}

// BadRequest returns a bad_request error with the given detail.
func BadRequest(format string, args ...any) *Error {
	return Errorf(EBadRequest, format, args...)
}

// ErrorCode returns the code of err if it is (or wraps) an *Error, and
// EInternal otherwise. A nil error has no code.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}
