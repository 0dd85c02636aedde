package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/web/webtest"
)

// TestProviderAccountsAreMarked: the users page marks an account the
// OpenID provider manages with its issuer and says a role set there
// lasts until the next sign-in; that person's password page offers no
// console password change (they know none), and a change posted anyway
// is refused.
func TestProviderAccountsAreMarked(t *testing.T) {
	s := newSSOConsole(t)
	b := s.browser(t)
	if res, _ := b.do(http.MethodGet, s.viaProvider(t, b, "sam"), nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sam's sign-in: %d", res.StatusCode)
	}
	sam, err := s.stack.Accounts.UserIDByEmail(t.Context(), "sam@example.test")
	if err != nil {
		t.Fatal(err)
	}
	sso := &webtest.Stack{Server: s.srv, Store: s.stack.Store}
	admin := sso.Client(t)
	admin.MustSignIn(s.stack.Users[accounts.Admin])
	users := admin.Get("/admin/users").Doc(t)
	row := users.Find(`[data-testid="user-` + webtest.Itoa64(sam) + `"]`)
	if got := row.Find(`[data-testid="sso-managed"]`).Text(); got != "single sign-on: "+s.op.URL {
		t.Errorf("sam's row says %q, want the provider's issuer", got)
	}
	if row.Find(`[data-testid="sso-role-note"]`).Length() != 1 {
		t.Error("sam's row does not say a role set here lasts until the next sign-in")
	}
	if n := users.Find(`[data-testid="sso-managed"]`).Length(); n != 1 {
		t.Errorf("%d accounts marked as single sign-on, want sam's alone", n)
	}

	res, page := b.do(http.MethodGet, "/account/password", nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `data-testid="password-managed"`) || strings.Contains(page, `data-testid="password-form"`) {
		t.Fatalf("sam's password page: %d, want no password change\n%s", res.StatusCode, page)
	}
	tok := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if tok == nil {
		t.Fatal("no CSRF token on the page")
	}
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/account/password", strings.NewReader(url.Values{"_csrf": {tok[1]},
		"current": {"anything"}, "new": {"a new password of sam's"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.srv.URL)
	res, err = b.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusConflict {
		t.Fatalf("a password change posted for sam: %d, want 409", res.StatusCode)
	}
	own := admin.Get("/account/password").Doc(t)
	if own.Find(`[data-testid="password-form"]`).Length() != 1 {
		t.Error("a password account's page offers no password change")
	}
}
