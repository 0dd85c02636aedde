package journeys_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/internal/sso"
	"countersign/internal/sso/ssotest"
	"countersign/web/browsertest"
	"countersign/web/webtest"
)

// TestBrowserSSOSignIn signs staff in through a real OpenID provider in
// headless Chromium: the sign-in page's button, the provider's login form,
// the callback, and the console's home with the navigation of the role the
// person's group maps to. Moved to another group, the person gets that
// group's role at the next sign-in; with no mapped group, or with a
// tampered state, the sign-in page says what went wrong.
func TestBrowserSSOSignIn(t *testing.T) {
	t.Parallel()
	op := ssotest.Start(t)
	op.AddUser("sam", "sam@example.test", "Sam Support", "support")
	b := webtest.New(t, webtest.WithNow(time.Now))
	console := b.ServeAnother(t, webtest.WithSSO(func(consoleURL string) *sso.Provider {
		redirect := consoleURL + "/sign-in/sso/callback"
		op.AddClient(ssotest.Client{ID: "console", Secret: "s3cret", RedirectURL: redirect})
		p, err := sso.New(t.Context(), sso.Config{Issuer: op.URL, ClientID: "console", ClientSecret: "s3cret", RedirectURL: redirect,
			Scopes: []string{"email", "profile"}, Name: "Test provider",
			GroupRoles: map[string]accounts.Role{"support": accounts.Agent, "leads": accounts.Manager}}, b.Store, nil, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}))
	ctx := browsertest.New(t, 90*time.Second)

	signIn := func() error {
		return chromedp.Do(ctx,
			chromedp.Navigate(console.URL+"/sign-in"),
			chromedp.Click(chromedp.CSS(`[data-testid="sign-in-sso"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#op-username`)),
			chromedp.SendKeys(chromedp.CSS(`#op-username`), "sam"),
			chromedp.SendKeys(chromedp.CSS(`#op-password`), ssotest.Password),
			chromedp.Click(chromedp.CSS(`#op-submit`)),
		)
	}
	home := func(role accounts.Role, nav string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`))); err != nil {
			t.Fatalf("%s: no home page after the provider: %v", role, err)
		}
		heading, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="home-heading"]`)))
		roleText, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="home-role"] strong`)))
		navText, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`nav.site-nav`)))
		if !strings.Contains(heading, "Sam Support") || roleText != role.Label() || !strings.Contains(navText, nav) {
			t.Errorf("home: heading %q, role %q, navigation %q; want Sam as %s with %q", heading, roleText, navText, role.Label(), nav)
		}
	}
	signOut := func() {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="sign-out"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-in-form"]`))); err != nil {
			t.Fatalf("sign out: %v", err)
		}
	}
	refusal := func(what, want string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-in-error"]`))); err != nil {
			t.Fatalf("%s: no refusal on the sign-in page: %v", what, err)
		}
		msg, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="sign-in-error"]`)))
		if !strings.Contains(msg, want) {
			t.Errorf("%s: %q, want it to say %q", what, msg, want)
		}
	}

	if err := signIn(); err != nil {
		t.Fatal(err)
	}
	home(accounts.Agent, "Queue")
	signOut()

	// The provider moved Sam to the leads: a manager at the next sign-in.
	op.SetGroups("sam", "leads")
	if err := signIn(); err != nil {
		t.Fatal(err)
	}
	home(accounts.Manager, "Metrics")
	signOut()

	op.SetGroups("sam", "marketing")
	if err := signIn(); err != nil {
		t.Fatal(err)
	}
	refusal("no mapped group", "none of the groups")

	if err := chromedp.Do(ctx, chromedp.Navigate(console.URL+"/sign-in/sso/callback?state=forged&code=forged")); err != nil {
		t.Fatal(err)
	}
	refusal("tampered state", "not one we sent")
}
