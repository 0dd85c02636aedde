package api_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/web/webtest"
)

const testRedirect = "http://127.0.0.1:7777/callback"

// exchange posts a code's exchange.
func exchange(t *testing.T, b *webtest.Stack, clientID, code, redirect, verifier string) webtest.APIResponse {
	t.Helper()
	return b.OAuthPost(t, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {redirect}, "client_id": {clientID}, "code_verifier": {verifier}})
}

// TestACodeIsSpentOnce: a code exchanged twice is refused the second
// time, and the tokens its first exchange issued stop working.
func TestACodeIsSpentOnce(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	id := b.RegisterOAuthClient(t, "Twice", testRedirect)
	verifier, challenge := webtest.PKCE()
	code := c.Consent(b.AuthorizeQuery(id, testRedirect, challenge), "self", "allow").Query().Get("code")
	first := exchange(t, b, id, code, testRedirect, verifier).Want(t, http.StatusOK)
	access := first.JSON["access_token"].(string)
	if s := mcpStatus(t, b, b.Server.URL, access); s != http.StatusOK {
		t.Fatalf("first token on /mcp: %d", s)
	}
	second := exchange(t, b, id, code, testRedirect, verifier)
	if second.Status != http.StatusBadRequest || second.JSON["error"] != "invalid_grant" {
		t.Fatalf("second exchange: %d %s", second.Status, second.Body)
	}
	if s := mcpStatus(t, b, b.Server.URL, access); s != http.StatusUnauthorized {
		t.Errorf("after the code's reuse its token answers %d, want 401", s)
	}
}

// TestPKCEOtherThanS256IsRefused: an authorization request with plain
// PKCE or none is sent back with invalid_request (and iss); a code's
// exchange without its verifier, or with another, is refused.
func TestPKCEOtherThanS256IsRefused(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	id := b.RegisterOAuthClient(t, "Plain", testRedirect)
	verifier, challenge := webtest.PKCE()
	for name, edit := range map[string]func(url.Values){
		"plain":        func(q url.Values) { q.Set("code_challenge_method", "plain"); q.Set("code_challenge", verifier) },
		"no method":    func(q url.Values) { q.Del("code_challenge_method") },
		"no challenge": func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") },
	} {
		q := b.AuthorizeQuery(id, testRedirect, challenge)
		edit(q)
		res := c.Get("/oauth/authorize?" + q.Encode())
		to, _ := url.Parse(res.Header.Get("Location"))
		if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(to.String(), testRedirect) ||
			to.Query().Get("error") != "invalid_request" || to.Query().Get("iss") != b.Server.URL || to.Query().Get("state") != "st-1" {
			t.Errorf("%s: %d %q", name, res.StatusCode, res.Header.Get("Location"))
		}
	}
	code := c.Consent(b.AuthorizeQuery(id, testRedirect, challenge), "self", "allow").Query().Get("code")
	if r := exchange(t, b, id, code, testRedirect, ""); r.JSON["error"] != "invalid_request" {
		t.Errorf("exchange without a verifier: %d %s", r.Status, r.Body)
	}
	other, _ := webtest.PKCE()
	if r := exchange(t, b, id, code, testRedirect, other); r.JSON["error"] != "invalid_grant" {
		t.Errorf("exchange with another verifier: %d %s", r.Status, r.Body)
	}
	// The failed exchange spent the code: its holder may not be the client.
	if r := exchange(t, b, id, code, testRedirect, verifier); r.JSON["error"] != "invalid_grant" {
		t.Errorf("exchange after a wrong verifier: %d %s", r.Status, r.Body)
	}
}

// TestARedirectURIOffByOneCharacterIsRefused: the console sends nobody to
// a redirect URI that is not exactly one of the client's — the page says
// why — and a code is exchanged only with its own redirect URI.
func TestARedirectURIOffByOneCharacterIsRefused(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	id := b.RegisterOAuthClient(t, "Exact", testRedirect)
	verifier, challenge := webtest.PKCE()
	for _, uri := range []string{testRedirect + "s", strings.TrimSuffix(testRedirect, "k"), "http://127.0.0.1:7777/Callback",
		testRedirect + "/", testRedirect + "?x=1", "http://127.0.0.1:7778/callback"} {
		res := c.Get("/oauth/authorize?" + b.AuthorizeQuery(id, uri, challenge).Encode())
		if res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" ||
			res.Doc(t).Find(`[data-testid="oauth-refused"]`).Length() != 1 {
			t.Errorf("redirect %s: %d, Location %q", uri, res.StatusCode, res.Header.Get("Location"))
		}
	}
	code := c.Consent(b.AuthorizeQuery(id, testRedirect, challenge), "self", "allow").Query().Get("code")
	if r := exchange(t, b, id, code, testRedirect+"s", verifier); r.JSON["error"] != "invalid_grant" {
		t.Errorf("exchange with another redirect URI: %d %s", r.Status, r.Body)
	}
}

// TestRegistrationRefusesUnsafeRedirects: dynamic registration takes
// https, loopback http and private-use schemes, and nothing else.
func TestRegistrationRefusesUnsafeRedirects(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	for _, uri := range []string{"http://evil.example/cb", "https://app.example/cb#frag", "javascript:alert(1)",
		"https://user:pw@app.example/cb", "data:text/html,hi", "/relative"} {
		res := b.Call(t, "", http.MethodPost, "/oauth/register", map[string]any{"client_name": "x", "redirect_uris": []string{uri}})
		if res.Status != http.StatusBadRequest || res.JSON["error"] != "invalid_redirect_uri" {
			t.Errorf("register %s: %d %s", uri, res.Status, res.Body)
		}
	}
	for _, uri := range []string{"https://claude.ai/api/mcp/auth_callback", "http://localhost:6274/oauth/callback", "com.example.app:/cb"} {
		b.Call(t, "", http.MethodPost, "/oauth/register", map[string]any{"client_name": "x", "redirect_uris": []string{uri}}).Want(t, http.StatusCreated)
	}
	res := b.Call(t, "", http.MethodPost, "/oauth/register", map[string]any{"redirect_uris": []string{testRedirect},
		"token_endpoint_auth_method": "client_secret_basic"})
	if res.JSON["error"] != "invalid_client_metadata" {
		t.Errorf("a confidential client: %d %s", res.Status, res.Body)
	}
}

// TestRegistrationIsRateLimitedPerAddress: one address registers at most
// ten clients a minute; the eleventh is 429 with Retry-After.
func TestRegistrationIsRateLimitedPerAddress(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	body := map[string]any{"client_name": "x", "redirect_uris": []string{testRedirect}}
	for range 10 {
		b.Call(t, "", http.MethodPost, "/oauth/register", body).Want(t, http.StatusCreated)
	}
	res := b.Call(t, "", http.MethodPost, "/oauth/register", body)
	if res.Status != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || res.JSON["error"] == nil {
		t.Errorf("the eleventh registration: %d %s (Retry-After %q)", res.Status, res.Body, res.Header.Get("Retry-After"))
	}
}

// TestAClientNameHidesNothing: the consent page shows the name a client
// gives itself; a name carrying a character a person cannot see, or one
// that turns the reading direction ("Claude" spelt with a zero-width
// space, a right-to-left override hiding what follows), is refused at
// registration, as any argument carrying one is (internal/invisible).
func TestAClientNameHidesNothing(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	for _, name := range []string{"Cla\u200bude", "Claude \u202egnp.lived", "Claude\u2066 official\u2069", "Claude\u00ad"} {
		res := b.Call(t, "", http.MethodPost, "/oauth/register", map[string]any{"client_name": name, "redirect_uris": []string{testRedirect}})
		if res.Status != http.StatusBadRequest || res.JSON["error"] != "invalid_client_metadata" {
			t.Errorf("register %q: %d %s, want invalid_client_metadata", name, res.Status, res.Body)
		}
	}
	b.Call(t, "", http.MethodPost, "/oauth/register", map[string]any{"client_name": "Claude 🤖 (Anthropic)",
		"redirect_uris": []string{testRedirect}}).Want(t, http.StatusCreated)
}

// TestRegistrationCountsAnIPv6SubscriberAsOneAddress: one subscriber
// usually holds a whole IPv6 /64, so the registration limit counts the
// /64 as one address, as the sign-in throttle does (accounts.SourceOf):
// ten registrations from ten addresses of one /64 spend its minute, and
// another /64 still registers.
func TestRegistrationCountsAnIPv6SubscriberAsOneAddress(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithTrustedProxies(netip.MustParsePrefix("127.0.0.0/8")))
	body := map[string]any{"client_name": "x", "redirect_uris": []string{testRedirect}}
	from := func(ip string) webtest.APIResponse {
		return b.Call(t, "", http.MethodPost, "/oauth/register", body, "X-Forwarded-For", ip)
	}
	for i := range 10 {
		from(fmt.Sprintf("2001:db8:0:1::%x", i+1)).Want(t, http.StatusCreated)
	}
	if res := from("2001:db8:0:1::ff"); res.Status != http.StatusTooManyRequests {
		t.Errorf("an eleventh registration from the same /64: %d %s, want 429", res.Status, res.Body)
	}
	from("2001:db8:0:2::1").Want(t, http.StatusCreated)
}
