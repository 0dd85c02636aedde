package kit_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"countersign/internal/accounts"
	"countersign/internal/demo"
)

func TestSignInLandsOnHomeAndSignOutEndsSession(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	for _, role := range accounts.Roles {
		c := b.Client(t)
		res := c.SignIn(b.Users[role])
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
			t.Fatalf("%s sign-in: %d to %q, want 303 to /", role, res.StatusCode, res.Header.Get("Location"))
		}
		home := c.Get("/")
		if home.StatusCode != http.StatusOK {
			t.Fatalf("%s home: %d", role, home.StatusCode)
		}
		if got := home.Doc(t).Find(`[data-testid="home-role"] strong`).Text(); got != role.Label() {
			t.Errorf("%s home says role %q, want %q", role, got, role.Label())
		}

		tok, _ := home.Doc(t).Find(`form[action="/sign-out"] input[name="_csrf"]`).Attr("value")
		out := c.Post("/sign-out", url.Values{"_csrf": {tok}})
		if out.StatusCode != http.StatusSeeOther || !strings.HasPrefix(out.Header.Get("Location"), "/sign-in") {
			t.Fatalf("%s sign-out: %d to %q", role, out.StatusCode, out.Header.Get("Location"))
		}
		if res := c.Get("/"); res.StatusCode != http.StatusSeeOther {
			t.Errorf("%s after sign-out: GET / = %d, want 303 to sign-in", role, res.StatusCode)
		}
	}
}

func TestCopiedCookieIsUselessAfterSignOut(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	stolen := *c.SessionCookie()

	thief := b.Client(t)
	thief.Header.Set("Cookie", stolen.Name+"="+stolen.Value)
	if res := thief.Get("/"); res.StatusCode != http.StatusOK {
		t.Fatalf("copied cookie before sign-out: %d, want 200 (the copy must work until then)", res.StatusCode)
	}

	c.Post("/sign-out", url.Values{"_csrf": {c.CSRF("/")}})
	if res := thief.Get("/"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("copied cookie after sign-out: %d, want 303 to sign-in", res.StatusCode)
	}
}

func TestSessionIDChangesAtSignIn(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Customer])
	before := c.SessionCookie()
	// Signing in again, as someone else, from a browser that has a session.
	u := b.Users[accounts.Agent]
	if res := c.Post("/sign-in", url.Values{"_csrf": {c.CSRF("/")}, "email": {u.Email}, "password": {u.Password}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("second sign-in: %d, want 303", res.StatusCode)
	}
	after := c.SessionCookie()
	if after == nil || after.Value == before.Value {
		t.Fatalf("session cookie did not change at sign-in")
	}
	// An id known before sign-in (planted, or copied) is worthless after it.
	planted := b.Client(t)
	planted.Header.Set("Cookie", before.Name+"="+before.Value)
	if res := planted.Get("/"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("pre-sign-in id after sign-in: %d, want 303", res.StatusCode)
	}
}

// TestCookielessVisitsStoreNoSession: the sign-in page, fetched again and
// again without cookies (as bots do), adds no session rows; its form still
// works, its token coming from a signed cookie instead.
func TestCookielessVisitsStoreNoSession(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	before := countSessions(t, b)
	for range 20 {
		res := b.Client(t).Get("/sign-in")
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
		b.Client(t).Get(path)
	}
	if got := countSessions(t, b); got != before {
		t.Errorf("sessions: %d after cookieless visits, want %d", got, before)
	}
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	if got := countSessions(t, b); got != before+1 {
		t.Errorf("sessions after one sign-in: %d, want %d", got, before+1)
	}
}

func countSessions(t *testing.T, b *webtest.Stack) int {
	t.Helper()
	var n int
	if err := b.Store.Pool().QueryRow(t.Context(), `SELECT count(*) FROM sessions`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestIdleAndAbsoluteTimeouts(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])

	// Activity every 20 minutes keeps the session alive past the idle limit…
	for range 3 {
		b.Clock.Advance(20 * time.Minute)
		if res := c.Get("/"); res.StatusCode != http.StatusOK {
			t.Fatalf("active session ended early: %d", res.StatusCode)
		}
	}
	// …but 31 idle minutes end it.
	b.Clock.Advance(31 * time.Minute)
	if res := c.Get("/"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("after 31 idle minutes: %d, want 303", res.StatusCode)
	}

	c.MustSignIn(b.Users[accounts.Manager])
	for range 12*3 + 1 { // 12h10m of requests every 20 minutes
		b.Clock.Advance(20 * time.Minute)
		c.Get("/")
	}
	if res := c.Get("/"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("after the absolute timeout: %d, want 303", res.StatusCode)
	}
}

func TestPasswordChangeEndsOtherSessions(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	u := b.Users[accounts.Agent]
	laptop, phone := b.Client(t), b.Client(t)
	laptop.MustSignIn(u)
	phone.MustSignIn(u)

	res := laptop.Post("/account/password", url.Values{"_csrf": {laptop.CSRF("/account/password")},
		"current": {u.Password}, "new": {"a brand new passphrase"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("change password: %d\n%s", res.StatusCode, res.Text)
	}
	if res := laptop.Get("/"); res.StatusCode != http.StatusOK {
		t.Errorf("the session that changed the password: %d, want 200", res.StatusCode)
	}
	if res := phone.Get("/"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("another session after password change: %d, want 303", res.StatusCode)
	}
	u.Password = "a brand new passphrase"
	b.Client(t).MustSignIn(u)
}

func TestPasswordChangeRejectsWrongCurrentAndShortNew(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	res := c.Post("/account/password", url.Values{"_csrf": {c.CSRF("/account/password")}, "current": {"nope"}, "new": {"short"}})
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422", res.StatusCode)
	}
	doc := res.Doc(t)
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
	b := webtest.New(t)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])

	rotated := [][]byte{[]byte("a new key a new key a new key 32"), []byte("a new enc key a new enc key 32b!")}
	rotated = append(rotated, webtest.SessionKeys...)
	b2 := &webtest.Stack{Users: b.Users}
	ws := webServerSharing(t, b, rotated)
	b2.Server = ws
	c2 := b2.Client(t)
	ck := c.SessionCookie()
	c2.Header.Set("Cookie", ck.Name+"="+ck.Value)
	if res := c2.Get("/"); res.StatusCode != http.StatusOK {
		t.Errorf("cookie signed with the previous key: %d, want 200", res.StatusCode)
	}
}

// TestPasswordChangeCurrentPasswordThrottled: guessing the current
// password from a signed-in session is limited like sign-in guessing.
func TestPasswordChangeCurrentPasswordThrottled(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	u := b.Users[accounts.Agent]
	c := b.Client(t)
	c.MustSignIn(u)
	change := func(current string) webtest.Response {
		return c.Post("/account/password", url.Values{"_csrf": {c.CSRF("/account/password")},
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
	if res.Doc(t).Find(`[data-testid="current-error"]`).Length() != 1 {
		t.Errorf("429 without the reason next to the field")
	}
}

// TestSessionSurvivesRestart: a console restarted over the same database
// with the same keys keeps everyone signed in. The restart runs what a demo
// start runs (ensuring the demo users and their passwords), which used to
// reset every password and so end every session.
func TestSessionSurvivesRestart(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	var creds demo.Credentials
	if err := demo.EnsureUsers(t.Context(), b.Accounts, &creds); err != nil {
		t.Fatal(err)
	}
	c := b.Client(t)
	for _, u := range creds.Users {
		if u.Role == accounts.Agent {
			c.MustSignIn(webtest.User{User: accounts.User{Email: u.Email, Role: u.Role}, Password: u.Password})
		}
	}
	cookie := c.SessionCookie()

	// The second start: same data, same keys, a new server.
	again, err := demo.Load(writeCreds(t, creds))
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.EnsureUsers(t.Context(), b.Accounts, &again); err != nil {
		t.Fatal(err)
	}
	restarted := &webtest.Stack{Server: webServerSharing(t, b, webtest.SessionKeys)}
	c2 := restarted.Client(t)
	c2.Header.Set("Cookie", cookie.Name+"="+cookie.Value)
	if res := c2.Get("/"); res.StatusCode != http.StatusOK {
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

// webServerSharing serves a second console over b's database with other
// session keys, as after a key rotation.
func webServerSharing(t *testing.T, b *webtest.Stack, keyPairs [][]byte) *httptest.Server {
	t.Helper()
	return b.ServeAnother(t, webtest.WithSessionKeys(keyPairs...))
}
