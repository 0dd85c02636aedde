package console_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/internal/factors/softkey"
	"countersign/internal/sso"
	"countersign/internal/sso/ssotest"
	"countersign/web/webtest"
)

// ssoPasskeys is a shop console with single sign-on through a real
// provider and passkeys on, browsed at localhost (the relying party); c
// is a browser there.
type ssoPasskeys struct {
	*ssoConsole
	pk     *webtest.Stack
	origin string
}

func newSSOPasskeys(t *testing.T) *ssoPasskeys {
	t.Helper()
	s := newSSOConsoleOver(t, []webtest.Option{webtest.WithShop()}, webtest.WithPasskeys())
	s.op.AddUser("kim", "kim@example.test", "Kim Colleague", "support")
	_, port, _ := net.SplitHostPort(s.srv.Listener.Addr().String())
	origin := "http://localhost:" + port
	return &ssoPasskeys{ssoConsole: s, pk: &webtest.Stack{Server: &httptest.Server{URL: origin}, Store: s.stack.Store}, origin: origin}
}

// atProvider follows a redirect to the provider, signs username in there
// and follows the provider's redirect back to the console's callback.
func (s *ssoPasskeys) atProvider(t *testing.T, c *webtest.Client, res webtest.Response, username string) webtest.Response {
	t.Helper()
	if res.StatusCode != http.StatusFound || !strings.HasPrefix(res.Header.Get("Location"), s.op.URL) {
		t.Fatalf("%d to %q, want a redirect to the provider", res.StatusCode, res.Header.Get("Location"))
	}
	back := ssotest.Login(t, s.op, res.Header.Get("Location"), username)
	req, _ := http.NewRequest(http.MethodGet, back.String(), nil)
	return c.Do(req)
}

// signInAs signs username in through the provider in a new browser.
func (s *ssoPasskeys) signInAs(t *testing.T, username string) *webtest.Client {
	t.Helper()
	c := s.pk.Client(t)
	if res := s.atProvider(t, c, c.Get("/sign-in/sso?next=/queue"), username); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("%s's sign-in: %d\n%s", username, res.StatusCode, res.Text)
	}
	return c
}

// confirmAs answers "Confirm with Test provider" by signing username in.
func (s *ssoPasskeys) confirmAs(t *testing.T, c *webtest.Client, username string) webtest.Response {
	t.Helper()
	start := c.Get("/sign-in/sso/confirm?next=/account/factors")
	to, _ := url.Parse(start.Header.Get("Location"))
	if q := to.Query(); q.Get("prompt") != "login" || q.Get("max_age") != "0" {
		t.Fatalf("the confirmation sends to %s, want prompt=login and max_age=0", to)
	}
	return s.atProvider(t, c, start, username)
}

// addProviderPasskey adds a passkey as a provider's account does: no
// password, the begin's status and reply when it is refused.
func (s *ssoPasskeys) addProviderPasskey(t *testing.T, c *webtest.Client) (*softkey.Key, int, reply) {
	t.Helper()
	tok := c.CSRF("/account/factors")
	status, opts := postJSON(t, c, "/account/factors/passkey/begin", tok, map[string]string{})
	if status != http.StatusOK {
		return nil, status, decode(t, opts)
	}
	k, cred, err := softkey.Create(opts, "localhost", s.origin)
	if err != nil {
		t.Fatal(err)
	}
	status, raw := postJSON(t, c, "/account/factors/passkey", tok, map[string]any{"name": "Laptop", "credential": json.RawMessage(cred)})
	return k, status, decode(t, raw)
}

// TestProviderAccountAddsAPasskeyAfterConfirmingAtTheProvider: a person
// who signs in through the provider (no console password) sees the
// passkeys on their account page; without a sign-in there in the last
// five minutes, adding one is refused with what to do; "Confirm with
// Test provider" signs them in there again, after which the passkey is
// added (audited) and approves a card whose policy asks for one.
func TestProviderAccountAddsAPasskeyAfterConfirmingAtTheProvider(t *testing.T) {
	s := newSSOPasskeys(t)
	s.stack.RequireStepUp(t, "update_product_description")
	// The provider answers from a session of its own, signed in ten
	// minutes ago: the console's sign-in is not fresh.
	s.op.SetAuthAge(10 * time.Minute)
	c := s.signInAs(t, "sam")
	s.op.SetAuthAge(0)

	if !strings.Contains(c.Get("/account/password").Text, `href="/account/factors"`) {
		t.Error("a provider's account's password page does not link its passkeys")
	}
	page := c.Get("/account/factors").Doc(t)
	if !strings.Contains(page.Find(`[data-testid="provider-factor"]`).Text(), "Your provider handles your sign-in's second factor; a passkey here is for approvals that ask for one") {
		t.Error("the account page does not say the provider handles the sign-in's second factor")
	}
	if page.Find(`[data-testid="account-factors"]`).Length() != 0 {
		t.Error("the account page offers an authenticator app behind a console password the person does not have")
	}
	confirm := page.Find(`[data-testid="confirm-provider"] a`)
	if confirm.AttrOr("href", "") != "/sign-in/sso/confirm?next=/account/factors" || !strings.Contains(confirm.Text(), "Confirm with Test provider") {
		t.Fatalf("the account page offers %q → %q, want \"Confirm with Test provider\"", confirm.Text(), confirm.AttrOr("href", ""))
	}
	if page.Find(`[data-testid="add-passkey"]`).Length() != 0 {
		t.Error("the account page offers to add a passkey before the sign-in at the provider is fresh")
	}
	status, raw := postJSON(t, c, "/account/factors/passkey/begin", c.CSRF("/account/factors"), map[string]string{})
	if r := decode(t, raw); status != http.StatusForbidden || !strings.Contains(r.Error, "Confirm with Test provider") {
		t.Fatalf("adding a passkey without a fresh sign-in: %d %+v, want 403 saying to confirm with the provider", status, r)
	}

	if res := s.confirmAs(t, c, "sam"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/account/factors" {
		t.Fatalf("the confirmation: %d to %q, want back to the account page", res.StatusCode, res.Header.Get("Location"))
	}
	if c.Get("/account/factors").Doc(t).Find(`[data-testid="add-passkey"]`).Length() != 1 {
		t.Fatal("after the confirmation the account page offers no passkey")
	}
	// The finish checks it again: a ceremony begun fresh and answered
	// after the five minutes adds nothing.
	tok := c.CSRF("/account/factors")
	status, opts := postJSON(t, c, "/account/factors/passkey/begin", tok, map[string]string{})
	if status != http.StatusOK {
		t.Fatalf("begin after the confirmation: %d %s", status, opts)
	}
	_, cred, err := softkey.Create(opts, "localhost", s.origin)
	if err != nil {
		t.Fatal(err)
	}
	s.shift.Store(int64((sso.FreshFor + time.Minute) / time.Second))
	if status, raw := postJSON(t, c, "/account/factors/passkey", tok, map[string]any{"name": "Late", "credential": json.RawMessage(cred)}); status != http.StatusForbidden {
		t.Fatalf("a passkey answered after the sign-in went stale: %d %s, want 403", status, raw)
	}
	s.shift.Store(0)
	k, status, r := s.addProviderPasskey(t, c)
	if status != http.StatusOK {
		t.Fatalf("adding the passkey after the confirmation: %d %+v", status, r)
	}
	sam, err := s.stack.Accounts.UserIDByEmail(t.Context(), "sam@example.test")
	if err != nil {
		t.Fatal(err)
	}
	var added int
	if err := s.stack.Store.Pool().QueryRow(t.Context(), `SELECT count(*) FROM events WHERE action = 'factor.added'
		AND data->>'kind' = 'passkey' AND actor_kind = 'user' AND actor_id = $1::bigint::text
		AND data->'identified_by'->>'method' = 'oidc'`, sam).Scan(&added); err != nil {
		t.Fatal(err)
	}
	if added != 1 {
		t.Errorf("%d factor.added events of sam's passkey by the provider's sign-in, want 1", added)
	}

	inv := webtest.NewShopper(t, s.stack).Describe(t, "Now in oak.")
	shownPage := stepUpPage(t, c, inv.ID)
	status, opts = beginStepUp(t, c, inv.ID, shownPage)
	if status != http.StatusOK {
		t.Fatalf("step-up begin: %d %s", status, opts)
	}
	if status, r := finishStepUp(t, c, inv.ID, shownPage, k, opts, s.origin); status != http.StatusOK {
		t.Fatalf("sam's step-up: %d %+v", status, r)
	}
	if got := s.stack.StepUps(t, inv.ID); len(got) != 1 || got[0].Verify(inv.ID, int64(inv.Version), inv.ArgsHash) != nil {
		t.Fatalf("the approval kept %d step-ups, want sam's passkey's one for the card", len(got))
	}

	// Removing it needs a fresh sign-in too.
	s.shift.Store(int64((6 * time.Minute) / time.Second))
	action := c.Get("/account/factors").Doc(t).Find(`[data-testid="passkey"] form`).AttrOr("action", "")
	remove := func() {
		t.Helper()
		if res := c.Post(action, url.Values{"_csrf": {c.CSRF("/account/factors")}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("removing the passkey: %d", res.StatusCode)
		}
	}
	remove()
	page = c.Get("/account/factors").Doc(t)
	if n := page.Find(`[data-testid="passkey"]`).Length(); n != 1 || !strings.Contains(page.Text(), "in the last five minutes") {
		t.Fatalf("%d passkeys after a removal without a fresh sign-in, want it kept and the page to say why", n)
	}
	s.shift.Store(0)
	remove()
	if n := c.Get("/account/factors").Doc(t).Find(`[data-testid="passkey"]`).Length(); n != 0 {
		t.Fatalf("%d passkeys after a removal with a fresh sign-in, want none", n)
	}
}

// TestProviderConfirmationByAnotherPersonOrTooOldIsRefused: a
// confirmation signed in at the provider by a colleague is refused
// (the session stays its person's, still not fresh), and so is one whose
// ID token says the person signed in longer ago than five minutes although
// max_age asked for a new sign-in.
func TestProviderConfirmationByAnotherPersonOrTooOldIsRefused(t *testing.T) {
	s := newSSOPasskeys(t)
	s.op.SetAuthAge(10 * time.Minute)
	c := s.signInAs(t, "sam")
	s.op.SetAuthAge(0)

	res := s.confirmAs(t, c, "kim")
	if res.StatusCode != http.StatusForbidden || !strings.Contains(res.Doc(t).Find(`[data-testid="error-message"]`).Text(), "Someone else signed in") {
		t.Fatalf("kim's confirmation in sam's session: %d, want 403 saying someone else signed in\n%s", res.StatusCode, res.Text)
	}
	if _, err := s.stack.Accounts.UserIDByEmail(t.Context(), "kim@example.test"); err == nil {
		t.Error("kim's confirmation made kim an account")
	}
	page := c.Get("/account/factors")
	if page.StatusCode != http.StatusOK || page.Doc(t).Find(`[data-testid="confirm-provider"]`).Length() != 1 {
		t.Fatalf("sam's account page after kim's confirmation: %d, want sam still signed in and not confirmed", page.StatusCode)
	}
	if _, status, _ := s.addProviderPasskey(t, c); status != http.StatusForbidden {
		t.Fatalf("adding a passkey after kim's confirmation: %d, want 403", status)
	}

	s.op.SetAuthAge(10 * time.Minute)
	res = s.confirmAs(t, c, "sam")
	if res.StatusCode != http.StatusForbidden || !strings.Contains(res.Doc(t).Find(`[data-testid="error-message"]`).Text(), "did not ask you to sign in again") {
		t.Fatalf("a confirmation with an auth_time ten minutes old: %d, want 403\n%s", res.StatusCode, res.Text)
	}
	if _, status, _ := s.addProviderPasskey(t, c); status != http.StatusForbidden {
		t.Fatalf("adding a passkey after an old confirmation: %d, want 403", status)
	}
}
