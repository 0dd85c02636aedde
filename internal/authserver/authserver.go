// Package authserver is the console as the OAuth 2.1 authorization server
// of its own MCP resource (/mcp): the clients that ask for tokens
// (registered by RFC 7591 dynamic registration, or known by their Client
// ID Metadata Document), the authorization codes a person's consent
// issues (single use, short-lived, PKCE S256 only, bound to an exactly
// matching redirect URI and to the resource, RFC 8707), the access tokens
// (short-lived, their audience the resource, checked on every call), the
// rotating refresh tokens (a reused one revokes its whole grant), and
// revocation (RFC 7009). Secrets are opaque random strings kept only as
// SHA-256 in PostgreSQL. What a token acts as is an assistant: one an
// admin configured, or the consenting person's own (see
// assistants.Service.OwnAssistant).
package authserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"countersign/internal/safehttp"
	"countersign/store"
)

// The lifetimes of what the server issues.
const (
	// CodeLifetime bounds the time between consent and the code's
	// exchange.
	CodeLifetime = 2 * time.Minute
	// AccessLifetime is an access token's life; a client refreshes after.
	AccessLifetime = 15 * time.Minute
	// RefreshLifetime is a refresh token's life; each refresh issues a new
	// one and spends the old.
	RefreshLifetime = 30 * 24 * time.Hour
	// GrantLifetime bounds a consent: no refresh outlives it; the person
	// consents again after.
	GrantLifetime = 90 * 24 * time.Hour
	// DocumentFreshFor is how long a fetched Client ID Metadata Document
	// is used before it is fetched again.
	DocumentFreshFor = time.Hour
)

// The prefixes of the secrets, so a leaked one is recognisable.
const (
	AccessPrefix  = "cso_at_"
	RefreshPrefix = "cso_rt_"
	codePrefix    = "cso_ac_"
)

// Store is what the authorization server reads and writes (*store.Store).
type Store interface {
	InsertOAuthClient(ctx context.Context, c store.OAuthClient) (store.OAuthClient, error)
	SaveOAuthClientDocument(ctx context.Context, c store.OAuthClient) (store.OAuthClient, error)
	OAuthClient(ctx context.Context, id string) (store.OAuthClient, error)
	OAuthClients(ctx context.Context) ([]store.OAuthClient, error)
	ApproveOAuthClient(ctx context.Context, id string, by int64, at time.Time, e store.Event) error
	RevokeOAuthClient(ctx context.Context, id string, by int64, at time.Time, e store.Event) error
	OAuthClientsNeedApproval(ctx context.Context) (bool, error)
	SetOAuthClientsNeedApproval(ctx context.Context, need bool, by int64, at time.Time, e store.Event) error

	InsertOAuthCode(ctx context.Context, c store.OAuthCode, e store.Event) error
	ExchangeOAuthCode(ctx context.Context, hash []byte, at time.Time, check func(store.OAuthCode) error,
		grantOf func(store.OAuthCode) (store.OAuthGrant, []store.OAuthToken)) (store.OAuthGrant, error)
	RotateOAuthRefresh(ctx context.Context, hash []byte, at time.Time, check func(store.OAuthGrant) error,
		next func(store.OAuthGrant) []store.OAuthToken) (store.OAuthGrant, error)
	OAuthAccessByHash(ctx context.Context, hash []byte, at time.Time) (store.OAuthAccess, error)
	RevokeOAuthToken(ctx context.Context, hash []byte, clientID string, at time.Time, e func(store.OAuthGrant) store.Event) (string, error)
	RevokeOAuthGrant(ctx context.Context, id, why string, at time.Time, e store.Event) error
	OAuthGrant(ctx context.Context, id string) (store.OAuthGrant, error)
	OAuthGrants(ctx context.Context) ([]store.OAuthGrantRow, error)
}

// Config is what the server needs besides its store.
type Config struct {
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Fetch is how Client ID Metadata Documents are fetched: the zero
	// value in production (safehttp: public https addresses only, 5
	// seconds); tests set its Test allowance.
	Fetch safehttp.Options
}

// Service is the authorization server.
type Service struct {
	store Store
	now   func() time.Time
	fetch *http.Client
}

// New returns the authorization server over st.
func New(st Store, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Fetch.Timeout == 0 {
		cfg.Fetch.Timeout = 5 * time.Second
	}
	return &Service{store: st, now: cfg.Now, fetch: safehttp.NewClient(cfg.Fetch)}
}

// Error is a refusal in the words of the OAuth specifications: the error
// code ("invalid_request", "invalid_grant", …), a sentence for the
// developer, and the HTTP status of a JSON answer.
type Error struct {
	Code        string `json:"error"`
	Description string `json:"error_description"`
	Status      int    `json:"-"`
}

func (e *Error) Error() string { return "authserver: " + e.Code + ": " + e.Description }

func oauthErr(status int, code, description string) *Error {
	return &Error{Code: code, Description: description, Status: status}
}

// secret returns a new random secret with prefix and its SHA-256.
func secret(prefix string) (string, []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	s := prefix + base64.RawURLEncoding.EncodeToString(b)
	return s, hash(s)
}

func hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func newID(prefix string) string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return prefix + "_" + base64.RawURLEncoding.EncodeToString(b)
}

// Issuer is the console's address as the authorization server names
// itself: the configured public address (-public-url), or, when none is
// configured (development, tests), the address the request reached.
func Issuer(publicBase string, r *http.Request) string {
	if publicBase != "" {
		return strings.TrimSuffix(publicBase, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// Resource is the MCP server's address under issuer: the one resource
// (RFC 8707) this server issues tokens for, and their audience.
func Resource(issuer string) string { return issuer + "/mcp" }

// ResourceMetadataURL is where the MCP server's protected-resource
// metadata (RFC 9728) is, under issuer: the well-known path with the
// resource's path appended.
func ResourceMetadataURL(issuer string) string {
	return issuer + "/.well-known/oauth-protected-resource/mcp"
}
