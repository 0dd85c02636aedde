package api_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/authserver"
	"countersign/web/webtest"
)

// TestDiscoveryFromThe401 follows what an MCP client does with no
// credentials: the 401 names the protected-resource metadata, which names
// the console as the authorization server, whose metadata offers S256
// PKCE only, metadata documents, registration, revocation and iss.
func TestDiscoveryFromThe401(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	base := b.Server.URL
	res := b.Call(t, "", http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	want := `resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp"`
	if res.Status != http.StatusUnauthorized || !strings.Contains(res.Header.Get("WWW-Authenticate"), want) {
		t.Fatalf("POST /mcp without credentials: %d, WWW-Authenticate %q, want 401 with %s", res.Status, res.Header.Get("WWW-Authenticate"), want)
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		prm := b.Call(t, "", http.MethodGet, path, nil).Want(t, http.StatusOK)
		if prm.JSON["resource"] != base+"/mcp" || !hasString(prm.JSON["authorization_servers"], base) {
			t.Errorf("%s: %s", path, prm.Body)
		}
	}
	as := b.Call(t, "", http.MethodGet, "/.well-known/oauth-authorization-server", nil).Want(t, http.StatusOK)
	for field, v := range map[string]string{"issuer": base, "authorization_endpoint": base + "/oauth/authorize",
		"token_endpoint": base + "/oauth/token", "registration_endpoint": base + "/oauth/register", "revocation_endpoint": base + "/oauth/revoke"} {
		if as.JSON[field] != v {
			t.Errorf("%s = %v, want %s", field, as.JSON[field], v)
		}
	}
	if m := as.JSON["code_challenge_methods_supported"].([]any); len(m) != 1 || m[0] != "S256" {
		t.Errorf("code_challenge_methods_supported = %v, want [S256]", m)
	}
	if as.JSON["client_id_metadata_document_supported"] != true || as.JSON["authorization_response_iss_parameter_supported"] != true {
		t.Errorf("metadata documents or iss not advertised: %s", as.Body)
	}
}

func hasString(v any, s string) bool {
	list, _ := v.([]any)
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestAccessTokenWorksOnMCPBesideKeys: a token acting as the configured
// assistant opens an MCP session on its task, as its key does; the key
// keeps working; the token is not for /api/v1, another resource.
func TestAccessTokenWorksOnMCPBesideKeys(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	tok := c.OAuthTokens(b.Assistant.ID)
	access := tok["access_token"].(string)
	if tok["token_type"] != "Bearer" || tok["expires_in"].(float64) != 900 || tok["refresh_token"] == "" {
		t.Errorf("token response: %v", tok)
	}
	for name, secret := range map[string]string{"token": access, "key": b.Key} {
		cs, err := mcpSession(t, b, secret, b.TaskID())
		if err != nil {
			t.Fatalf("MCP session with the %s: %v", name, err)
		}
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Errorf("tools/list with the %s: %v", name, err)
		}
		cs.Close()
	}
	res := b.Call(t, access, http.MethodGet, "/api/v1/tasks/"+b.TaskID(), nil)
	if res.Status != http.StatusUnauthorized || !strings.Contains(res.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("the MCP token on /api/v1: %d %s", res.Status, res.Body)
	}
	b.Call(t, b.Key, http.MethodGet, "/api/v1/tasks/"+b.TaskID(), nil).Want(t, http.StatusOK)
}

// mcpStatus is the HTTP status of a bare initialize on /mcp with secret.
func mcpStatus(t *testing.T, b *webtest.Stack, base, secret string) int {
	t.Helper()
	return webtest.CallAPI(t, base, secret, http.MethodPost, "/mcp",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		"Accept", "application/json, text/event-stream").Status
}

// TestRefreshRotatesAndAReusedRefreshRevokesTheGrant: a refresh issues a
// new pair and spends the old refresh token; presenting it again is
// refused and ends every token of the grant.
func TestRefreshRotatesAndAReusedRefreshRevokesTheGrant(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	tok := c.OAuthTokens(b.Assistant.ID)
	refresh := func(rt string) webtest.APIResponse {
		return b.OAuthPost(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt},
			"client_id": {tok["client_id"].(string)}})
	}
	next := refresh(tok["refresh_token"].(string)).Want(t, http.StatusOK)
	if next.JSON["refresh_token"] == tok["refresh_token"] || next.JSON["access_token"] == tok["access_token"] {
		t.Fatalf("refresh did not rotate: %v", next.JSON)
	}
	newAccess := next.JSON["access_token"].(string)
	if s := mcpStatus(t, b, b.Server.URL, newAccess); s != http.StatusOK {
		t.Fatalf("new access token on /mcp: %d", s)
	}
	again := refresh(tok["refresh_token"].(string))
	if again.Status != http.StatusBadRequest || again.JSON["error"] != "invalid_grant" {
		t.Fatalf("reused refresh token: %d %s", again.Status, again.Body)
	}
	if s := mcpStatus(t, b, b.Server.URL, newAccess); s != http.StatusUnauthorized {
		t.Errorf("after the reuse, the grant's newest access token answers %d, want 401", s)
	}
	if r := refresh(next.JSON["refresh_token"].(string)); r.JSON["error"] != "invalid_grant" {
		t.Errorf("after the reuse, the newest refresh token: %d %s", r.Status, r.Body)
	}
}

// TestRevocation: revoking the refresh token ends the grant's access
// token too; an unknown token is answered 200 all the same (RFC 7009).
func TestRevocation(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	tok := c.OAuthTokens(b.Assistant.ID)
	id := tok["client_id"].(string)
	b.OAuthPost(t, "/oauth/revoke", url.Values{"token": {"cso_rt_unknown"}, "client_id": {id}}).Want(t, http.StatusOK)
	access := tok["access_token"].(string)
	if s := mcpStatus(t, b, b.Server.URL, access); s != http.StatusOK {
		t.Fatalf("before revocation: %d", s)
	}
	b.OAuthPost(t, "/oauth/revoke", url.Values{"token": {tok["refresh_token"].(string)}, "client_id": {id},
		"token_type_hint": {"refresh_token"}}).Want(t, http.StatusOK)
	if s := mcpStatus(t, b, b.Server.URL, access); s != http.StatusUnauthorized {
		t.Errorf("access token after its refresh token was revoked: %d, want 401", s)
	}
	var n int
	if err := b.Store.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM events WHERE action = 'oauth.token_revoked' AND data->>'by' = 'client'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("revocation events: %d %v, want 1", n, err)
	}
}

// TestATokenForAnotherResourceIsRefused: the resource must be this
// console's /mcp when authorizing and when exchanging, and a token is
// refused by a console at another address (another resource) though it
// shares the database.
func TestATokenForAnotherResourceIsRefused(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	redirect := "http://127.0.0.1:7777/callback"
	id := b.RegisterOAuthClient(t, "Other", redirect)
	_, challenge := webtest.PKCE()
	q := b.AuthorizeQuery(id, redirect, challenge)
	q.Set("resource", "https://elsewhere.example/mcp")
	res := c.Get("/oauth/authorize?" + q.Encode())
	to, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || to.Query().Get("error") != "invalid_target" || to.Query().Get("iss") != b.Server.URL {
		t.Errorf("authorize for another resource: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	tok := c.OAuthTokens(b.Assistant.ID)
	other := b.ServeAnother(t)
	if s := mcpStatus(t, b, other.URL, tok["access_token"].(string)); s != http.StatusUnauthorized {
		t.Errorf("token at another resource: %d, want 401", s)
	}
	if s := mcpStatus(t, b, b.Server.URL, tok["access_token"].(string)); s != http.StatusOK {
		t.Errorf("token at its own resource: %d, want 200", s)
	}
}

// TestBrowserClientsMayCallTheClientEndpoints: a page of any origin (the
// MCP Inspector's) gets its preflight answered and may read the metadata,
// token, registration and revocation answers; no cookie is involved.
func TestBrowserClientsMayCallTheClientEndpoints(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server",
		"/oauth/register", "/oauth/token", "/oauth/revoke"} {
		req, _ := http.NewRequest(http.MethodOptions, b.Server.URL+path, nil)
		req.Header.Set("Origin", "http://localhost:6274")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "Content-Type") {
			t.Errorf("preflight of %s: %d %v", path, res.StatusCode, res.Header)
		}
	}
	res := b.OAuthPost(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {"ocl_x"}})
	if res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("the token endpoint's answer is not readable by a page: %v", res.Header)
	}
}

// TestNoAccessTokenOutlivesItsGrant: a consent lasts GrantLifetime; an
// access token issued by a refresh shortly before the grant ends stops
// with the grant, not an access lifetime later.
func TestNoAccessTokenOutlivesItsGrant(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	tok := c.OAuthTokens(b.Assistant.ID)
	rt := tok["refresh_token"].(string)
	var access string
	// Refreshes keep the grant's tokens going up to five minutes before
	// the grant ends (each refresh token lives RefreshLifetime at most).
	for left := authserver.GrantLifetime; left > 5*time.Minute; {
		step := min(authserver.RefreshLifetime-time.Hour, left-5*time.Minute)
		b.Clock.Advance(step)
		left -= step
		next := b.OAuthPost(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt},
			"client_id": {tok["client_id"].(string)}}).Want(t, http.StatusOK)
		rt, access = next.JSON["refresh_token"].(string), next.JSON["access_token"].(string)
	}
	if s := mcpStatus(t, b, b.Server.URL, access); s != http.StatusOK {
		t.Fatalf("the last access token before the grant ends: %d, want 200", s)
	}
	b.Clock.Advance(6 * time.Minute)
	if s := mcpStatus(t, b, b.Server.URL, access); s != http.StatusUnauthorized {
		t.Errorf("an access token a minute after its grant ended: %d, want 401", s)
	}
}

// TestAnAccessTokenCostsNoMoreStatementsThanAKey: /mcp verifies its
// bearer on every call; a person's own access token (the most a token
// reads: its grant, client, person, own assistant) sends no more
// statements than an API key does for the same call.
func TestAnAccessTokenCostsNoMoreStatementsThanAKey(t *testing.T) {
	t.Parallel()
	rec := &webtest.Statements{}
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant(), webtest.WithQueryTracer(rec))
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	access := c.OAuthTokens("self")["access_token"].(string)
	count := func(secret string) []string {
		var status int
		sql := rec.During(func() { status = mcpStatus(t, b, b.Server.URL, secret) })
		if status != http.StatusOK {
			t.Fatalf("initialize: %d", status)
		}
		return sql
	}
	key, token := count(b.Key), count(access)
	if len(token) > len(key) {
		t.Errorf("an initialize sends %d statements with an access token, %d with a key; want no more:\n%s",
			len(token), len(key), strings.Join(token, "\n"))
	}
}

// TestATokenActsAsAnOwnAssistantOnlyForItsPerson: a grant whose
// assistant is a person's own acts only when it was that person's consent
// to act as themselves; a grant row saying otherwise (acting as the own
// assistant without naming the person accountable, or as themselves with
// an admin's assistant) is refused like an unknown token.
func TestATokenActsAsAnOwnAssistantOnlyForItsPerson(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	access := c.OAuthTokens("self")["access_token"].(string)
	ctx := context.Background()
	var own string
	if err := b.Store.Pool().QueryRow(ctx, `SELECT assistant_id FROM oauth_grants`).Scan(&own); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		name, sql string
		args      []any
		want      int
	}{
		{"as consented", `SELECT 1`, nil, http.StatusOK},
		{"own assistant, not acting as the person", `UPDATE oauth_grants SET acts_as_user = false`, nil, http.StatusUnauthorized},
		{"as the person, an admin's assistant", `UPDATE oauth_grants SET acts_as_user = true, assistant_id = $1`,
			[]any{b.Assistant.ID}, http.StatusUnauthorized},
		{"as consented again", `UPDATE oauth_grants SET acts_as_user = true, assistant_id = $1`, []any{own}, http.StatusOK},
	} {
		if _, err := b.Store.Pool().Exec(ctx, s.sql, s.args...); err != nil {
			t.Fatal(err)
		}
		if got := mcpStatus(t, b, b.Server.URL, access); got != s.want {
			t.Errorf("%s: /mcp answers %d, want %d", s.name, got, s.want)
		}
	}
}
