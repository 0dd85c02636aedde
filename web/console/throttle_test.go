package console_test

import (
	"net/http"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"countersign/web/webtest"

	"countersign/internal/accounts"
)

func signInError(t *testing.T, res webtest.Response) string {
	t.Helper()
	return res.Doc(t).Find(`[data-testid="sign-in-error"]`).Text()
}

func TestUnknownUserAndWrongPasswordLookTheSame(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	c := b.Client(t)
	u := b.Users[accounts.Agent]
	wrong := c.SignIn(webtest.User{User: u.User, Password: "not the password"})
	unknown := c.SignIn(webtest.User{User: accounts.User{Email: "nobody@example.test"}, Password: "not the password"})
	if wrong.StatusCode != http.StatusUnauthorized || unknown.StatusCode != http.StatusUnauthorized {
		t.Fatalf("statuses %d and %d, want 401 for both", wrong.StatusCode, unknown.StatusCode)
	}
	if signInError(t, wrong) == "" || signInError(t, wrong) != signInError(t, unknown) {
		t.Errorf("messages differ: %q vs %q", signInError(t, wrong), signInError(t, unknown))
	}
}

// TestSignInThrottledPerAccountAndAddress: five failures for one account
// from one address make that address wait, even with the right password.
// (Without a trusted proxy X-Forwarded-For is ignored: all come from one.)
func TestSignInThrottledPerAccountAndAddress(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	u := b.Users[accounts.Manager]
	for i := range 5 {
		c := b.Client(t)
		c.Header.Set("X-Forwarded-For", "203.0.113."+string(rune('1'+i)))
		if res := c.SignIn(webtest.User{User: u.User, Password: "guess"}); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d, want 401", i+1, res.StatusCode)
		}
	}
	c := b.Client(t)
	res := c.SignIn(u) // even the right password waits now
	if res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("after 5 failures: %d, want 429", res.StatusCode)
	}
	if res.Header.Get("Retry-After") == "" || signInError(t, res) == "" {
		t.Errorf("429 without Retry-After or message")
	}
	b.Clock.Advance(15*time.Minute + time.Second)
	if res := c.SignIn(u); res.StatusCode != http.StatusSeeOther {
		t.Errorf("after the window: %d, want 303", res.StatusCode)
	}
}

// TestGuesserElsewhereDoesNotLockOutUser: an attacker who knows the e-mail
// fails again and again from one address; the real user, from another
// address, still signs in at once.
func TestGuesserElsewhereDoesNotLockOutUser(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithTrustedProxies(netip.MustParsePrefix("127.0.0.0/8")))
	u := b.Users[accounts.Agent]
	attacker := b.Client(t)
	attacker.Header.Set("X-Forwarded-For", "203.0.113.66")
	for i := range 10 {
		want := http.StatusUnauthorized
		if i >= 5 {
			want = http.StatusTooManyRequests
		}
		if res := attacker.SignIn(webtest.User{User: u.User, Password: "guess " + tag(i)}); res.StatusCode != want {
			t.Fatalf("attacker's guess %d: %d, want %d", i+1, res.StatusCode, want)
		}
	}
	user := b.Client(t)
	user.Header.Set("X-Forwarded-For", "198.51.100.23")
	if res := user.SignIn(u); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the real user from their own address: %d, want 303\n%s", res.StatusCode, signInError(t, res))
	}
	if res := attacker.SignIn(u); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the attacker's address, even with the password: %d, want 429", res.StatusCode)
	}
}

func TestSignInThrottledPerIPAndForwardedForIgnored(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	for i := range 12 {
		c := b.Client(t)
		// Without a trusted proxy this header must not change the address.
		c.Header.Set("X-Forwarded-For", "198.51.100."+tag(i))
		c.SignIn(webtest.User{User: accounts.User{Email: "guess" + tag(i) + "@example.test"}, Password: "x"})
	}
	c := b.Client(t)
	c.Header.Set("X-Forwarded-For", "192.0.2.77")
	if res := c.SignIn(b.Users[accounts.Agent]); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("13th attempt from one address: %d, want 429", res.StatusCode)
	}
}

func TestForwardedForHonouredFromTrustedProxy(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithTrustedProxies(netip.MustParsePrefix("127.0.0.0/8")))
	for i := range 12 {
		c := b.Client(t)
		c.Header.Set("X-Forwarded-For", "198.51.100.9")
		c.SignIn(webtest.User{User: accounts.User{Email: "guess" + tag(i) + "@example.test"}, Password: "x"})
	}
	c := b.Client(t)
	c.Header.Set("X-Forwarded-For", "198.51.100.10")
	if res := c.SignIn(b.Users[accounts.Agent]); res.StatusCode != http.StatusSeeOther {
		t.Errorf("another client behind the trusted proxy: %d, want 303", res.StatusCode)
	}
	c = b.Client(t)
	c.Header.Set("X-Forwarded-For", "198.51.100.9")
	res := c.Post("/sign-in", url.Values{"_csrf": {c.CSRF("/sign-in")}, "email": {"x@example.test"}, "password": {"x"}})
	if res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the throttled client behind the proxy: %d, want 429", res.StatusCode)
	}
}

func tag(i int) string { return string(rune('a'+i%26)) + string(rune('0'+i/26)) }
