package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/worldforge-go/worldforge"
)

// codeStatus maps error codes to HTTP statuses for REST responses.
var codeStatus = map[string]int{
	worldforge.ENotFound:         http.StatusNotFound,
	worldforge.EProposalNotFound: http.StatusNotFound,
	worldforge.EMissingScopes:    http.StatusForbidden,
	worldforge.EBadRequest:       http.StatusBadRequest,
	worldforge.EUnknownTemplate:  http.StatusBadRequest,
	worldforge.EFreeformGrid:     http.StatusBadRequest,
	worldforge.EOutOfBoundsCap:   http.StatusBadRequest,
	worldforge.ETooSmall:         http.StatusBadRequest,
	worldforge.ENonInteger:       http.StatusBadRequest,
	worldforge.ENoGrid:           http.StatusBadRequest,
	worldforge.ENoSize:           http.StatusBadRequest,
	worldforge.EConflict:         http.StatusConflict,
	worldforge.EVersionConflict:  http.StatusConflict,
	worldforge.EUnauthorized:     http.StatusUnauthorized,
	worldforge.EUnavailable:      http.StatusServiceUnavailable,
	worldforge.ERateLimited:      http.StatusTooManyRequests,
	worldforge.EQuotaExceeded:    http.StatusTooManyRequests,
	worldforge.EForbiddenHost:    http.StatusForbidden,
	worldforge.ETooLarge:         http.StatusRequestEntityTooLarge,
	worldforge.EInternal:         http.StatusInternalServerError,
}

// StatusOf returns the HTTP status for an error code.
func StatusOf(code string) int {
	if s, ok := codeStatus[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// writeError writes {"error": code[, "detail": …]} with the code's status.
// Internal errors say only "internal".
func writeError(w http.ResponseWriter, err error) {
	code := worldforge.ErrorCode(err)
	body := map[string]string{"error": code}
	var e *worldforge.Error
	if errors.As(err, &e) && e.Detail != "" {
		body["detail"] = e.Detail
	}
	if code == worldforge.EUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="worldforge"`)
	}
	if code == worldforge.EUnavailable && w.Header().Get("Retry-After") == "" {
		// The database is away or full: try again shortly.
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, StatusOf(code), body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
