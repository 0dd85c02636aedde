package console_test

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/factors/softkey"
	"countersign/web/kit"
	"countersign/web/webtest"
)

// passkeyConsole serves b's console with passkeys on and returns a stack
// whose clients browse it at http://localhost:<port> (its relying party).
func passkeyConsole(t *testing.T, b *webtest.Stack) (*webtest.Stack, string) {
	t.Helper()
	srv := b.ServeAnother(t, webtest.WithPasskeys())
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	base := "http://localhost:" + port
	return &webtest.Stack{Server: &httptest.Server{URL: base}, Store: b.Store}, base
}

// postJSON posts body as static/passkey.js does and decodes the answer.
func postJSON(t *testing.T, c *webtest.Client, path, csrf string, body any) (int, json.RawMessage) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, c.Stack.Server.URL+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", csrf)
	req.Header.Set("Origin", c.Stack.Server.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res := c.Do(req)
	return res.StatusCode, json.RawMessage(res.Text)
}

type reply struct {
	Next, Error, Field string
}

func decode(t *testing.T, raw json.RawMessage) reply {
	t.Helper()
	var r reply
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	return r
}

// addPasskey registers a passkey named name for the signed-in u at origin.
func addPasskey(t *testing.T, c *webtest.Client, u webtest.User, name, origin string) (*softkey.Key, int, reply) {
	t.Helper()
	tok := c.CSRF("/account/factors")
	status, opts := postJSON(t, c, "/account/factors/passkey/begin", tok, map[string]string{"password": u.Password})
	if status != http.StatusOK {
		t.Fatalf("begin: %d %s", status, opts)
	}
	k, cred, err := softkey.Create(opts, "localhost", origin)
	if err != nil {
		t.Fatal(err)
	}
	status, raw := postJSON(t, c, "/account/factors/passkey", tok, map[string]any{"name": name, "credential": json.RawMessage(cred)})
	return k, status, decode(t, raw)
}

// usePasskey answers the factor step of c's waiting sign-in with k at
// origin.
func usePasskey(t *testing.T, c *webtest.Client, k *softkey.Key, origin string) (int, reply) {
	t.Helper()
	tok := c.CSRF(kit.FactorPath)
	status, opts := postJSON(t, c, kit.FactorPath+"/passkey/begin", tok, nil)
	if status != http.StatusOK {
		t.Fatalf("begin: %d %s", status, opts)
	}
	cred, err := k.Get(opts, "localhost", origin)
	if err != nil {
		t.Fatal(err)
	}
	status, raw := postJSON(t, c, kit.FactorPath+"/passkey", tok, map[string]any{"credential": json.RawMessage(cred)})
	return status, decode(t, raw)
}

// TestPasskeyAddedOnTheAccountPageIsTheSecondFactor: a passkey added on
// /account/factors is listed there by name, and the next password sign-in
// waits for it at the factor step, which offers it and then signs in as
// password+passkey.
func TestPasskeyAddedOnTheAccountPageIsTheSecondFactor(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	pk, origin := passkeyConsole(t, b)
	agent := b.Users[accounts.Agent]

	c := pk.Client(t)
	c.MustSignIn(agent)
	if page := c.Get("/account/factors").Text; !strings.Contains(page, "Add a passkey") {
		t.Fatal("the account page offers no \"Add a passkey\"")
	}
	tok := c.CSRF("/account/factors")
	if status, raw := postJSON(t, c, "/account/factors/passkey/begin", tok, map[string]string{"password": "wrong"}); status != http.StatusUnprocessableEntity ||
		decode(t, raw).Field != "password" {
		t.Fatalf("adding a passkey with a wrong password: %d %s, want 422 on password", status, raw)
	}
	if _, status, r := addPasskey(t, c, agent, "", origin); status != http.StatusUnprocessableEntity || r.Field != "name" {
		t.Fatalf("a passkey without a name: %d %+v, want 422 on name", status, r)
	}
	k, status, r := addPasskey(t, c, agent, "Work laptop", origin)
	if status != http.StatusOK || r.Next != "/account/factors" {
		t.Fatalf("add a passkey: %d %+v", status, r)
	}
	doc := c.Get("/account/factors").Doc(t)
	if got := doc.Find(`[data-testid="passkey"]`).Text(); !strings.Contains(got, "Work laptop") || !strings.Contains(got, "not used yet") {
		t.Fatalf("the account page lists %q", got)
	}

	s := pk.Client(t)
	signInToFactor(t, s, agent)
	if res := s.Get(kit.FactorPath); res.Doc(t).Find(`[data-testid="use-passkey"]`).Length() != 1 {
		t.Fatal("the factor step offers no passkey")
	}
	if res := s.Get("/queue"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != kit.FactorPath {
		t.Fatalf("a page before the passkey: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res := postCode(s, "000000"); res.StatusCode != http.StatusUnprocessableEntity ||
		res.Doc(t).Find(`[data-testid="use-passkey"]`).Length() != 1 {
		t.Fatalf("a wrong code: %d, and the passkey must still be offered", res.StatusCode)
	}
	status, r = usePasskey(t, s, k, origin)
	if status != http.StatusOK || r.Next != "/" {
		t.Fatalf("the passkey at the factor step: %d %+v", status, r)
	}
	if by := identifiedBy(t, s); by != "password+passkey" {
		t.Fatalf("identified by %q, want password+passkey", by)
	}
	if res := s.Get("/queue"); res.StatusCode != http.StatusOK {
		t.Fatalf("the queue after the passkey: %d", res.StatusCode)
	}

	form := s.Get("/account/factors").Doc(t).Find(`[data-testid="passkey"] form`)
	action, _ := form.Attr("action")
	rmTok, _ := form.Find(`input[name="_csrf"]`).Attr("value")
	if res := s.Post(action, url.Values{"_csrf": {rmTok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove the passkey: %d", res.StatusCode)
	}
	if n := s.Get("/account/factors").Doc(t).Find(`[data-testid="passkey"]`).Length(); n != 0 {
		t.Fatalf("%d passkeys listed after removing the only one", n)
	}
	if res := pk.Client(t).SignIn(agent); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") == kit.FactorPath {
		t.Fatalf("a password sign-in after the passkey went: %d to %q, want no factor step", res.StatusCode, res.Header.Get("Location"))
	}
}

// TestPasskeyFromAnotherOriginRefusedAtTheFactorStep: an assertion whose
// client data names another origin signs nobody in.
func TestPasskeyFromAnotherOriginRefusedAtTheFactorStep(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	pk, origin := passkeyConsole(t, b)
	agent := b.Users[accounts.Agent]
	c := pk.Client(t)
	c.MustSignIn(agent)
	k, status, _ := addPasskey(t, c, agent, "Phone", origin)
	if status != http.StatusOK {
		t.Fatalf("add: %d", status)
	}
	s := pk.Client(t)
	signInToFactor(t, s, agent)
	status, r := usePasskey(t, s, k, "http://evil.localhost"+strings.TrimPrefix(origin, "http://localhost"))
	if status != http.StatusUnprocessableEntity || r.Error == "" {
		t.Fatalf("an assertion from another origin: %d %+v, want 422", status, r)
	}
	if by := identifiedBy(t, s); by != "" {
		t.Fatalf("signed in as %q after a refused passkey", by)
	}
	if status, r = usePasskey(t, s, k, origin); status != http.StatusOK {
		t.Fatalf("the right origin after a refusal: %d %+v", status, r)
	}
}

// TestPasskeyEnrolledAtTheFactorStepOfARequiredRole: a person whose role
// requires a second factor may add a passkey at the factor step instead
// of an app, and is then signed in as password+passkey; once they have
// one, the enrolment routes refuse.
func TestPasskeyEnrolledAtTheFactorStepOfARequiredRole(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	pk, origin := passkeyConsole(t, b)
	if err := b.Factors.SetRequired(t.Context(), b.Users[accounts.Admin].User, controlplane.Identification{Method: controlplane.IdentifiedPassword}, accounts.Agent, true, nil); err != nil {
		t.Fatal(err)
	}
	agent := b.Users[accounts.Agent]
	c := pk.Client(t)
	signInToFactor(t, c, agent)
	if c.Get(kit.FactorPath).Doc(t).Find(`[data-testid="enrol-passkey"]`).Length() != 1 {
		t.Fatal("the enrolment step offers no passkey")
	}
	tok := c.CSRF(kit.FactorPath)
	status, opts := postJSON(t, c, kit.FactorPath+"/passkey/enrol/begin", tok, nil)
	if status != http.StatusOK {
		t.Fatalf("begin: %d %s", status, opts)
	}
	_, cred, err := softkey.Create(opts, "localhost", origin)
	if err != nil {
		t.Fatal(err)
	}
	status, raw := postJSON(t, c, kit.FactorPath+"/passkey/enrol", tok, map[string]any{"name": "Phone", "credential": json.RawMessage(cred)})
	// The first passkey comes with recovery codes, shown once on the
	// account page before the person goes on.
	if r := decode(t, raw); status != http.StatusOK || r.Next != "/account/factors" {
		t.Fatalf("enrol a passkey: %d %+v", status, r)
	}
	if by := identifiedBy(t, c); by != "password+passkey" {
		t.Fatalf("identified by %q, want password+passkey", by)
	}
	if n := c.Get("/account/factors").Doc(t).Find(`[data-testid="recovery-code"]`).Length(); n != 10 {
		t.Fatalf("the account page shows %d recovery codes after the first passkey, want 10", n)
	}
	if n := c.Get("/account/factors").Doc(t).Find(`[data-testid="recovery-code"]`).Length(); n != 0 {
		t.Fatalf("the recovery codes are shown again (%d)", n)
	}
	s := pk.Client(t)
	signInToFactor(t, s, agent)
	if status, raw := postJSON(t, s, kit.FactorPath+"/passkey/enrol/begin", s.CSRF(kit.FactorPath), nil); status != http.StatusConflict {
		t.Fatalf("enrolment with a passkey already: %d %s, want 409", status, raw)
	}
}
