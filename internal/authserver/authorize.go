package authserver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"

	"countersign/internal/controlplane"
	"countersign/store"
)

// Pending is an authorization request that may be shown to a person: its
// client is known and its redirect URI is one of the client's, exactly.
type Pending struct {
	Client      Client
	RedirectURI string
	Challenge   string
	Resource    string
	State       string
	// Params are the request's parameters as received, for the consent
	// form to send back (the decision checks them all again).
	Params url.Values
}

// Refusal is why an authorization request is refused. Redirect, when set,
// is where the person's browser is sent (the client's verified redirect
// URI, with error, state and iss); when empty, the redirect URI could not
// be trusted and the console shows Err as a page.
type Refusal struct {
	Err      *Error
	Redirect string
}

// NeedsApproval refuses a client nobody approved while the admin's
// setting asks for an approval before first use.
const NeedsApproval = "client_needs_approval"

var challengeShape = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// CheckAuthorize checks an authorization request (its query q) for the
// resource this server issues tokens for, as issuer. A missing or unknown
// client, a revoked one, or a redirect URI not exactly one of the
// client's is refused without a redirect; so is a client that needs an
// admin's approval (Err.Code NeedsApproval). Past that, a response type
// other than code (unsupported_response_type), PKCE missing or other
// than S256 (invalid_request), or a resource other than this server's
// (invalid_target) is refused by a redirect to the client.
func (s *Service) CheckAuthorize(ctx context.Context, q url.Values, issuer, resource string) (Pending, *Refusal) {
	page := func(code, description string) (Pending, *Refusal) {
		return Pending{}, &Refusal{Err: oauthErr(http.StatusBadRequest, code, description)}
	}
	clientID := q.Get("client_id")
	if clientID == "" {
		return page("invalid_request", "The request names no client (client_id is missing).")
	}
	c, err := s.Client(ctx, clientID)
	if err != nil {
		if e := (*Error)(nil); errors.As(err, &e) {
			return page(e.Code, e.Description)
		}
		return page("server_error", "The client could not be looked up; try again.")
	}
	if c.Revoked {
		return page("unauthorized_client", "An admin of this console revoked this client; it cannot be connected.")
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" {
		return page("invalid_request", "The request names no redirect_uri.")
	}
	if !c.RedirectAllowed(redirect) {
		return page("invalid_request", "The redirect_uri is not one of the client's registered redirect URIs, exactly; "+
			"nothing was sent to it.")
	}
	back := func(code, description string) (Pending, *Refusal) {
		return Pending{}, &Refusal{Err: oauthErr(http.StatusFound, code, description),
			Redirect: Redirect(redirect, issuer, q.Get("state"), url.Values{"error": {code}, "error_description": {description}})}
	}
	switch {
	case q.Get("response_type") != "code":
		return back("unsupported_response_type", "Only response_type=code is offered.")
	case q.Get("code_challenge_method") != "S256":
		return back("invalid_request", "PKCE with code_challenge_method=S256 is required; plain and no PKCE are refused.")
	case !challengeShape.MatchString(q.Get("code_challenge")):
		return back("invalid_request", "code_challenge must be the base64url SHA-256 of the code verifier (43 characters).")
	case q.Get("resource") != resource:
		return back("invalid_target", "resource must be "+resource+", the MCP server this console authorizes.")
	}
	if !c.Approved {
		need, err := s.store.OAuthClientsNeedApproval(ctx)
		if err != nil {
			return page("server_error", "The console's settings could not be read; try again.")
		}
		if need {
			return page(NeedsApproval, "An admin of this console approves new clients before their first use; "+
				"ask an admin to approve "+c.Name+" on the Clients page (/admin/clients), then connect again.")
		}
	}
	return Pending{Client: c, RedirectURI: redirect, Challenge: q.Get("code_challenge"), Resource: resource,
		State: q.Get("state"), Params: q}, nil
}

// Redirect is the client's redirect URI with params, the client's state
// and the issuer (RFC 9207) added to its query.
func Redirect(redirectURI, issuer, state string, params url.Values) string {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return redirectURI
	}
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if state != "" {
		q.Set("state", state)
	}
	q.Set("iss", issuer)
	u.RawQuery = q.Encode()
	return u.String()
}

// Consent is a person's yes to a pending request: who (Actor, a console
// user) and what the client's tokens act as.
type Consent struct {
	Actor       controlplane.Actor
	AssistantID string
	// ActsAsUser says the assistant is the person's own: the client acts
	// as them.
	ActsAsUser bool
	// Assistant is the assistant's name, for the audit trail.
	Assistant string
}

// Approve issues the code of a consent and records the consent
// (oauth.consented) in the same transaction; it returns where the
// browser goes: the client's redirect URI with code, state and iss.
func (s *Service) Approve(ctx context.Context, p Pending, c Consent, issuer string) (string, error) {
	code, h := secret(codePrefix)
	now := s.now()
	e, err := controlplane.AuditEvent(now, c.Actor, controlplane.EventOAuthConsented, "", "", map[string]any{
		"client_id": p.Client.ID, "client": p.Client.Name, "redirect_uri": p.RedirectURI, "assistant_id": c.AssistantID,
		"assistant": c.Assistant, "acts_as_user": c.ActsAsUser, "resource": p.Resource, "new_client": p.Client.New})
	if err != nil {
		return "", err
	}
	if err := s.store.InsertOAuthCode(ctx, store.OAuthCode{Hash: h, ClientID: p.Client.ID, UserID: c.Actor.UserID,
		AssistantID: c.AssistantID, ActsAsUser: c.ActsAsUser, RedirectURI: p.RedirectURI, Challenge: p.Challenge,
		Resource: p.Resource, CreatedAt: now, ExpiresAt: now.Add(CodeLifetime)}, e); err != nil {
		return "", err
	}
	return Redirect(p.RedirectURI, issuer, p.State, url.Values{"code": {code}}), nil
}

// Deny is where the browser goes when the person says no: the client's
// redirect URI with error=access_denied.
func Deny(p Pending, issuer string) string {
	return Redirect(p.RedirectURI, issuer, p.State, url.Values{"error": {"access_denied"},
		"error_description": {"The person declined to connect this client."}})
}
