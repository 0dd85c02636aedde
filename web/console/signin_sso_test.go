package console_test

import (
	"bytes"
	"encoding/gob"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gorilla/securecookie"

	"countersign/internal/accounts"
	"countersign/internal/sso"
	"countersign/internal/sso/ssotest"
	"countersign/web/kit"
	"countersign/web/webtest"
)

// ssoConsole is a console with single sign-on through a real provider on
// loopback, whose clock runs shift seconds ahead of the wall clock.
type ssoConsole struct {
	stack *webtest.Stack
	op    *ssotest.OP
	srv   *httptest.Server
	shift atomic.Int64
}

func newSSOConsole(t *testing.T, opts ...webtest.Option) *ssoConsole {
	t.Helper()
	return newSSOConsoleOver(t, nil, opts...)
}

// newSSOConsoleOver is newSSOConsole over a stack built with stackOpts
// too (a shop).
func newSSOConsoleOver(t *testing.T, stackOpts []webtest.Option, opts ...webtest.Option) *ssoConsole {
	t.Helper()
	s := &ssoConsole{op: ssotest.Start(t)}
	s.op.AddUser("sam", "sam@example.test", "Sam Support", "support")
	s.op.AddUser("nog", "nog@example.test", "No Group", "unmapped")
	s.stack = webtest.New(t, append(stackOpts, webtest.WithNow(s.now))...)
	opts = append(opts, webtest.WithSessionLifetime(6*time.Hour, 12*time.Hour), webtest.WithSSO(func(consoleURL string) *sso.Provider {
		redirect := consoleURL + "/sign-in/sso/callback"
		s.op.AddClient(ssotest.Client{ID: "console", Secret: "s3cret", RedirectURL: redirect})
		p, err := sso.New(t.Context(), sso.Config{Issuer: s.op.URL, ClientID: "console", ClientSecret: "s3cret",
			RedirectURL: redirect, Scopes: []string{"email", "profile"}, Name: "Test provider",
			GroupRoles: map[string]accounts.Role{"support": accounts.Agent}}, s.stack.Store, nil, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}))
	s.srv = s.stack.ServeAnother(t, opts...)
	return s
}

func (s *ssoConsole) now() time.Time {
	return time.Now().Add(time.Duration(s.shift.Load()) * time.Second)
}

type browser struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func (s *ssoConsole) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: s.srv.URL, hc: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(method, target string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	if strings.HasPrefix(target, "/") {
		target = b.base + target
	}
	req, _ := http.NewRequest(method, target, strings.NewReader(form.Encode()))
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

// viaProvider starts a sign-in, logs username in at the provider and
// returns the callback URL the provider sent the browser to.
func (s *ssoConsole) viaProvider(t *testing.T, b *browser, username string) string {
	t.Helper()
	res, _ := b.do(http.MethodGet, "/sign-in/sso?next=/queue", nil)
	if res.StatusCode != http.StatusFound || !strings.HasPrefix(res.Header.Get("Location"), s.op.URL) {
		t.Fatalf("GET /sign-in/sso: %d to %q, want a redirect to the provider", res.StatusCode, res.Header.Get("Location"))
	}
	return ssotest.Login(t, s.op, res.Header.Get("Location"), username).String()
}

func errorOf(t *testing.T, body string) string {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc.Find(`[data-testid="sign-in-error"]`).Text()
}

func TestSSOSignInOpensTheConsoleUntilTheIDTokenExpires(t *testing.T) {
	s := newSSOConsole(t)
	b := s.browser(t)
	_, page := b.do(http.MethodGet, "/sign-in", nil)
	if !strings.Contains(page, "Sign in with Test provider") {
		t.Fatal("the sign-in page offers no \"Sign in with Test provider\"")
	}
	res, _ := b.do(http.MethodGet, s.viaProvider(t, b, "sam"), nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/queue" {
		t.Fatalf("callback: %d to %q, want 303 to /queue", res.StatusCode, res.Header.Get("Location"))
	}
	if res, _ := b.do(http.MethodGet, "/queue", nil); res.StatusCode != http.StatusOK {
		t.Fatalf("/queue after signing in: %d, want 200", res.StatusCode)
	}
	// The ID token lives an hour; the session's sign-in ends with it.
	s.shift.Store(int64(61 * time.Minute / time.Second))
	res, _ = b.do(http.MethodGet, "/queue", nil)
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/sign-in?next=") {
		t.Errorf("/queue after the ID token expired: %d to %q, want 303 to sign-in", res.StatusCode, res.Header.Get("Location"))
	}
}

func TestSSORefusalsShowTheSignInPageWithWhatToDo(t *testing.T) {
	s := newSSOConsole(t)
	for _, tc := range []struct {
		name   string
		target func(b *browser) string
		status int
		want   string
	}{
		{"tampered state", func(b *browser) string {
			return strings.Replace(s.viaProvider(t, b, "sam"), "state=", "state=x", 1)
		}, http.StatusUnauthorized, "not one we sent"},
		{"no state", func(*browser) string { return "/sign-in/sso/callback?code=abc" }, http.StatusUnauthorized, "Start again"},
		{"provider said no", func(*browser) string {
			return "/sign-in/sso/callback?error=access_denied&state=x"
		}, http.StatusUnauthorized, "did not sign you in"},
		{"no group", func(b *browser) string { return s.viaProvider(t, b, "nog") }, http.StatusForbidden, "none of the groups"},
		{"wrong nonce", func(b *browser) string {
			s.op.SetNonce(func(n string) string { return n + "-other" })
			defer s.op.SetNonce(nil)
			return s.viaProvider(t, b, "sam")
		}, http.StatusUnauthorized, "not made for this sign-in"},
	} {
		b := s.browser(t)
		res, body := b.do(http.MethodGet, tc.target(b), nil)
		if res.StatusCode != tc.status || !strings.Contains(errorOf(t, body), tc.want) {
			t.Errorf("%s: %d %q, want %d saying %q", tc.name, res.StatusCode, errorOf(t, body), tc.status, tc.want)
		}
	}
	// A callback replayed after it signed someone in is refused too.
	b := s.browser(t)
	back := s.viaProvider(t, b, "sam")
	if res, _ := b.do(http.MethodGet, back, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("first callback: %d", res.StatusCode)
	}
	res, body := b.do(http.MethodGet, back, nil)
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(errorOf(t, body), "already used") {
		t.Errorf("replayed callback: %d %q, want 401 saying it was used", res.StatusCode, errorOf(t, body))
	}
}

func TestStaffPasswordSignInCanBeTurnedOff(t *testing.T) {
	s := newSSOConsole(t, webtest.WithoutStaffPasswords())
	for _, role := range []accounts.Role{accounts.Agent, accounts.Admin, accounts.Customer} {
		b := s.browser(t)
		_, page := b.do(http.MethodGet, "/sign-in", nil)
		doc, _ := goquery.NewDocumentFromReader(strings.NewReader(page))
		tok, _ := doc.Find(`input[name="_csrf"]`).Attr("value")
		u := s.stack.Users[role]
		if doc.Find(`[data-testid="staff-use-sso"]`).Length() != 1 {
			t.Errorf("the sign-in page does not tell staff to use single sign-on")
		}
		res, body := b.do(http.MethodPost, "/sign-in", url.Values{"_csrf": {tok}, "email": {u.Email}, "password": {u.Password}})
		wrongRes, wrongBody := s.browser(t).signInWith(t, u.Email, u.Password+"-wrong")
		switch {
		case role == accounts.Customer && res.StatusCode != http.StatusSeeOther:
			t.Errorf("customer's password sign-in: %d, want 303 (customers are not affected)", res.StatusCode)
		case role != accounts.Customer && (res.StatusCode != wrongRes.StatusCode || errorOf(t, body) != errorOf(t, wrongBody)):
			// A right staff password must answer as a wrong one does, or
			// the form tells whether a guess was right.
			t.Errorf("%s's right password answers %d %q, a wrong one %d %q: want the same answer",
				role, res.StatusCode, errorOf(t, body), wrongRes.StatusCode, errorOf(t, wrongBody))
		}
	}
}

// signInWith posts the password form from a fresh page.
func (b *browser) signInWith(t *testing.T, email, password string) (*http.Response, string) {
	t.Helper()
	_, page := b.do(http.MethodGet, "/sign-in", nil)
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(page))
	tok, _ := doc.Find(`input[name="_csrf"]`).Attr("value")
	return b.do(http.MethodPost, "/sign-in", url.Values{"_csrf": {tok}, "email": {email}, "password": {password}})
}

// TestSSOSignInRegeneratesTheSession: the session a browser had before
// (here a password sign-in) ends, and the new one records that the person
// was identified by the OpenID provider, until the ID token's expiry.
func TestSSOSignInRegeneratesTheSession(t *testing.T) {
	s := newSSOConsole(t)
	b := s.browser(t)
	_, page := b.do(http.MethodGet, "/sign-in", nil)
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(page))
	tok, _ := doc.Find(`input[name="_csrf"]`).Attr("value")
	u := s.stack.Users[accounts.Agent]
	if res, _ := b.do(http.MethodPost, "/sign-in", url.Values{"_csrf": {tok}, "email": {u.Email}, "password": {u.Password}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("password sign-in: %d", res.StatusCode)
	}
	before := b.session()
	if res, _ := b.do(http.MethodGet, s.viaProvider(t, b, "sam"), nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("callback: %d", res.StatusCode)
	}
	after := b.session()
	if after == before {
		t.Fatal("the session id did not change at the SSO sign-in")
	}
	old := s.browser(t)
	old.hc.Jar.SetCookies(mustURL(s.srv.URL), []*http.Cookie{{Name: "cs_session", Value: before, Path: "/"}})
	if res, _ := old.do(http.MethodGet, "/queue", nil); res.StatusCode != http.StatusSeeOther {
		t.Errorf("the session from before the SSO sign-in: %d, want 303 to sign-in", res.StatusCode)
	}
	values := s.sessionValues(t, after)
	until, _ := values[kit.KeySignedInUntil].(int64)
	if values[kit.KeyIdentifiedBy] != "oidc" || time.Until(time.Unix(until, 0)) < 50*time.Minute {
		t.Errorf("session values %v, want identified_by oidc and the ID token's expiry", values)
	}
	// Decisions record who the provider said this is (the door test).
	if sub, _ := values[kit.KeyIdentitySubject].(string); values[kit.KeyIdentityIssuer] != s.op.URL || sub == "" {
		t.Errorf("session values %v, want the provider's issuer %s and the person's subject", values, s.op.URL)
	}
}

func (b *browser) session() string {
	for _, ck := range b.hc.Jar.Cookies(mustURL(b.base)) {
		if ck.Name == "cs_session" {
			return ck.Value
		}
	}
	b.t.Fatal("no session cookie")
	return ""
}

// sessionValues reads the stored values of the session cookie names.
func (s *ssoConsole) sessionValues(t *testing.T, cookie string) map[any]any {
	t.Helper()
	var id string
	if err := securecookie.DecodeMulti("cs_session", cookie, &id, securecookie.CodecsFromPairs(webtest.SessionKeys...)...); err != nil {
		t.Fatal(err)
	}
	row, _, err := s.stack.Store.SessionAndUser(t.Context(), kit.HashID(id))
	if err != nil {
		t.Fatal(err)
	}
	values := map[any]any{}
	if err := gob.NewDecoder(bytes.NewReader(row.Data)).Decode(&values); err != nil {
		t.Fatal(err)
	}
	return values
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
