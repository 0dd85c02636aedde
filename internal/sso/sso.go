// Package sso signs staff in through the business's OpenID Connect
// provider: the authorization code flow with PKCE, a state and a nonce kept
// server-side and used once, the ID token verified (signature, issuer,
// audience, expiry, nonce), the person's groups mapped to a console role,
// and the console account created or updated from them at every sign-in.
// docs/staff-identity.md describes the model.
package sso

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"countersign/internal/accounts"
	"countersign/store"
)

// signInLifetime is how long a person has between leaving for the provider
// and coming back; a state older than this is refused.
const signInLifetime = 10 * time.Minute

// Store is what sign-in reads and writes (*store.Store).
type Store interface {
	BeginSSOSignIn(ctx context.Context, in store.SSOSignIn) error
	TakeSSOSignIn(ctx context.Context, stateHash []byte) (store.SSOSignIn, error)
	SignInStaffIdentity(ctx context.Context, in store.StaffSignIn) (store.User, bool, error)
	EndStaffIdentitySessions(ctx context.Context, issuer, subject string, at time.Time) error
	StaffIssuers(ctx context.Context) (map[int64]string, error)
	StaffIssuerOf(ctx context.Context, userID int64) (string, error)
}

// Provider is the console's client of one OpenID provider.
type Provider struct {
	cfg      Config
	oauth    oauth2.Config
	verifier *oidc.IDTokenVerifier
	store    Store
	now      func() time.Time
	client   *http.Client
}

// New reads the provider's discovery document and checks cfg. Its errors
// name the flag at fault and the fix, so the console can stop at start
// with them. client is the HTTP client for the provider (nil: one with a
// 15-second timeout).
func New(ctx context.Context, cfg Config, st Store, client *http.Client, now func() time.Time) (*Provider, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = "groups"
	}
	if client == nil {
		// A provider that hangs must not hold a sign-in (or the start) for
		// ever: every call to it, discovery, keys and the code exchange,
		// has this long.
		client = &http.Client{Timeout: 15 * time.Second}
	}
	if now == nil {
		now = time.Now
	}
	discovery, cancel := context.WithTimeout(oidc.ClientContext(ctx, client), 15*time.Second)
	defer cancel()
	op, err := oidc.NewProvider(discovery, strings.TrimSuffix(cfg.Issuer, "/"))
	if err != nil {
		return nil, fmt.Errorf("-oidc-issuer %q: discovery failed (%w); check the URL is the provider's issuer and the console can reach it", cfg.Issuer, err)
	}
	if cfg.Name == "" {
		u, _ := url.Parse(cfg.Issuer)
		cfg.Name = u.Host
	}
	scopes := []string{oidc.ScopeOpenID}
	for _, s := range cfg.Scopes {
		if s != "" && !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	return &Provider{
		cfg: cfg,
		oauth: oauth2.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: cfg.RedirectURL,
			Endpoint: op.Endpoint(), Scopes: scopes},
		verifier: op.Verifier(&oidc.Config{ClientID: cfg.ClientID, Now: now}),
		store:    st,
		now:      now,
		client:   client,
	}, nil
}

// Name is what the sign-in page calls the provider.
func (p *Provider) Name() string { return p.cfg.Name }

// Issuer is the provider's issuer URL, as the audit trail names it.
func (p *Provider) Issuer() string { return strings.TrimSuffix(p.cfg.Issuer, "/") }

// Begin starts a sign-in: it stores a fresh state, nonce and PKCE verifier
// and returns the provider's URL to send the browser to. browser is a
// secret only this browser holds (a cookie); the callback must bring it.
// next is the path to go to after signing in.
func (p *Provider) Begin(ctx context.Context, browser, next string) (string, error) {
	return p.begin(ctx, hash(browser), next)
}

// begin stores a sign-in bound to browserHash and returns the provider's
// URL for it, with extra parameters (a confirmation's prompt and max_age).
func (p *Provider) begin(ctx context.Context, browserHash []byte, next string, extra ...oauth2.AuthCodeOption) (string, error) {
	state, nonce, verifier := randomToken(), randomToken(), oauth2.GenerateVerifier()
	now := p.now()
	err := p.store.BeginSSOSignIn(ctx, store.SSOSignIn{StateHash: hash(state), BrowserHash: browserHash, Nonce: nonce,
		CodeVerifier: verifier, NextPath: next, CreatedAt: now, ExpiresAt: now.Add(signInLifetime)})
	if err != nil {
		return "", err
	}
	opts := append([]oauth2.AuthCodeOption{oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)}, extra...)
	return p.oauth.AuthCodeURL(state, opts...), nil
}

// SignedIn is a finished sign-in: the account, where to go, and when the
// ID token expires (the session's sign-in is good until then).
type SignedIn struct {
	User    accounts.User
	Created bool
	Next    string
	Expiry  time.Time
	Subject string
	// AuthAt is when the person authenticated at the provider: the ID
	// token's auth_time, or the zero time (never fresh) if it has none.
	AuthAt time.Time
	// Confirmed is true when the sign-in was a confirmation (BeginConfirm)
	// of the person signed in already: the session stays theirs.
	Confirmed bool
}

// Finish completes a sign-in from the callback's state and code: the state
// must be one Begin or BeginConfirm made for this browser, unused and
// unexpired; the code is exchanged with the PKCE verifier; the ID token
// must verify and carry the nonce; the person's groups must map to a role.
// signedIn is the provider's person the browser's session names already
// (zero when none): a confirmation must come from that person, within
// FreshFor (checkConfirm). Every refusal is an apperr.Error whose code says
// which check failed.
func (p *Provider) Finish(ctx context.Context, browser, state, code string, signedIn Person) (SignedIn, error) {
	if state == "" || code == "" {
		return SignedIn{}, refuse(codeStateUnknown, nil)
	}
	begun, err := p.store.TakeSSOSignIn(ctx, hash(state))
	var nf *store.NotFoundError
	if errors.As(err, &nf) {
		return SignedIn{}, refuse(codeStateUnknown, nil)
	}
	if err != nil {
		return SignedIn{}, err
	}
	var confirm bool
	switch string(begun.BrowserHash) {
	case string(hash(browser)):
	case string(confirmHash(browser)):
		confirm = true
	default:
		return SignedIn{}, refuse(codeOtherBrowser, nil)
	}
	if !p.now().Before(begun.ExpiresAt) {
		return SignedIn{}, refuse(codeStateExpired, nil)
	}
	tok, err := p.oauth.Exchange(oidc.ClientContext(ctx, p.client), code, oauth2.VerifierOption(begun.CodeVerifier))
	if err != nil {
		return SignedIn{}, refuse(codeCodeRefused, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return SignedIn{}, refuse(codeTokenInvalid, errors.New("no id_token in the token response"))
	}
	idToken, err := p.verifier.Verify(oidc.ClientContext(ctx, p.client), raw)
	if err != nil {
		return SignedIn{}, refuse(codeTokenInvalid, err)
	}
	if idToken.Nonce != begun.Nonce {
		return SignedIn{}, refuse(codeNonce, nil)
	}
	authAt, err := p.authTime(idToken, confirm)
	if err != nil {
		return SignedIn{}, err
	}
	if confirm {
		// Before the account: another person's confirmation must not
		// create or change an account, only be refused.
		if err := checkConfirm(idToken, authAt, signedIn, p.now()); err != nil {
			return SignedIn{}, err
		}
	}
	signed, err := p.account(ctx, idToken, begun.NextPath)
	signed.AuthAt, signed.Confirmed = authAt, confirm
	return signed, err
}

// account maps the verified ID token's groups to a role and signs the
// person in to their account, creating it on the first sign-in.
func (p *Provider) account(ctx context.Context, idToken *oidc.IDToken, next string) (SignedIn, error) {
	var claims map[string]any
	if err := idToken.Claims(&claims); err != nil {
		return SignedIn{}, refuse(codeTokenInvalid, err)
	}
	issuer, now := idToken.Issuer, p.now()
	groups := stringsOf(claims[p.cfg.GroupsClaim])
	role, ok := p.cfg.roleOf(groups)
	if !ok {
		// The provider no longer lets this person into the console: end
		// any session they still have, not only this sign-in.
		if err := p.store.EndStaffIdentitySessions(ctx, issuer, idToken.Subject, now); err != nil {
			return SignedIn{}, err
		}
		return SignedIn{}, refuse(codeNoGroup, nil)
	}
	email, _ := claims["email"].(string)
	email = strings.ToLower(strings.TrimSpace(email))
	if !strings.Contains(email, "@") {
		return SignedIn{}, refuse(codeNoEmail, nil)
	}
	name, _ := claims["name"].(string)
	if name = strings.TrimSpace(name); name == "" {
		given, _ := claims["given_name"].(string)
		family, _ := claims["family_name"].(string)
		if name = strings.TrimSpace(given + " " + family); name == "" {
			name = email
		}
	}
	// A new account gets a password nobody knows: it signs in through the
	// provider only, and password sign-in answers it like a wrong password.
	row, created, err := p.store.SignInStaffIdentity(ctx, store.StaffSignIn{Issuer: issuer, Subject: idToken.Subject,
		Email: email, Name: name, Role: string(role), Groups: groups, PasswordHash: accounts.UnusablePasswordHash(), At: now})
	if errors.Is(err, store.ErrConflict) {
		return SignedIn{}, refuse(codeEmailTaken, nil)
	}
	if err != nil {
		return SignedIn{}, err
	}
	if row.DisabledAt != nil {
		return SignedIn{}, refuse(codeDisabled, nil)
	}
	u := accounts.User{ID: row.ID, Email: row.Email, Name: row.Name, Role: accounts.Role(row.Role), CreatedAt: row.CreatedAt}
	return SignedIn{User: u, Created: created, Next: next, Expiry: idToken.Expiry, Subject: idToken.Subject}, nil
}

// stringsOf reads a groups claim: a list of strings, or one string.
func stringsOf(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return []string{}
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hash(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}
