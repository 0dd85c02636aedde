package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/internal/accounts"
)

func TestStateChangingRequestsNeedTokenAndSameOrigin(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Admin])
	tok := c.csrf("/admin/users")
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
		req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/admin/users", strings.NewReader(tc.form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", b.srv.URL)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		for k, v := range tc.headers {
			if v == "" {
				req.Header.Del(k)
			} else {
				req.Header.Set(k, v)
			}
		}
		res := c.do(req)
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", tc.name, res.StatusCode)
		}
	}
	users, err := b.accounts.Users(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != len(accounts.Roles) {
		t.Errorf("a refused request created a user: %d users, want %d", len(users), len(accounts.Roles))
	}

	// The same request with the token from the same origin goes through.
	if res := c.post("/admin/users", withToken(newUser("ok@example.test"), tok)); res.StatusCode != http.StatusSeeOther {
		t.Errorf("valid request: %d, want 303\n%s", res.StatusCode, res.body)
	}
}

func TestSignInFormNeedsToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	u := b.users[accounts.Agent]
	res := b.client(t).post("/sign-in", url.Values{"email": {u.Email}, "password": {u.Password}})
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("sign-in without a token: %d, want 403", res.StatusCode)
	}
}

// TestSignInTokenBelongsToItsCookie: without a session the token is
// checked against the visitor's own signed CSRF cookie, so another
// visitor's token, a made-up cookie or a missing one are refused.
func TestSignInTokenBelongsToItsCookie(t *testing.T) {
	t.Parallel()
	b := setup(t)
	u := b.users[accounts.Agent]
	creds := url.Values{"email": {u.Email}, "password": {u.Password}}

	attacker := b.client(t)
	attackerTok := attacker.csrf("/sign-in")
	victim := b.client(t)
	victim.csrf("/sign-in")
	if res := victim.post("/sign-in", withToken(creds, attackerTok)); res.StatusCode != http.StatusForbidden {
		t.Errorf("another visitor's token: %d, want 403", res.StatusCode)
	}

	forged := b.client(t)
	forged.header.Set("Cookie", "cs_csrf=made-up")
	if res := forged.post("/sign-in", withToken(creds, "made-up")); res.StatusCode != http.StatusForbidden {
		t.Errorf("made-up cookie and token: %d, want 403", res.StatusCode)
	}

	bare := b.client(t)
	if res := bare.post("/sign-in", withToken(creds, attackerTok)); res.StatusCode != http.StatusForbidden {
		t.Errorf("a token without its cookie: %d, want 403", res.StatusCode)
	}

	// The visitor's own token and cookie sign in; the CSRF cookie goes.
	c := b.client(t)
	if res := c.post("/sign-in", withToken(creds, c.csrf("/sign-in"))); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("own token: %d, want 303", res.StatusCode)
	}
	srv, _ := url.Parse(b.srv.URL)
	for _, ck := range c.http.Jar.Cookies(srv) {
		if ck.Name == "cs_csrf" {
			t.Errorf("the anonymous CSRF cookie outlived sign-in")
		}
	}
}

func withToken(v url.Values, tok string) url.Values {
	v.Set("_csrf", tok)
	return v
}
