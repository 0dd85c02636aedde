package authserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"countersign/internal/controlplane"
	"countersign/store"
)

// TokenResponse is the token endpoint's answer (OAuth 2.1 §3.2.3).
type TokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
}

var verifierShape = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// Token answers the token endpoint's form for resource: an authorization
// code (with its PKCE verifier, exact redirect URI and client) or a
// refresh token exchanged for a new access token and a new refresh token.
// Refusals are *Error: invalid_request (a parameter missing),
// unsupported_grant_type, invalid_client (unknown or revoked client),
// invalid_target (another resource), invalid_grant (a code or refresh
// token unknown, expired, another client's, spent before — which revokes
// what was issued with it —, or a verifier that does not match).
func (s *Service) Token(ctx context.Context, form url.Values, resource string) (TokenResponse, error) {
	if r := form.Get("resource"); r != "" && r != resource {
		return TokenResponse{}, oauthErr(http.StatusBadRequest, "invalid_target", "resource must be "+resource+".")
	}
	clientID := form.Get("client_id")
	if clientID == "" {
		return TokenResponse{}, oauthErr(http.StatusUnauthorized, "invalid_client", "client_id is missing.")
	}
	c, err := s.Client(ctx, clientID)
	if err != nil {
		return TokenResponse{}, err
	}
	if c.Revoked {
		return TokenResponse{}, oauthErr(http.StatusUnauthorized, "invalid_client", "An admin revoked this client.")
	}
	switch form.Get("grant_type") {
	case "authorization_code":
		return s.exchangeCode(ctx, form, c, resource)
	case "refresh_token":
		return s.refresh(ctx, form, c)
	case "":
		return TokenResponse{}, oauthErr(http.StatusBadRequest, "invalid_request", "grant_type is missing.")
	}
	return TokenResponse{}, oauthErr(http.StatusBadRequest, "unsupported_grant_type",
		"Only authorization_code and refresh_token are offered.")
}

func (s *Service) exchangeCode(ctx context.Context, form url.Values, c Client, resource string) (TokenResponse, error) {
	code, verifier, redirect := form.Get("code"), form.Get("code_verifier"), form.Get("redirect_uri")
	switch {
	case code == "":
		return TokenResponse{}, oauthErr(http.StatusBadRequest, "invalid_request", "code is missing.")
	case verifier == "":
		return TokenResponse{}, oauthErr(http.StatusBadRequest, "invalid_request", "code_verifier is missing: PKCE is required.")
	case !verifierShape.MatchString(verifier):
		return TokenResponse{}, oauthErr(http.StatusBadRequest, "invalid_request", "code_verifier must be 43 to 128 unreserved characters.")
	case redirect == "":
		return TokenResponse{}, oauthErr(http.StatusBadRequest, "invalid_request", "redirect_uri is missing.")
	}
	now := s.now()
	var out TokenResponse
	check := func(k store.OAuthCode) error {
		sum := sha256.Sum256([]byte(verifier))
		switch {
		case k.ClientID != c.ID:
			return oauthErr(http.StatusBadRequest, "invalid_grant", "The code was issued to another client.")
		case k.RedirectURI != redirect:
			return oauthErr(http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's.")
		case !now.Before(k.ExpiresAt):
			return oauthErr(http.StatusBadRequest, "invalid_grant", "The code expired; authorize again.")
		case k.Resource != resource:
			return oauthErr(http.StatusBadRequest, "invalid_target", "The code was issued for another resource.")
		case subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(k.Challenge)) != 1:
			return oauthErr(http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge.")
		}
		return nil
	}
	grantOf := func(k store.OAuthCode) (store.OAuthGrant, []store.OAuthToken) {
		g := store.OAuthGrant{ID: newID("ogr"), ClientID: k.ClientID, UserID: k.UserID, AssistantID: k.AssistantID,
			ActsAsUser: k.ActsAsUser, Resource: k.Resource, CreatedAt: now, ExpiresAt: now.Add(GrantLifetime)}
		var tokens []store.OAuthToken
		out, tokens = s.pair(g, now)
		return g, tokens
	}
	_, err := s.store.ExchangeOAuthCode(ctx, hash(code), now, check, grantOf)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return TokenResponse{}, oauthErr(http.StatusBadRequest, "invalid_grant", "The code is unknown.")
	case errors.Is(err, store.ErrReused):
		return TokenResponse{}, oauthErr(http.StatusBadRequest, "invalid_grant",
			"The code was used already; the tokens issued with it are revoked.")
	case err != nil:
		return TokenResponse{}, err
	}
	return out, nil
}

func (s *Service) refresh(ctx context.Context, form url.Values, c Client) (TokenResponse, error) {
	rt := form.Get("refresh_token")
	if rt == "" {
		return TokenResponse{}, oauthErr(http.StatusBadRequest, "invalid_request", "refresh_token is missing.")
	}
	now := s.now()
	var out TokenResponse
	check := func(g store.OAuthGrant) error {
		if g.ClientID != c.ID {
			return oauthErr(http.StatusBadRequest, "invalid_grant", "The refresh token was issued to another client.")
		}
		return nil
	}
	next := func(g store.OAuthGrant) []store.OAuthToken {
		var tokens []store.OAuthToken
		out, tokens = s.pair(g, now)
		return tokens
	}
	_, err := s.store.RotateOAuthRefresh(ctx, hash(rt), now, check, next)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return TokenResponse{}, oauthErr(http.StatusBadRequest, "invalid_grant", "The refresh token is unknown, expired or revoked.")
	case errors.Is(err, store.ErrReused):
		return TokenResponse{}, oauthErr(http.StatusBadRequest, "invalid_grant",
			"The refresh token was used already; every token of this grant is revoked. Authorize again.")
	case err != nil:
		return TokenResponse{}, err
	}
	return out, nil
}

// pair makes a new access token and refresh token of grant g at now;
// neither outlives the grant.
func (s *Service) pair(g store.OAuthGrant, now time.Time) (TokenResponse, []store.OAuthToken) {
	at, ah := secret(AccessPrefix)
	rt, rh := secret(RefreshPrefix)
	aExp, rExp := now.Add(AccessLifetime), now.Add(RefreshLifetime)
	if g.ExpiresAt.Before(aExp) {
		aExp = g.ExpiresAt
	}
	if g.ExpiresAt.Before(rExp) {
		rExp = g.ExpiresAt
	}
	return TokenResponse{AccessToken: at, TokenType: "Bearer", ExpiresIn: int(aExp.Sub(now).Seconds()), RefreshToken: rt},
		[]store.OAuthToken{
			{Hash: ah, GrantID: g.ID, Kind: "access", CreatedAt: now, ExpiresAt: aExp},
			{Hash: rh, GrantID: g.ID, Kind: "refresh", CreatedAt: now, ExpiresAt: rExp},
		}
}

// Revoke answers the revocation endpoint (RFC 7009): a refresh token
// revokes its whole grant, an access token itself, when the token is the
// client's; an unknown token, or another client's, changes nothing and is
// not an error (the client learns nothing). The client's revocation is
// recorded (oauth.token_revoked). A missing token or client_id is
// invalid_request.
func (s *Service) Revoke(ctx context.Context, form url.Values) error {
	token, clientID := form.Get("token"), form.Get("client_id")
	switch {
	case token == "":
		return oauthErr(http.StatusBadRequest, "invalid_request", "token is missing.")
	case clientID == "":
		return oauthErr(http.StatusUnauthorized, "invalid_client", "client_id is missing.")
	}
	now := s.now()
	kind := "access"
	if strings.HasPrefix(token, RefreshPrefix) {
		kind = "refresh"
	}
	var evErr error
	_, err := s.store.RevokeOAuthToken(ctx, hash(token), clientID, now, func(g store.OAuthGrant) store.Event {
		e, err := controlplane.AuditEvent(now, controlplane.AssistantActor(g.AssistantID, ""), controlplane.EventOAuthRevoked, "", "",
			map[string]any{"grant_id": g.ID, "client_id": clientID, "token": kind, "by": "client"})
		evErr = err
		return e
	})
	if err == nil {
		err = evErr
	}
	return err
}

// Access is what a live access token acts as.
type Access struct {
	GrantID     string
	ClientID    string
	AssistantID string
	// UserID and UserName are the person who consented; ActsAsUser says
	// the token acts as that person's own assistant.
	UserID     int64
	UserName   string
	ActsAsUser bool
	ExpiresAt  time.Time
}

// Verify returns what the access token acts as when it is live and was
// issued for resource. Every refusal is the same invalid_token error
// (401) whatever the reason — unknown, expired, revoked, its client
// revoked, its person disabled, its assistant someone else's own —
// except a token of another resource,
// which says so.
func (s *Service) Verify(ctx context.Context, token, resource string) (Access, error) {
	denied := oauthErr(http.StatusUnauthorized, "invalid_token", "The access token is unknown, expired or revoked.")
	if !strings.HasPrefix(token, AccessPrefix) || len(token) > 200 {
		return Access{}, denied
	}
	a, err := s.store.OAuthAccessByHash(ctx, hash(token), s.now())
	if errors.Is(err, store.ErrNotFound) {
		return Access{}, denied
	}
	if err != nil {
		return Access{}, err
	}
	// A grant acts as the consenting person's own assistant exactly when
	// it says so; never as someone else's, which would act without the
	// person it is accountable to.
	if a.ClientRevoked || a.UserDisabled || a.Grant.ActsAsUser != (a.OwnerUserID == a.Grant.UserID) ||
		(a.OwnerUserID != 0 && a.OwnerUserID != a.Grant.UserID) {
		return Access{}, denied
	}
	if a.Grant.Resource != resource {
		return Access{}, oauthErr(http.StatusUnauthorized, "invalid_token", "The access token was issued for another resource.")
	}
	g := a.Grant
	return Access{GrantID: g.ID, ClientID: g.ClientID, AssistantID: g.AssistantID, UserID: g.UserID, UserName: a.UserName,
		ActsAsUser: g.ActsAsUser, ExpiresAt: a.ExpiresAt}, nil
}
