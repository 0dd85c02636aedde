package httpadapter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"countersign/internal/adapter"
	"countersign/internal/tracing"
)

// OAuth 2 for machine clients: "oauth2_client_credentials" asks the token
// endpoint for a token with the client's id and secret (scopes, audience);
// "oauth2_refresh_token" trades a refresh token for one, keeping the
// refresh token the endpoint rotates to in memory (a restart starts again
// from the environment's). A token is kept until a little before it
// expires (a quarter of its lifetime, at most a minute, so that a write
// does not leave with a token about to lapse), and dropped when the system
// answers 401 to it: a read is then sent once more with a fresh token, a
// write never (Adapter.authorizedExchange). One token request at a time.

// tokenSource is an authorizer holding the current token.
type tokenSource struct {
	system string
	fetch  func(ctx context.Context, refresh string) (*oauth2.Token, error)
	client *http.Client
	now    func() time.Time
	log    *slog.Logger
	// env names the variables the credentials come from, for the hint of
	// a refusal; redact replaces every secret in a cause's text.
	env    string
	redact *strings.Replacer
	// sem lets one request fetch a token at a time.
	sem chan struct{}
	// waiting, set by tests only, is called by a request that found no
	// token and is about to wait for sem.
	waiting func()

	mu      sync.Mutex
	tok     *heldToken
	refresh string
}

// heldToken is a token and when to fetch the next one (zero: when the
// system refuses it, the endpoint having said no lifetime).
type heldToken struct {
	access  string
	renewAt time.Time
}

// tokenCredential is a request's token.
type tokenCredential struct {
	s *tokenSource
	t *heldToken
}

func (c tokenCredential) apply(req *http.Request, _ []byte) {
	req.Header.Set("Authorization", "Bearer "+c.t.access)
}

func (c tokenCredential) refused() bool {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if c.s.tok == c.t {
		c.s.tok = nil
	}
	return true
}

func (s *tokenSource) current() *heldToken {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok != nil && (s.tok.renewAt.IsZero() || s.now().Before(s.tok.renewAt)) {
		return s.tok
	}
	return nil
}

func (s *tokenSource) credential(ctx context.Context) (credential, error) {
	if t := s.current(); t != nil {
		return tokenCredential{s, t}, nil
	}
	if s.waiting != nil {
		s.waiting()
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, s.failed(ctx.Err(), "")
	}
	defer func() { <-s.sem }()
	if t := s.current(); t != nil {
		return tokenCredential{s, t}, nil // fetched while this one waited
	}
	s.mu.Lock()
	refresh := s.refresh
	s.mu.Unlock()
	fetchedAt := s.now()
	// The token request is a span of its own, beside the call it is for.
	tok, err := s.fetch(tracing.Operation(context.WithValue(ctx, oauth2.HTTPClient, s.client), "oauth2.token"), refresh)
	if err != nil {
		return nil, s.failed(err, refresh)
	}
	t := &heldToken{access: tok.AccessToken}
	lifetime := time.Duration(tok.ExpiresIn) * time.Second
	if lifetime <= 0 && !tok.Expiry.IsZero() {
		lifetime = time.Until(tok.Expiry)
	}
	if lifetime > 0 {
		t.renewAt = fetchedAt.Add(lifetime - min(time.Minute, lifetime/4))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok.RefreshToken != "" && tok.RefreshToken != refresh {
		s.refresh = tok.RefreshToken
	}
	s.tok = t
	s.log.InfoContext(ctx, "httpadapter: fetched an access token", "system", s.system, "lifetime", lifetime)
	return tokenCredential{s, t}, nil
}

// failed maps a token request that gave no token: nothing was sent to the
// system. The endpoint's refusal (4xx) will not change by itself; anything
// else may. refresh, the token the request traded, may be one the endpoint
// rotated to, which the file's redaction never saw, so it is replaced too.
func (s *tokenSource) failed(err error, refresh string) *adapter.Error {
	redact := func(text string) string {
		text = s.redact.Replace(text)
		if refresh != "" {
			text = strings.ReplaceAll(text, refresh, "[redacted]")
		}
		return text
	}
	cause := &tokenError{text: redact(err.Error())}
	ae := &adapter.Error{Code: "system_authentication_failed", Outcome: adapter.NotSent, Retryable: true, Err: cause,
		Message: s.system + " gave no access token; nothing was sent.",
		Hint:    "Try again in a moment; if it keeps failing, hand the conversation to a person."}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 {
		cause.text = redact(fmt.Sprintf("the token endpoint answered %d %s %s", re.Response.StatusCode, re.ErrorCode, re.ErrorDescription))
		ae.Retryable = false
		ae.Hint = "Hand this call to a person: the credentials in " + s.env + " were refused."
	}
	return ae
}

// tokenError is why no token came, with every secret replaced.
type tokenError struct{ text string }

func (e *tokenError) Error() string { return "httpadapter: no access token: " + e.text }

// oauth reads an OAuth 2 authentication and its secrets.
func (c *compiler) oauth(au Auth, cfg Config, name, base string) authorizer {
	getenv := cfg.Getenv
	tokenURL := au.TokenURL
	switch {
	case au.TokenURL != "" && au.TokenURLEnv != "":
		c.fail("/auth/token_url", "the file gives both token_url and token_url_env", "keep one")
	case au.TokenURL == "" && au.TokenURLEnv == "":
		c.fail("/auth", "OAuth 2 needs the token endpoint", `add "token_url" (e.g. "https://auth.example.com/oauth/token", or "/oauth/token" under the base URL) or "token_url_env"`)
	case au.TokenURLEnv != "":
		tokenURL = c.envValue(getenv, "/auth/token_url_env", au.TokenURLEnv, "the token endpoint's URL")
		if tokenURL != "" && !strings.HasPrefix(tokenURL, "http://") && !strings.HasPrefix(tokenURL, "https://") {
			c.fail("/auth/token_url_env", fmt.Sprintf("the environment variable %s is not an http:// or https:// URL", au.TokenURLEnv), "")
		}
	}
	if strings.HasPrefix(tokenURL, "/") {
		tokenURL = base + tokenURL
	}
	if au.ClientSecretEnv != "" && au.ClientIDEnv == "" {
		c.fail("/auth/client_secret_env", "a client secret without a client id", `add "client_id_env"`)
	}
	id := c.envValue(getenv, "/auth/client_id_env", au.ClientIDEnv, "the OAuth 2 client id")
	secret := c.envValue(getenv, "/auth/client_secret_env", au.ClientSecretEnv, "the OAuth 2 client secret")
	refresh := c.envValue(getenv, "/auth/refresh_token_env", au.RefreshTokenEnv, "the refresh token to start from")
	style := map[string]oauth2.AuthStyle{"basic": oauth2.AuthStyleInHeader, "body": oauth2.AuthStyleInParams}[au.ClientAuth]
	var env []string
	for _, v := range []string{au.ClientIDEnv, au.ClientSecretEnv, au.RefreshTokenEnv} {
		if v != "" {
			env = append(env, v)
		}
	}
	var pairs []string
	for _, v := range []string{secret, refresh} {
		if v != "" {
			pairs = append(pairs, v, "[redacted]")
		}
	}
	s := &tokenSource{system: name, client: cfg.HTTPClient, now: cfg.Now, log: cfg.Logger, env: strings.Join(env, ", "),
		redact: strings.NewReplacer(pairs...), sem: make(chan struct{}, 1), refresh: refresh}
	if au.Type == "oauth2_client_credentials" {
		cc := &clientcredentials.Config{ClientID: id, ClientSecret: secret, TokenURL: tokenURL, Scopes: au.Scopes, AuthStyle: style}
		if au.Audience != "" {
			cc.EndpointParams = url.Values{"audience": {au.Audience}}
		}
		s.fetch = func(ctx context.Context, _ string) (*oauth2.Token, error) { return cc.Token(ctx) }
		return s
	}
	oc := &oauth2.Config{ClientID: id, ClientSecret: secret, Endpoint: oauth2.Endpoint{TokenURL: tokenURL, AuthStyle: style}}
	s.fetch = func(ctx context.Context, refresh string) (*oauth2.Token, error) {
		return oc.TokenSource(ctx, &oauth2.Token{RefreshToken: refresh}).Token()
	}
	return s
}
