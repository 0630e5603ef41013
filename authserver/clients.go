package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/authserver/clientmeta"
)

// document is a client's metadata as stored and as the registration
// response shows it (RFC 7591 §3.2.1).
type document struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	LogoURI                 string   `json:"logo_uri,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	SoftwareID              string   `json:"software_id,omitempty"`
	SoftwareVersion         string   `json:"software_version,omitempty"`
}

func documentOf(id string, issued time.Time, m *clientmeta.Metadata) *document {
	d := &document{
		ClientID: id, ClientName: m.ClientName, ClientURI: m.ClientURI, LogoURI: m.LogoURI, Scope: m.Scope,
		RedirectURIs: m.RedirectURIs, GrantTypes: m.GrantTypes, ResponseTypes: m.ResponseTypes,
		TokenEndpointAuthMethod: m.TokenEndpointAuthMethod, SoftwareID: m.SoftwareID, SoftwareVersion: m.SoftwareVersion,
	}
	if !issued.IsZero() {
		d.ClientIDIssuedAt = issued.Unix()
	}
	if d.TokenEndpointAuthMethod == "" {
		d.TokenEndpointAuthMethod = clientmeta.AuthMethodNone
	}
	return d
}

// register is dynamic client registration (RFC 7591): a validated
// document is stored under a new client_id and echoed back, 201. Every
// refusal is 400 with invalid_client_metadata or invalid_redirect_uri,
// and stores nothing.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, clientmeta.MaxRegistrationBytes+1))
	if err != nil {
		writeOAuthError(w, http.StatusBadRequest, clientmeta.CodeInvalidClientMetadata, "could not read the request body")
		return
	}
	m, err := clientmeta.ParseRegistration(body)
	if err != nil {
		var e *clientmeta.Error
		if errors.As(err, &e) {
			writeOAuthError(w, http.StatusBadRequest, e.Code, e.Description)
			return
		}
		writeOAuthError(w, http.StatusBadRequest, clientmeta.CodeInvalidClientMetadata, "the registration is not valid client metadata")
		return
	}
	now := s.now()
	id := wf.NewID("client")
	doc := documentOf(id, now, m)
	raw, err := json.Marshal(doc)
	if err != nil {
		s.serverError(w, r, fmt.Errorf("register: %w", err))
		return
	}
	if err := s.store.SaveOAuthClient(r.Context(), &wf.OAuthClient{ID: id, Name: m.ClientName, Document: raw, CreatedAt: now, UpdatedAt: now}); err != nil {
		s.serverError(w, r, fmt.Errorf("register: %w", err))
		return
	}
	s.log.InfoContext(r.Context(), "oauth client registered", "client_id", id, "client_name", m.ClientName)
	writeJSON(w, http.StatusCreated, doc)
}

// client returns the client: a registered one from the store, or, for a
// client ID metadata document URL, the document fetched now (stored only
// when a person approves it: saveClient). A client that cannot be used
// is a *clientmeta.Error with code invalid_client.
func (s *Server) client(ctx context.Context, id string) (*document, error) {
	if clientmeta.IsClientIDURL(id) {
		m, err := s.fetcher.Fetch(ctx, id)
		if err != nil {
			var e *clientmeta.Error
			if errors.As(err, &e) {
				return nil, e
			}
			return nil, &clientmeta.Error{Code: clientmeta.CodeInvalidClient, Description: "the client metadata document could not be read"}
		}
		return documentOf(id, time.Time{}, m), nil
	}
	if id == "" || len(id) > clientmeta.MaxURILength {
		return nil, &clientmeta.Error{Code: clientmeta.CodeInvalidClient, Description: "unknown client_id"}
	}
	c, err := s.store.FindOAuthClient(ctx, id)
	if errors.Is(err, wf.ErrNotFound) {
		return nil, &clientmeta.Error{Code: clientmeta.CodeInvalidClient, Description: "unknown client_id"}
	} else if err != nil {
		return nil, err
	}
	var doc document
	if err := json.Unmarshal(c.Document, &doc); err != nil {
		return nil, fmt.Errorf("client %s: stored document: %w", id, err)
	}
	return &doc, nil
}

// saveClient stores (or refreshes) the document of a client known by its
// metadata document URL, which its codes and grants name.
func (s *Server) saveClient(ctx context.Context, doc *document) error {
	if !clientmeta.IsClientIDURL(doc.ClientID) {
		return nil
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	now := s.now()
	return s.store.SaveOAuthClient(ctx, &wf.OAuthClient{ID: doc.ClientID, Name: doc.ClientName, Document: raw, CreatedAt: now, UpdatedAt: now})
}

// serverError answers 500 server_error and logs the cause.
func (s *Server) serverError(w http.ResponseWriter, r *http.Request, err error) {
	s.log.ErrorContext(r.Context(), "oauth", "err", err)
	status := http.StatusInternalServerError
	if wf.ErrorCode(err) == wf.EUnavailable {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	}
	writeOAuthError(w, status, "server_error", "the server could not complete the request")
}
