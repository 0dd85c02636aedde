package web_test

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/demo"
)

func TestSignInLandsOnHomeAndSignOutEndsSession(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, role := range accounts.Roles {
		c := b.client(t)
		res := c.signIn(b.users[role])
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
			t.Fatalf("%s sign-in: %d to %q, want 303 to /", role, res.StatusCode, res.Header.Get("Location"))
		}
		home := c.get("/")
		if home.StatusCode != http.StatusOK {
			t.Fatalf("%s home: %d", role, home.StatusCode)
		}
		if got := home.doc(t).Find(`[data-testid="home-role"] strong`).Text(); got != role.Label() {
			t.Errorf("%s home says role %q, want %q", role, got, role.Label())
		}

		tok, _ := home.doc(t).Find(`form[action="/sign-out"] input[name="_csrf"]`).Attr("value")
		out := c.post("/sign-out", url.Values{"_csrf": {tok}})
		if out.StatusCode != http.StatusSeeOther || !strings.HasPrefix(out.Header.Get("Location"), "/sign-in") {
			t.Fatalf("%s sign-out: %d to %q", role, out.StatusCode, out.Header.Get("Location"))
		}
		if res := c.get("/"); res.StatusCode != http.StatusSeeOther {
			t.Errorf("%s after sign-out: GET / = %d, want 303 to sign-in", role, res.StatusCode)
		}
	}
}

func TestCopiedCookieIsUselessAfterSignOut(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	stolen := *c.sessionCookie()

	thief := b.client(t)
	thief.header.Set("Cookie", stolen.Name+"="+stolen.Value)
	if res := thief.get("/"); res.StatusCode != http.StatusOK {
		t.Fatalf("copied cookie before sign-out: %d, want 200 (the copy must work until then)", res.StatusCode)
	}

	c.post("/sign-out", url.Values{"_csrf": {c.csrf("/")}})
	if res := thief.get("/"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("copied cookie after sign-out: %d, want 303 to sign-in", res.StatusCode)
	}
}

func TestSessionIDChangesAtSignIn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Customer])
	before := c.sessionCookie()
	// Signing in again, as someone else, from a browser that has a session.
	u := b.users[accounts.Agent]
	if res := c.post("/sign-in", url.Values{"_csrf": {c.csrf("/")}, "email": {u.Email}, "password": {u.Password}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("second sign-in: %d, want 303", res.StatusCode)
	}
	after := c.sessionCookie()
	if after == nil || after.Value == before.Value {
		t.Fatalf("session cookie did not change at sign-in")
	}
	// An id known before sign-in (planted, or copied) is worthless after it.
	planted := b.client(t)
	planted.header.Set("Cookie", before.Name+"="+before.Value)
	if res := planted.get("/"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("pre-sign-in id after sign-in: %d, want 303", res.StatusCode)
	}
}

// TestCookielessVisitsStoreNoSession: the sign-in page, fetched again and
// again without cookies (as bots do), adds no session rows; its form still
// works, its token coming from a signed cookie instead.
func TestCookielessVisitsStoreNoSession(t *testing.T) {
	t.Parallel()
	b := setup(t)
	before := countSessions(t, b)
	for range 20 {
		res := b.client(t).get("/sign-in")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET /sign-in: %d", res.StatusCode)
		}
		for _, ck := range res.Cookies() {
			if ck.Name == "cs_session" {
				t.Errorf("the sign-in page set a session cookie")
			}
		}
	}
	for _, path := range []string{"/", "/tasks", "/no-such-page", "/sign-in?signed_out=1"} {
		b.client(t).get(path)
	}
	if got := countSessions(t, b); got != before {
		t.Errorf("sessions: %d after cookieless visits, want %d", got, before)
	}
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	if got := countSessions(t, b); got != before+1 {
		t.Errorf("sessions after one sign-in: %d, want %d", got, before+1)
	}
}

func countSessions(t *testing.T, b *testBundle) int {
	t.Helper()
	var n int
	if err := b.store.Pool().QueryRow(t.Context(), `SELECT count(*) FROM sessions`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestIdleAndAbsoluteTimeouts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Manager])

	// Activity every 20 minutes keeps the session alive past the idle limit…
	for range 3 {
		b.clock.Advance(20 * time.Minute)
		if res := c.get("/"); res.StatusCode != http.StatusOK {
			t.Fatalf("active session ended early: %d", res.StatusCode)
		}
	}
	// …but 31 idle minutes end it.
	b.clock.Advance(31 * time.Minute)
	if res := c.get("/"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("after 31 idle minutes: %d, want 303", res.StatusCode)
	}

	c.mustSignIn(b.users[accounts.Manager])
	for range 12*3 + 1 { // 12h10m of requests every 20 minutes
		b.clock.Advance(20 * time.Minute)
		c.get("/")
	}
	if res := c.get("/"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("after the absolute timeout: %d, want 303", res.StatusCode)
	}
}

func TestPasswordChangeEndsOtherSessions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	u := b.users[accounts.Agent]
	laptop, phone := b.client(t), b.client(t)
	laptop.mustSignIn(u)
	phone.mustSignIn(u)

	res := laptop.post("/account/password", url.Values{"_csrf": {laptop.csrf("/account/password")},
		"current": {u.Password}, "new": {"a brand new passphrase"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("change password: %d\n%s", res.StatusCode, res.body)
	}
	if res := laptop.get("/"); res.StatusCode != http.StatusOK {
		t.Errorf("the session that changed the password: %d, want 200", res.StatusCode)
	}
	if res := phone.get("/"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("another session after password change: %d, want 303", res.StatusCode)
	}
	u.Password = "a brand new passphrase"
	b.client(t).mustSignIn(u)
}

func TestPasswordChangeRejectsWrongCurrentAndShortNew(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	res := c.post("/account/password", url.Values{"_csrf": {c.csrf("/account/password")}, "current": {"nope"}, "new": {"short"}})
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422", res.StatusCode)
	}
	doc := res.doc(t)
	for _, field := range []string{"current", "new"} {
		if doc.Find(`[data-testid="`+field+`-error"]`).Length() != 1 {
			t.Errorf("no error shown for %s", field)
		}
		if v, _ := doc.Find("#" + field).Attr("aria-invalid"); v != "true" {
			t.Errorf("#%s aria-invalid = %q, want true", field, v)
		}
	}
}

func TestOldSessionKeyStillAccepted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])

	rotated := [][]byte{[]byte("a new key a new key a new key 32"), []byte("a new enc key a new enc key 32b!")}
	rotated = append(rotated, testKey...)
	b2 := &testBundle{users: b.users}
	ws := webServerSharing(t, b, rotated)
	b2.srv = ws
	c2 := b2.client(t)
	ck := c.sessionCookie()
	c2.header.Set("Cookie", ck.Name+"="+ck.Value)
	if res := c2.get("/"); res.StatusCode != http.StatusOK {
		t.Errorf("cookie signed with the previous key: %d, want 200", res.StatusCode)
	}
}

// TestPasswordChangeCurrentPasswordThrottled: guessing the current
// password from a signed-in session is limited like sign-in guessing.
func TestPasswordChangeCurrentPasswordThrottled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	u := b.users[accounts.Agent]
	c := b.client(t)
	c.mustSignIn(u)
	change := func(current string) response {
		return c.post("/account/password", url.Values{"_csrf": {c.csrf("/account/password")},
			"current": {current}, "new": {"a brand new passphrase"}})
	}
	for i := range 5 {
		if res := change("guess " + string(rune('a'+i))); res.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("wrong current password %d: %d, want 422", i+1, res.StatusCode)
		}
	}
	res := change(u.Password)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("after 5 wrong current passwords: %d (Retry-After %q), want 429 with Retry-After",
			res.StatusCode, res.Header.Get("Retry-After"))
	}
	if res.doc(t).Find(`[data-testid="current-error"]`).Length() != 1 {
		t.Errorf("429 without the reason next to the field")
	}
}

// TestSessionSurvivesRestart: a console restarted over the same database
// with the same keys keeps everyone signed in. The restart runs what a demo
// start runs (ensuring the demo users and their passwords), which used to
// reset every password and so end every session.
func TestSessionSurvivesRestart(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var creds demo.Credentials
	if err := demo.EnsureUsers(t.Context(), b.accounts, &creds); err != nil {
		t.Fatal(err)
	}
	c := b.client(t)
	for _, u := range creds.Users {
		if u.Role == accounts.Agent {
			c.mustSignIn(testUser{User: accounts.User{Email: u.Email, Role: u.Role}, Password: u.Password})
		}
	}
	cookie := c.sessionCookie()

	// The second start: same data, same keys, a new server.
	again, err := demo.Load(writeCreds(t, creds))
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.EnsureUsers(t.Context(), b.accounts, &again); err != nil {
		t.Fatal(err)
	}
	restarted := &testBundle{srv: webServerSharing(t, b, testKey)}
	c2 := restarted.client(t)
	c2.header.Set("Cookie", cookie.Name+"="+cookie.Value)
	if res := c2.get("/"); res.StatusCode != http.StatusOK {
		t.Errorf("the session after a restart: %d, want 200", res.StatusCode)
	}
}

func writeCreds(t *testing.T, creds demo.Credentials) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "demo-credentials")
	if err := creds.Save(path); err != nil {
		t.Fatal(err)
	}
	return path
}
