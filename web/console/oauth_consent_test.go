package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/web/webtest"
)

const consentRedirect = "https://assistant.example/oauth/callback"

// TestTheConsentPageShowsTheClientAndTheChoices: signed out, the page
// leads to sign-in and back; signed in, it shows the client's name, its
// redirect host, that it is new, and the choices (themselves, each
// configured assistant with its grants), each radio labelled and
// described; a customer may not consent.
func TestTheConsentPageShowsTheClientAndTheChoices(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	id := b.RegisterOAuthClient(t, "Claude", consentRedirect)
	_, challenge := webtest.PKCE()
	q := b.AuthorizeQuery(id, consentRedirect, challenge)
	path := "/oauth/authorize?" + q.Encode()

	anon := b.Client(t)
	res := anon.Get(path)
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/sign-in?next=") {
		t.Errorf("signed out: %d %q, want the sign-in", res.StatusCode, res.Header.Get("Location"))
	}
	cust := b.Client(t)
	cust.MustSignIn(b.Users[accounts.Customer])
	if res := cust.Get(path); res.StatusCode != http.StatusForbidden {
		t.Errorf("a customer: %d, want 403", res.StatusCode)
	}

	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	page := c.Get(path)
	// Browsers hold a form's redirect to the page's form-action: the
	// answer goes to the client's (verified) origin.
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' https://assistant.example;") {
		t.Errorf("the consent page's CSP does not let its answer reach the client: %q", csp)
	}
	doc := page.Doc(t)
	if got := doc.Find(`[data-testid="oauth-client-name"]`).Text(); !strings.Contains(got, "Claude") {
		t.Errorf("client name: %q", got)
	}
	if got := doc.Find(`[data-testid="oauth-redirect-host"]`).Text(); got != "assistant.example" {
		t.Errorf("redirect host: %q", got)
	}
	if doc.Find(`[data-testid="oauth-new"]`).Length() != 1 {
		t.Errorf("the page does not say the client is new")
	}
	choices := doc.Find(`[data-testid="oauth-choice"]`)
	if choices.Length() != 2 {
		t.Fatalf("%d choices, want themselves and support-bot", choices.Length())
	}
	for i := range choices.Length() {
		in := choices.Eq(i)
		idAttr, _ := in.Attr("id")
		about, _ := in.Attr("aria-describedby")
		if doc.Find(`label[for="`+idAttr+`"]`).Length() != 1 || doc.Find(`#`+about).Text() == "" {
			t.Errorf("choice %d has no label or description", i)
		}
	}
	if text := doc.Find(`fieldset`).Text(); !strings.Contains(text, "Myself") || !strings.Contains(text, "support-bot") ||
		!strings.Contains(text, "never approve") {
		t.Errorf("choices: %q", text)
	}

	// Once someone connected it, it is no longer new.
	c.Consent(q, "self", "allow")
	if c.Get(path).Doc(t).Find(`[data-testid="oauth-new"]`).Length() != 0 {
		t.Errorf("the client is still called new after a consent")
	}
}

// TestDecliningSendsAccessDeniedAndNoChoiceIsAsked: "Do not connect"
// sends the browser back with access_denied, the state and iss; a yes
// without a choice re-renders the page with the problem.
func TestDecliningSendsAccessDeniedAndNoChoiceIsAsked(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	id := b.RegisterOAuthClient(t, "Claude", consentRedirect)
	_, challenge := webtest.PKCE()
	q := b.AuthorizeQuery(id, consentRedirect, challenge)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])
	to := c.Consent(q, "", "deny")
	if !strings.HasPrefix(to.String(), consentRedirect+"?") || to.Query().Get("error") != "access_denied" ||
		to.Query().Get("state") != "st-1" || to.Query().Get("iss") != b.Server.URL || to.Query().Has("code") {
		t.Errorf("declined: %s", to)
	}
	form := url.Values{"_csrf": {c.CSRF("/oauth/authorize?" + q.Encode())}, "decision": {"allow"}}
	for k, v := range q {
		form[k] = v
	}
	res := c.Post("/oauth/authorize", form)
	if res.StatusCode != http.StatusUnprocessableEntity || res.Doc(t).Find(`#act_as-error`).Length() != 1 {
		t.Errorf("a yes without a choice: %d", res.StatusCode)
	}
	form.Set("act_as", "ast_someone_elses")
	if res := c.Post("/oauth/authorize", form); res.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a yes for an assistant not offered: %d", res.StatusCode)
	}
	// A tampered redirect in the form is checked again: no redirect.
	form.Set("act_as", "self")
	form.Set("redirect_uri", "https://evil.example/cb")
	if res := c.Post("/oauth/authorize", form); res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" {
		t.Errorf("a tampered redirect: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
}

// TestUnknownClientsWaitForAnAdminWhenTheAdminSaysSo: with the setting
// on, an unapproved client gets a page (no redirect) until an admin
// approves it; revoking a client ends its tokens and it cannot connect
// again. Each change is an audit event.
func TestUnknownClientsWaitForAnAdminWhenTheAdminSaysSo(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	admin := b.Client(t)
	admin.MustSignIn(b.Users[accounts.Admin])
	post(t, admin, "/admin/clients/settings", url.Values{"_csrf": {admin.CSRF("/admin/clients")}, "need_approval": {"on"}})

	id := b.RegisterOAuthClient(t, "Newcomer", consentRedirect)
	_, challenge := webtest.PKCE()
	q := b.AuthorizeQuery(id, consentRedirect, challenge)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	res := c.Get("/oauth/authorize?" + q.Encode())
	if res.StatusCode != http.StatusForbidden || res.Header.Get("Location") != "" ||
		!strings.Contains(res.Doc(t).Find(`[data-testid="oauth-refused"]`).Text(), "approve") {
		t.Fatalf("an unapproved client: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	page := admin.Get("/admin/clients").Doc(t)
	if got := page.Find(`[data-testid="client-status"]`).First().Text(); got != "Awaiting approval" {
		t.Errorf("client status: %q", got)
	}
	post(t, admin, "/admin/clients/approve", url.Values{"_csrf": {admin.CSRF("/admin/clients")}, "client_id": {id}})
	c.Consent(q, "self", "allow")

	post(t, admin, "/admin/clients/settings", url.Values{"_csrf": {admin.CSRF("/admin/clients")}})
	tok := c.OAuthTokens("self")
	grants := admin.Get("/admin/clients").Doc(t).Find(`[data-testid="grant-row"]`)
	if grants.Length() != 1 || !strings.Contains(grants.Text(), b.Users[accounts.Agent].Name+" (their own assistant)") ||
		grants.Find(`[data-testid="grant-status"]`).Text() != "Live" {
		t.Errorf("the admin's connections: %d rows %q", grants.Length(), grants.Text())
	}
	confirm := admin.Post("/admin/clients/revoke", url.Values{"_csrf": {admin.CSRF("/admin/clients")}, "client_id": {tok["client_id"].(string)}})
	if confirm.StatusCode != http.StatusOK || confirm.Doc(t).Find(`[data-testid="confirm-end"]`).Length() != 1 {
		t.Fatalf("revoke without confirm: %d, want the confirmation page", confirm.StatusCode)
	}
	post(t, admin, "/admin/clients/revoke", url.Values{"_csrf": {admin.CSRF("/admin/clients")}, "client_id": {tok["client_id"].(string)}, "confirm": {"yes"}})
	res2 := b.Call(t, tok["access_token"].(string), http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if res2.Status != http.StatusUnauthorized {
		t.Errorf("a revoked client's token on /mcp: %d", res2.Status)
	}
	if r := b.OAuthPost(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)},
		"client_id": {tok["client_id"].(string)}}); r.JSON["error"] != "invalid_client" {
		t.Errorf("a revoked client's refresh: %d %s", r.Status, r.Body)
	}
	for _, action := range []string{"oauth.setting_changed", "oauth.client_approved", "oauth.consented", "oauth.client_revoked"} {
		var n int
		if err := b.Store.Pool().QueryRow(t.Context(), `SELECT count(*) FROM events WHERE action = $1`, action).Scan(&n); err != nil || n == 0 {
			t.Errorf("no %s event (%v)", action, err)
		}
	}
}
