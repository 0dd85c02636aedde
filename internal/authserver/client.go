package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"countersign/internal/invisible"
	"countersign/store"
)

// Client is a program that asks people for tokens.
type Client struct {
	// ID is the client_id: "ocl_…" for a registered client, the metadata
	// document's https URL for the others.
	ID   string
	Name string
	// Document says the client is known by its metadata document.
	Document     bool
	RedirectURIs []string
	CreatedAt    time.Time
	Approved     bool
	Revoked      bool
	// New says nobody here consented to it yet.
	New bool
}

// Registration is a dynamic client registration request (RFC 7591 §2),
// the fields this server reads; others are ignored.
type Registration struct {
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
}

// Registered is the answer to a registration (RFC 7591 §3.2.1).
type Registered struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

// maxRedirectURIs bounds a client's redirect URIs.
const maxRedirectURIs = 10

// Register registers a public client. Its redirect URIs must each be
// https, http on a loopback address (a native app) or a private-use
// scheme with a dot (com.example.app:/cb), without a fragment: otherwise
// invalid_redirect_uri. Any token endpoint authentication but "none", a
// grant type other than authorization_code and refresh_token or a
// response type other than code is invalid_client_metadata.
func (s *Service) Register(ctx context.Context, r Registration) (Registered, error) {
	if err := checkRedirectURIs(r.RedirectURIs); err != nil {
		return Registered{}, err
	}
	if m := r.TokenEndpointAuthMethod; m != "" && m != "none" {
		return Registered{}, oauthErr(http.StatusBadRequest, "invalid_client_metadata",
			"token_endpoint_auth_method must be \"none\": this server registers public clients only, which prove themselves with PKCE.")
	}
	for _, g := range r.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return Registered{}, oauthErr(http.StatusBadRequest, "invalid_client_metadata",
				fmt.Sprintf("grant type %q is not offered; use authorization_code and refresh_token.", g))
		}
	}
	for _, t := range r.ResponseTypes {
		if t != "code" {
			return Registered{}, oauthErr(http.StatusBadRequest, "invalid_client_metadata",
				fmt.Sprintf("response type %q is not offered; use code.", t))
		}
	}
	name, err := clientName(r.ClientName, r.RedirectURIs[0])
	if err != nil {
		return Registered{}, err
	}
	doc, err := json.Marshal(r)
	if err != nil {
		return Registered{}, err
	}
	now := s.now()
	row, err := s.store.InsertOAuthClient(ctx, store.OAuthClient{ID: newID("ocl"), Kind: "registered", Name: name,
		RedirectURIs: r.RedirectURIs, Document: doc, CreatedAt: now})
	if err != nil {
		return Registered{}, err
	}
	return Registered{ClientID: row.ID, ClientIDIssuedAt: now.Unix(), ClientName: row.Name, RedirectURIs: row.RedirectURIs,
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: "none"}, nil
}

// Client returns the client of clientID: a registered one, or one known
// by its metadata document, fetched when it was never fetched or its copy
// is older than DocumentFreshFor. An unknown client, or a document that
// cannot be fetched or is not valid, is invalid_client (a sentence says
// why).
func (s *Service) Client(ctx context.Context, clientID string) (Client, error) {
	if IsDocumentID(clientID) {
		return s.documentClient(ctx, clientID)
	}
	row, err := s.store.OAuthClient(ctx, clientID)
	if errors.Is(err, store.ErrNotFound) {
		return Client{}, oauthErr(http.StatusUnauthorized, "invalid_client", "No client is registered with this client_id.")
	}
	if err != nil {
		return Client{}, err
	}
	return clientFromRow(row), nil
}

// IsDocumentID reports whether a client_id names a Client ID Metadata
// Document (an https URL) rather than a registered client.
func IsDocumentID(clientID string) bool { return strings.HasPrefix(clientID, "https://") }

func clientFromRow(r store.OAuthClient) Client {
	return Client{ID: r.ID, Name: r.Name, Document: r.Kind == "document", RedirectURIs: r.RedirectURIs, CreatedAt: r.CreatedAt,
		Approved: r.ApprovedAt != nil, Revoked: r.RevokedAt != nil, New: r.Consents == 0}
}

// checkRedirectURIs refuses a missing or unsafe redirect URI.
func checkRedirectURIs(uris []string) error {
	if why := redirectProblem(uris); why != "" {
		return oauthErr(http.StatusBadRequest, "invalid_redirect_uri", why)
	}
	return nil
}

// redirectProblem says what is wrong with a client's redirect URIs, or "".
func redirectProblem(uris []string) string {
	if len(uris) == 0 || len(uris) > maxRedirectURIs {
		return fmt.Sprintf("redirect_uris must list from 1 to %d redirect URIs.", maxRedirectURIs)
	}
	for _, raw := range uris {
		if why := unsafeRedirect(raw); why != "" {
			return fmt.Sprintf("redirect URI %q %s", raw, why)
		}
	}
	return ""
}

// unsafeRedirect says why a redirect URI is refused, or "".
func unsafeRedirect(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || len(raw) > 2000:
		return "is not a URL."
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "has a fragment; a redirect URI may not."
	case u.User != nil:
		return "has a user name or password in it."
	case u.Scheme == "https":
		if u.Host == "" {
			return "has no host."
		}
		return ""
	case u.Scheme == "http":
		if !loopback(u.Hostname()) {
			return "uses http on a host other than localhost, 127.0.0.1 or [::1]; use https."
		}
		return ""
	case strings.Contains(u.Scheme, "."):
		return "" // a native app's private-use scheme (RFC 8252 §7.1)
	}
	return "must be https, http on a loopback address, or a private-use scheme such as com.example.app:/callback."
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// clientName is the name a client gave itself, or its redirect host when
// it gave none; a name longer than 100 characters, or with a character a
// person cannot see or that turns the reading direction (the consent page
// shows the name), is invalid_client_metadata.
func clientName(name, fallback string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		if u, err := url.Parse(fallback); err == nil && u.Host != "" {
			return u.Host, nil
		}
		return "Unnamed client", nil
	}
	if len([]rune(name)) > 100 {
		return "", oauthErr(http.StatusBadRequest, "invalid_client_metadata", "client_name must be at most 100 characters of text.")
	}
	if f, hidden := invisible.Find(name, false); hidden {
		return "", oauthErr(http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf(
			"client_name carries %s (%s) at character %d, which a person cannot see on the consent page; remove it.",
			f.Code(), f.Name(), f.Position))
	}
	return name, nil
}

// RedirectAllowed reports whether uri is exactly one of the client's
// redirect URIs (no prefix, case or port leniency).
func (c Client) RedirectAllowed(uri string) bool { return slices.Contains(c.RedirectURIs, uri) }
