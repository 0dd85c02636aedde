package webtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// PKCE returns a new code verifier and its S256 challenge.
func PKCE() (verifier, challenge string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	verifier = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// OAuthPost posts form to one of the authorization server's endpoints
// (/oauth/token, /oauth/revoke) as a client program does: no cookies.
func (b *Stack) OAuthPost(t *testing.T, path string, form url.Values) APIResponse {
	t.Helper()
	res, err := http.Post(b.Server.URL+path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out := APIResponse{Status: res.StatusCode, Header: res.Header}
	raw, _ := io.ReadAll(res.Body)
	out.Body = string(raw)
	_ = json.Unmarshal([]byte(out.Body), &out.JSON)
	return out
}

// RegisterOAuthClient registers a client with one redirect URI by
// dynamic registration and returns its client_id.
func (b *Stack) RegisterOAuthClient(t *testing.T, name, redirect string) string {
	t.Helper()
	res := b.Call(t, "", http.MethodPost, "/oauth/register", map[string]any{"client_name": name, "redirect_uris": []string{redirect},
		"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"}})
	res.Want(t, http.StatusCreated)
	return res.JSON["client_id"].(string)
}

// AuthorizeQuery is a well-formed authorization request of client for
// the stack's MCP server, with challenge and state "st-1".
func (b *Stack) AuthorizeQuery(clientID, redirect, challenge string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "resource": {b.Server.URL + "/mcp"}, "state": {"st-1"}}
}

// Consent opens the consent page of q as the signed-in c, answers it
// (decision "allow" acting as actAs: "self" or an assistant's id; or
// "deny") and returns the redirect the console answered, failing unless
// it is a 303.
func (c *Client) Consent(q url.Values, actAs, decision string) *url.URL {
	c.T.Helper()
	page := c.Get("/oauth/authorize?" + q.Encode())
	if page.StatusCode != http.StatusOK {
		c.T.Fatalf("consent page: %d\n%.800s", page.StatusCode, page.Text)
	}
	form := url.Values{}
	page.Doc(c.T).Find(`form[data-testid="oauth-form"] input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Attr("name")
		value, _ := s.Attr("value")
		form.Add(name, value)
	})
	form.Set("act_as", actAs)
	form.Set("decision", decision)
	res := c.Post("/oauth/authorize", form)
	if res.StatusCode != http.StatusSeeOther {
		c.T.Fatalf("consent: %d\n%.800s", res.StatusCode, res.Text)
	}
	to, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		c.T.Fatal(err)
	}
	return to
}

// OAuthTokens runs the whole flow for a new client: registration, the
// signed-in c's consent acting as actAs, and the code's exchange; it
// returns the token response.
func (c *Client) OAuthTokens(actAs string) map[string]any {
	c.T.Helper()
	b := c.Stack
	redirect := "http://127.0.0.1:7777/callback"
	id := b.RegisterOAuthClient(c.T, "Test MCP client", redirect)
	verifier, challenge := PKCE()
	to := c.Consent(b.AuthorizeQuery(id, redirect, challenge), actAs, "allow")
	res := b.OAuthPost(c.T, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {to.Query().Get("code")},
		"redirect_uri": {redirect}, "client_id": {id}, "code_verifier": {verifier}, "resource": {b.Server.URL + "/mcp"}})
	res.Want(c.T, http.StatusOK)
	res.JSON["client_id"] = id
	return res.JSON
}
