package journeys_test

import (
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/web/browsertest"
)

// TestBrowserSignInEachRole signs each role in through the real form in
// headless Chromium and checks they land on their home page, then signs out.
func TestBrowserSignInEachRole(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	ctx := browsertest.New(t, 90*time.Second)
	for _, role := range accounts.Roles {
		u := b.Users[role]
		err := chromedp.Do(ctx,
			chromedp.Navigate(b.Server.URL+"/"),
			browserSignIn(u),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`)),
		)
		if err != nil {
			t.Fatalf("%s: %v", role, err)
		}
		heading, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="home-heading"]`)))
		roleText, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="home-role"] strong`)))
		location, _ := chromedp.Run(ctx, chromedp.Location())
		if !strings.Contains(heading, u.Name) || roleText != role.Label() || !strings.HasSuffix(location, "/") {
			t.Errorf("%s landed on %s with heading %q and role %q", role, location, heading, roleText)
		}
		err = chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`[data-testid="sign-out"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-in-form"]`)),
		)
		if err != nil {
			t.Fatalf("%s sign-out: %v", role, err)
		}
	}
}

// TestBrowserAccessibilityOfSignInAndHome runs axe-core on the sign-in page
// and an admin's home and users pages: no serious or critical violations.
func TestBrowserAccessibilityOfSignInAndHome(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	ctx := browsertest.New(t, 90*time.Second)
	u := b.Users[accounts.Admin]
	check := func(page string) {
		t.Helper()
		if v := browsertest.Axe(t, ctx); len(v) > 0 {
			t.Errorf("%s: %d serious accessibility violations: %+v", page, len(v), v)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(b.Server.URL+"/sign-in"), chromedp.WaitVisible(chromedp.CSS(`#email`))); err != nil {
		t.Fatal(err)
	}
	check("sign-in")
	err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#email`), u.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), u.Password),
		chromedp.Submit(chromedp.CSS(`[data-testid="sign-in-form"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	check("home")
	if err := chromedp.Do(ctx, chromedp.Navigate(b.Server.URL+"/admin/users"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="users-table"]`))); err != nil {
		t.Fatal(err)
	}
	check("admin users")
}
