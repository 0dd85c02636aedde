package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/web/kit"
	"countersign/web/webtest"
)

// setUpApp sets up an authenticator app for the signed-in person of c on
// the account page and returns its secret.
func setUpApp(t *testing.T, b *webtest.Stack, c *webtest.Client, password string) string {
	t.Helper()
	tok := c.CSRF("/account/factors")
	res := c.Post("/account/factors/totp", url.Values{"_csrf": {tok}, "password": {password}})
	secret := strings.ReplaceAll(res.Doc(t).Find(`[data-testid="factor-secret"]`).Text(), " ", "")
	if res.StatusCode != http.StatusOK || secret == "" {
		t.Fatalf("set up: %d\n%s", res.StatusCode, res.Text)
	}
	if res := c.Post("/account/factors/totp/confirm", url.Values{"_csrf": {tok}, "code": {totpCode(t, b, secret)}}); res.StatusCode != http.StatusOK {
		t.Fatalf("confirm: %d\n%s", res.StatusCode, res.Text)
	}
	b.Clock.Advance(30 * time.Second)
	return secret
}

// eventsOf counts userID's events of action.
func eventsOf(t *testing.T, b *webtest.Stack, userID int64, action controlplane.EventAction) int {
	t.Helper()
	var n int
	if err := b.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM events WHERE actor_kind = 'user'
		AND actor_id = $1::bigint::text AND action = $2`, userID, string(action)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTOTPRemovedOnTheAccountPage: the app is removed after the password
// again (a wrong one is 422), never as the last factor of a role that
// requires one, and set up again on a new phone; each change is audited.
func TestTOTPRemovedOnTheAccountPage(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	agent := b.Users[accounts.Agent]
	c := b.Client(t)
	c.MustSignIn(agent)
	secret := setUpApp(t, b, c, agent.Password)
	if c.Get("/account/factors").Doc(t).Find(`[data-testid="remove-totp"]`).Length() != 1 {
		t.Fatal("the account page offers no way to remove the app")
	}
	remove := func(password string) webtest.Response {
		return c.Post("/account/factors/totp/remove", url.Values{"_csrf": {c.CSRF("/account/factors")}, "password": {password}})
	}
	if res := remove("not the password"); res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("removal with a wrong password: %d, want 422", res.StatusCode)
	}
	if err := b.Factors.SetRequired(t.Context(), b.Users[accounts.Admin].User, controlplane.Identification{Method: "password"}, accounts.Agent, true, nil); err != nil {
		t.Fatal(err)
	}
	// Requiring a factor ended the session: the password, then the code.
	signInToFactor(t, c, agent)
	if res := postCode(c, totpCode(t, b, secret)); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the code: %d", res.StatusCode)
	}
	if res := remove(agent.Password); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("removal of a required role's last factor: %d", res.StatusCode)
	}
	if st, _ := b.Factors.StatusOf(t.Context(), agent.ID); !st.TOTP {
		t.Fatal("the last factor of a required role was removed")
	}
	if err := b.Factors.SetRequired(t.Context(), b.Users[accounts.Admin].User, controlplane.Identification{Method: "password"}, accounts.Agent, false, nil); err != nil {
		t.Fatal(err)
	}
	if res := remove(agent.Password); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("removal: %d\n%s", res.StatusCode, res.Text)
	}
	if st, _ := b.Factors.StatusOf(t.Context(), agent.ID); st.Any() {
		t.Fatalf("after the removal: %+v", st)
	}
	if n := eventsOf(t, b, agent.ID, controlplane.EventFactorRemoved); n != 1 {
		t.Fatalf("%d factor.removed events, want 1", n)
	}
	setUpApp(t, b, c, agent.Password) // the new phone
	if n := eventsOf(t, b, agent.ID, controlplane.EventFactorAdded); n != 2 {
		t.Fatalf("%d factor.added events after two set-ups, want 2", n)
	}
}

// TestAdminResetsSomeonesSecondFactor: for a person who lost their phone,
// an admin (only an admin, with the CSRF token, after a confirmation
// page) removes their factors: the person is signed out, the reset is
// audited by the admin naming the person, and their next sign-in of a
// role that requires a factor sets one up.
func TestAdminResetsSomeonesSecondFactor(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	agent, admin := b.Users[accounts.Agent], b.Users[accounts.Admin]
	a := b.Client(t)
	a.MustSignIn(agent)
	setUpApp(t, b, a, agent.Password)
	path := "/admin/users/" + webtest.Itoa64(agent.ID) + "/factors/reset"

	m := b.Client(t)
	m.MustSignIn(b.Users[accounts.Manager])
	if res := m.Post(path, url.Values{"_csrf": {m.CSRF("/")}, "confirm": {"yes"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a manager's reset: %d, want 403", res.StatusCode)
	}
	c := b.Client(t)
	c.MustSignIn(admin)
	if c.Get("/admin/users").Doc(t).Find(`[data-testid="user-`+webtest.Itoa64(agent.ID)+`"] [data-testid="reset-factors"]`).Length() != 1 {
		t.Fatal("the users page offers no reset for a person with an app")
	}
	if res := c.Post(path, url.Values{"confirm": {"yes"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a reset without the CSRF token: %d, want 403", res.StatusCode)
	}
	if res := c.Post(path, url.Values{"_csrf": {c.CSRF("/admin/users")}}); res.StatusCode != http.StatusOK ||
		res.Doc(t).Find(`[data-testid="admin-confirm"]`).Length() != 1 {
		t.Fatalf("a reset without confirm=yes: %d, want the confirmation page", res.StatusCode)
	}
	if st, _ := b.Factors.StatusOf(t.Context(), agent.ID); !st.TOTP {
		t.Fatal("the confirmation page reset the factors")
	}
	if res := c.Post(path, url.Values{"_csrf": {c.CSRF("/admin/users")}, "confirm": {"yes"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the reset: %d\n%s", res.StatusCode, res.Text)
	}
	if st, _ := b.Factors.StatusOf(t.Context(), agent.ID); st.Any() || st.RecoveryLeft != 0 {
		t.Fatalf("after the reset: %+v", st)
	}
	if res := a.Get("/"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/sign-in") {
		t.Fatalf("the person's session after the reset: %d to %q, want the sign-in", res.StatusCode, res.Header.Get("Location"))
	}
	if n := eventsOf(t, b, admin.ID, controlplane.EventFactorReset); n != 1 {
		t.Fatalf("%d factor.reset events by the admin, want 1", n)
	}
	if err := b.Factors.SetRequired(t.Context(), admin.User, controlplane.Identification{Method: "password"}, accounts.Agent, true, nil); err != nil {
		t.Fatal(err)
	}
	next := b.Client(t)
	signInToFactor(t, next, agent)
	if next.Get(kit.FactorPath).Doc(t).Find(`[data-testid="factor-enrol-needed"]`).Length() != 1 {
		t.Fatal("the next sign-in does not set up a factor")
	}
}
