package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/assistants"
)

func TestAdminCreatesDisablesAndChangesRole(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.client(t)
	admin.mustSignIn(b.users[accounts.Admin])
	tok := admin.csrf("/admin/users")

	// Bad input re-renders with the values and each field's message.
	res := admin.post("/admin/users", url.Values{"_csrf": {tok}, "email": {"not-an-email"}, "name": {"Jo"}, "role": {"pilot"}, "password": {"short"}})
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("bad user: %d, want 422", res.StatusCode)
	}
	doc := res.doc(t)
	for _, f := range []string{"email", "role", "password"} {
		if doc.Find(`[data-testid="`+f+`-error"]`).Length() != 1 {
			t.Errorf("no message for %s", f)
		}
	}
	if v, _ := doc.Find("#name").Attr("value"); v != "Jo" {
		t.Errorf("name not kept: %q", v)
	}

	res = admin.post("/admin/users", url.Values{"_csrf": {tok}, "email": {"New.Agent@Example.test"}, "name": {"New Agent"},
		"role": {"agent"}, "password": {"twelve chars ok"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d\n%s", res.StatusCode, res.body)
	}
	newbie := b.client(t)
	u := testUser{User: accounts.User{Email: "new.agent@example.test"}, Password: "twelve chars ok"}
	newbie.mustSignIn(u)
	created, err := b.store.UserByEmail(t.Context(), "new.agent@example.test")
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(created.ID, 10)

	// Duplicate e-mail is a field error, not a crash.
	res = admin.post("/admin/users", url.Values{"_csrf": {tok}, "email": {"new.agent@example.test"}, "name": {"Again"},
		"role": {"agent"}, "password": {"twelve chars ok"}})
	if res.StatusCode != http.StatusUnprocessableEntity || res.doc(t).Find(`[data-testid="email-error"]`).Length() != 1 {
		t.Errorf("duplicate e-mail: %d", res.StatusCode)
	}

	if res := admin.post("/admin/users/"+id+"/role", url.Values{"_csrf": {tok}, "role": {"manager"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("change role: %d", res.StatusCode)
	}
	got, _ := b.accounts.User(t.Context(), created.ID)
	if got.Role != accounts.Manager {
		t.Errorf("role = %s, want manager", got.Role)
	}

	// Disabling asks first, naming the person and what ends.
	confirm := admin.get("/admin/users/" + id + "/disable")
	if ends := confirm.doc(t).Find(`[data-testid="confirm-ends"]`).Text(); confirm.StatusCode != http.StatusOK ||
		!strings.Contains(ends, "new.agent@example.test") || !strings.Contains(ends, "signed out everywhere") {
		t.Errorf("disable confirmation: %d %q", confirm.StatusCode, ends)
	}
	if res := admin.post("/admin/users/"+id+"/disable", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusOK {
		t.Errorf("an unconfirmed disable: %d, want the confirmation page", res.StatusCode)
	}
	if res := newbie.get("/"); res.StatusCode != http.StatusOK {
		t.Errorf("an unconfirmed disable signed the user out: %d", res.StatusCode)
	}
	if res := admin.post("/admin/users/"+id+"/disable", url.Values{"_csrf": {tok}, "confirm": {"yes"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("disable: %d", res.StatusCode)
	}
	if res := newbie.get("/"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("disabled user's open session: %d, want 303 to sign-in", res.StatusCode)
	}
	if res := b.client(t).signIn(u); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("disabled user signing in: %d, want 401", res.StatusCode)
	}
	if res := admin.post("/admin/users/"+id+"/enable", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("enable: %d", res.StatusCode)
	}
	b.client(t).mustSignIn(u)

	// An admin cannot disable or demote themself.
	self := strconv.FormatInt(b.users[accounts.Admin].ID, 10)
	admin.post("/admin/users/"+self+"/disable", url.Values{"_csrf": {tok}, "confirm": {"yes"}})
	admin.post("/admin/users/"+self+"/role", url.Values{"_csrf": {tok}, "role": {"customer"}})
	me, _ := b.accounts.User(t.Context(), b.users[accounts.Admin].ID)
	if me.Disabled() || me.Role != accounts.Admin {
		t.Errorf("admin changed themself: disabled=%v role=%s", me.Disabled(), me.Role)
	}
}

// TestAdminConfirmPagesThatRefuseWriteNothing: a confirmation page that
// cannot offer its change (disabling oneself, an assistant disabled
// already) says why on the page, with the way back: a GET writes no
// session (no flash, no Set-Cookie) and offers no button.
func TestAdminConfirmPagesThatRefuseWriteNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ab := &apiBundle{testBundle: b, asst: assistants.New(b.store, b.cp, b.web.Registry(), b.clock.Now)}
	ab.a, _ = ab.newAssistant(t, "idle-bot")
	if err := ab.asst.SetDisabled(t.Context(), ab.a.ID, true); err != nil {
		t.Fatal(err)
	}
	admin := b.client(t)
	admin.mustSignIn(b.users[accounts.Admin])
	for _, tc := range []struct{ path, want string }{
		{"/admin/users/" + strconv.FormatInt(b.users[accounts.Admin].ID, 10) + "/disable", "You cannot disable your own account; ask another admin."},
		{"/admin/assistants/" + ab.a.ID + "/disable", "idle-bot is disabled already."},
	} {
		res := admin.get(tc.path)
		doc := res.doc(t)
		if res.StatusCode/100 != 4 || res.Header.Get("Set-Cookie") != "" || strings.TrimSpace(doc.Find(`[data-testid="confirm-refused"]`).Text()) != tc.want ||
			doc.Find(`[data-testid="confirm-end"]`).Length() != 0 || doc.Find(`[data-testid="confirm-back"]`).Length() != 1 {
			t.Errorf("GET %s: %d, Set-Cookie %q, says %q; want a 4xx page saying %q with only the way back and no cookie",
				tc.path, res.StatusCode, res.Header.Get("Set-Cookie"), doc.Find(`[data-testid="confirm-refused"]`).Text(), tc.want)
		}
	}
}
