package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/internal/assistants"
	"countersign/internal/controlplane"
	"countersign/internal/webhooks"
	"countersign/web/browsertest"
)

// fitJS measures, at the current width, how wide the document is and which
// controls of the page's main part lie partly outside the viewport.
const fitJS = `(() => {
	const vw = document.documentElement.clientWidth;
	const off = [...document.querySelectorAll('main button, main a.button, main a[href], main select, main input:not([type=hidden])')]
		.filter(e => e.getClientRects().length > 0)
		.map(e => ({r: e.getBoundingClientRect(), t: (e.textContent || e.name || '').trim().slice(0, 50)}))
		.filter(x => x.r.right > vw + 0.5 || x.r.left < -0.5).map(x => x.t + ' at ' + Math.round(x.r.left) + '–' + Math.round(x.r.right));
	return {width: document.documentElement.scrollWidth, viewport: vw, off};
})()`

type fit struct {
	Width    float64  `json:"width"`
	Viewport float64  `json:"viewport"`
	Off      []string `json:"off"`
}

// TestBrowserStaffPagesFitAPhone: at 390 px the policies, users and
// assistants pages (with a long assistant name, keys, a failing webhook)
// and a task page with a long heading are no wider than the screen, every
// control — Change, Disable, Revoke, Resend — is on it, and axe finds
// nothing serious. At 1280 px a failing webhook says so in words and a
// revoke asks first, naming what ends. Screenshots: policies-phone.png,
// admin-users-phone.png, admin-assistants-phone.png, policies-desktop.png,
// admin-webhooks-failing-desktop.png, admin-revoke-confirm-desktop.png.
func TestBrowserStaffPagesFitAPhone(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{shop: true})
	ab := &apiBundle{testBundle: b, asst: assistants.New(b.store, b.cp, b.web.Registry(), b.clock.Now)}
	ab.a, ab.key = ab.newAssistant(t, "phone-support-assistant-for-the-returns-desk")
	task := ab.newTask(t, ab.key, "conv-phone", []string{"issue_refund"})
	ab.task = task
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	t.Cleanup(recv.Close)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Admin])
	if res := c.post("/admin/assistants/"+ab.a.ID+"/webhook", url.Values{"_csrf": {c.csrf("/admin/assistants")}, "url": {recv.URL + "/outcomes/a-fairly-long-path-for-the-returns-desk"}}); res.StatusCode != http.StatusOK {
		t.Fatalf("register webhook: %d", res.StatusCode)
	}
	id := ab.proposeRefund(t, ab.damagedOrder(t))
	if _, err := b.cp.StaffDecide(context.Background(), controlplane.StaffDecision{Actor: controlplaneUser(b.users[accounts.Agent]), InvocationID: id, Verb: controlplane.StaffReject, Version: b.inv(t, id).Version, Reason: controlplane.OtherReason, Other: "not this one"}); err != nil {
		t.Fatal(err)
	}
	worker := webhooks.NewWorker(b.store, b.web.WebhookRender(b.srv.URL), webhooks.Config{AllowPrivate: true}, b.clock.Now, nil)
	if _, err := worker.Enqueue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.DeliverDue(context.Background()); err != nil {
		t.Fatal(err)
	}

	ctx := browsertest.New(t, 120*time.Second)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(b.srv.URL+"/"),
		browserSignIn(b.users[accounts.Admin]),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`)),
		chromedp.EmulateViewport(390, 844),
	); err != nil {
		t.Fatal(err)
	}
	pages := []struct{ path, ready, shot string }{
		{"/policies", `[data-testid="policies-table"]`, "policies-phone.png"},
		{"/admin/users", `[data-testid="users-table"]`, "admin-users-phone.png"},
		{"/admin/assistants", `[data-testid="deliveries-table"]`, "admin-assistants-phone.png"},
	}
	for _, p := range pages {
		if err := chromedp.Do(ctx, chromedp.Navigate(b.srv.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.ready))); err != nil {
			t.Fatalf("%s: %v", p.path, err)
		}
		checkFit(t, ctx, p.path)
		browsertest.CheckAccessibility(t, ctx, p.path+" on a phone")
		browsertest.Screenshot(t, ctx, p.shot)
	}
	// Every named button is there to press, on the screen.
	for _, sel := range []string{`[data-testid="revoke"]`, `[data-testid="resend"]`, `[data-testid="disable-assistant"]`, `[data-testid="send-test"]`} {
		if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('`+sel+`').length`)); err != nil || n == 0 {
			t.Errorf("assistants on a phone: no %s (%v)", sel, err)
		}
	}

	// A task's heading with a long unbroken name wraps.
	taskID, _ := task["id"].(string)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(b.srv.URL+"/tasks/"+taskID),
		chromedp.WaitVisible(chromedp.CSS(`main h1`)),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('main h1').firstChild.textContent = 'Task for ' + 'customer_ref_without_any_spaces_'.repeat(5) + ' '`),
	); err != nil {
		t.Fatal(err)
	}
	checkFit(t, ctx, "a task with a long heading")

	// Desktop: the failing webhook in words, the revoke's confirmation.
	card := `[data-testid="assistant-` + ab.a.Name + `"]`
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(b.srv.URL+"/policies"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="stage-legend"]`)),
	); err != nil {
		t.Fatal(err)
	}
	browsertest.CheckAccessibility(t, ctx, "/policies")
	browsertest.Screenshot(t, ctx, "policies-desktop.png")
	if err := chromedp.Do(ctx,
		chromedp.Navigate(b.srv.URL+"/admin/assistants"),
		chromedp.WaitVisible(chromedp.CSS(card+` [data-testid="delivery-failing"]`)),
		chromedp.ScrollIntoView(chromedp.CSS(card+` [data-testid="deliveries-table"]`)),
	); err != nil {
		t.Fatal(err)
	}
	failing, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(card+` [data-testid="delivery-failing"]`)))
	state, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(card+` [data-testid="delivery-state"]`)))
	if state != "Failing" || !strings.HasPrefix(failing, "HTTP 500 Internal Server Error from "+recv.URL) || !strings.Contains(failing, "next try") {
		t.Errorf("failing webhook shown as %q: %q", state, failing)
	}
	browsertest.CheckAccessibility(t, ctx, "/admin/assistants with a failing webhook")
	browsertest.Screenshot(t, ctx, "admin-webhooks-failing-desktop.png")

	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(card+` [data-testid="revoke"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="admin-confirm"]`)),
	); err != nil {
		t.Fatal(err)
	}
	ends, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="confirm-ends"]`)))
	if !strings.Contains(ends, "of assistant "+ab.a.Name+" stops working immediately") || !strings.Contains(ends, "1 open task (active or paused): it waits") {
		t.Errorf("revoke confirmation says %q", ends)
	}
	browsertest.CheckAccessibility(t, ctx, "revoke confirmation")
	browsertest.Screenshot(t, ctx, "admin-revoke-confirm-desktop.png")
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="confirm-end"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
	); err != nil {
		t.Fatal(err)
	}
	if r := callAPI(t, b.srv.URL, ab.key, http.MethodGet, "/api/v1/tools", nil); r.status != http.StatusUnauthorized {
		t.Errorf("the confirmed revoke left the key working: %d", r.status)
	}
}

func checkFit(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[fit](fitJS))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: document %vpx wide in a %vpx viewport", page, got.Width, got.Viewport)
	if got.Width > 390 || len(got.Off) > 0 {
		t.Errorf("%s at 390px: the document is %vpx wide; controls off the screen: %q", page, got.Width, got.Off)
	}
}
