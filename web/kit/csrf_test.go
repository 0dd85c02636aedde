package kit_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
)

func TestStateChangingRequestsNeedTokenAndSameOrigin(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Admin])
	tok := c.CSRF("/admin/users")
	newUser := func(email string) url.Values {
		return url.Values{"email": {email}, "name": {"Eve"}, "role": {"admin"}, "password": {"long enough password"}}
	}

	cases := []struct {
		name    string
		form    url.Values
		headers map[string]string
	}{
		{"no token", newUser("a@example.test"), nil},
		{"wrong token", withToken(newUser("b@example.test"), "forged"), nil},
		{"cross-site fetch metadata", withToken(newUser("c@example.test"), tok), map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"foreign origin", withToken(newUser("d@example.test"), tok), map[string]string{"Sec-Fetch-Site": "", "Origin": "https://evil.example"}},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest(http.MethodPost, b.Server.URL+"/admin/users", strings.NewReader(tc.form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", b.Server.URL)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		for k, v := range tc.headers {
			if v == "" {
				req.Header.Del(k)
			} else {
				req.Header.Set(k, v)
			}
		}
		res := c.Do(req)
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", tc.name, res.StatusCode)
		}
	}
	users, err := b.Accounts.Users(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != len(accounts.Roles) {
		t.Errorf("a refused request created a user: %d users, want %d", len(users), len(accounts.Roles))
	}

	// The same request with the token from the same origin goes through.
	if res := c.Post("/admin/users", withToken(newUser("ok@example.test"), tok)); res.StatusCode != http.StatusSeeOther {
		t.Errorf("valid request: %d, want 303\n%s", res.StatusCode, res.Text)
	}
}

func TestSignInFormNeedsToken(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	u := b.Users[accounts.Agent]
	res := b.Client(t).Post("/sign-in", url.Values{"email": {u.Email}, "password": {u.Password}})
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("sign-in without a token: %d, want 403", res.StatusCode)
	}
}

// TestSignInTokenBelongsToItsCookie: without a session the token is
// checked against the visitor's own signed CSRF cookie, so another
// visitor's token, a made-up cookie or a missing one are refused.
func TestSignInTokenBelongsToItsCookie(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	u := b.Users[accounts.Agent]
	creds := url.Values{"email": {u.Email}, "password": {u.Password}}

	attacker := b.Client(t)
	attackerTok := attacker.CSRF("/sign-in")
	victim := b.Client(t)
	victim.CSRF("/sign-in")
	if res := victim.Post("/sign-in", withToken(creds, attackerTok)); res.StatusCode != http.StatusForbidden {
		t.Errorf("another visitor's token: %d, want 403", res.StatusCode)
	}

	forged := b.Client(t)
	forged.Header.Set("Cookie", "cs_csrf=made-up")
	if res := forged.Post("/sign-in", withToken(creds, "made-up")); res.StatusCode != http.StatusForbidden {
		t.Errorf("made-up cookie and token: %d, want 403", res.StatusCode)
	}

	bare := b.Client(t)
	if res := bare.Post("/sign-in", withToken(creds, attackerTok)); res.StatusCode != http.StatusForbidden {
		t.Errorf("a token without its cookie: %d, want 403", res.StatusCode)
	}

	// The visitor's own token and cookie sign in; the CSRF cookie goes.
	c := b.Client(t)
	if res := c.Post("/sign-in", withToken(creds, c.CSRF("/sign-in"))); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("own token: %d, want 303", res.StatusCode)
	}
	srv, _ := url.Parse(b.Server.URL)
	for _, ck := range c.HTTP.Jar.Cookies(srv) {
		if ck.Name == "cs_csrf" {
			t.Errorf("the anonymous CSRF cookie outlived sign-in")
		}
	}
}

func withToken(v url.Values, tok string) url.Values {
	v.Set("_csrf", tok)
	return v
}
