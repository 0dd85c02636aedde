package journeys_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/web/browsertest"
)

func TestAdminAssistantsKeysAndActions(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Admin])

	// A blank name re-renders with the field's error and the user's input.
	res := c.Post("/admin/assistants", url.Values{"_csrf": {c.CSRF("/admin/assistants")}, "name": {"two words"}, "enable_all": {"on"}})
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("invalid name: %d", res.StatusCode)
	}
	doc := res.Doc(t)
	if doc.Find(`[data-testid="name-error"]`).Length() != 1 || doc.Find(`#assistant-name[aria-invalid="true"]`).Length() != 1 {
		t.Errorf("no field error for name")
	}
	if v, _ := doc.Find(`#assistant-name`).Attr("value"); v != "two words" {
		t.Errorf("the typed name was not kept: %q", v)
	}

	res = c.Post("/admin/assistants", url.Values{"_csrf": {c.CSRF("/admin/assistants")}, "name": {"helpdesk-bot"}, "enable_all": {"on"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d %s", res.StatusCode, res.Text)
	}
	page := c.Get("/admin/assistants").Doc(t)
	if !strings.Contains(page.Find(`[role="status"], .flash`).Text(), "helpdesk-bot") {
		t.Errorf("no flash after creating")
	}
	card := page.Find(`[data-testid="assistant-helpdesk-bot"]`)
	if card.Find(`input[name="action"]:checked`).Length() != 6 {
		t.Errorf("%d actions on, want all 6", card.Find(`input[name="action"]:checked`).Length())
	}
	keysURL, _ := card.Find(`form[action$="/keys"]`).Attr("action")

	// Issuing redirects to the page that shows the key once; reloading
	// that page shows it no longer and issues nothing.
	keyRows := func(d webtest.Response) int {
		return d.Doc(t).Find(`[data-testid="assistant-helpdesk-bot"] [data-testid="keys-table"] tbody tr[data-testid^="key-"]`).Length()
	}
	before := keyRows(c.Get("/admin/assistants"))
	res = c.Post(keysURL, url.Values{"_csrf": {c.CSRF("/admin/assistants")}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/assistants" {
		t.Fatalf("issue key: %d to %q, want 303 to /admin/assistants", res.StatusCode, res.Header.Get("Location"))
	}
	// Until it is shown, the key waits in the session's row sealed with
	// the cookie's id, which the database never holds.
	var plain int
	if err := b.Store.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM sessions WHERE position('csk_live_'::bytea IN data) > 0`).Scan(&plain); err != nil || plain != 0 {
		t.Errorf("%d session rows hold a key in the clear (%v)", plain, err)
	}
	shown := c.Get("/admin/assistants")
	secret, _ := shown.Doc(t).Find(`[data-testid="new-key-secret"]`).Attr("value")
	if shown.StatusCode != http.StatusOK || !strings.HasPrefix(secret, "csk_live_") || shown.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("the page after issuing: %d %q %q", shown.StatusCode, secret, shown.Header.Get("Cache-Control"))
	}
	if n := keyRows(shown); n != before+1 {
		t.Errorf("%d keys after issuing one, want %d", n, before+1)
	}
	again := c.Get("/admin/assistants")
	if strings.Contains(again.Text, secret) || !strings.Contains(again.Text, secret[:13]) {
		t.Errorf("a reload must show the key's prefix, never the key")
	}
	if n := keyRows(again); n != before+1 {
		t.Errorf("%d keys after a reload, want %d: a reload issued a key", n, before+1)
	}
	if r := webtest.CallAPI(t, b.Server.URL, secret, http.MethodGet, "/api/v1/tools", nil); r.Status != http.StatusOK {
		t.Fatalf("the new key does not work: %d", r.Status)
	}
	if !strings.Contains(c.Get("/admin/assistants").Doc(t).Find(`[data-testid="assistant-helpdesk-bot"] [data-testid="keys-table"] tbody tr td:nth-child(3)`).Text(), "2026") {
		t.Errorf("last use not shown")
	}

	// Turning actions off narrows the catalog at once.
	actionsURL, _ := card.Find(`form[action$="/actions"]`).Attr("action")
	res = c.Post(actionsURL, url.Values{"_csrf": {c.CSRF("/admin/assistants")}, "action": {"shop/resend_receipt"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save actions: %d", res.StatusCode)
	}
	r := webtest.CallAPI(t, b.Server.URL, secret, http.MethodGet, "/api/v1/tools", nil)
	if modes := webtest.ToolModes(t, r); modes["resend_receipt"] == "" || modes["issue_refund"] != "" {
		t.Errorf("catalog after saving actions: %v", modes)
	}

	// Disabling the assistant asks first too, naming its keys and tasks;
	// unconfirmed, its key keeps working.
	disableURL, _ := c.Get("/admin/assistants").Doc(t).Find(`[data-testid="assistant-helpdesk-bot"] a[data-testid="disable-assistant"]`).Attr("href")
	confirmDisable := c.Get(disableURL)
	if ends := confirmDisable.Doc(t).Find(`[data-testid="confirm-ends"]`).Text(); confirmDisable.StatusCode != http.StatusOK ||
		!strings.Contains(ends, "Assistant helpdesk-bot is disabled: its 1 live key stops working immediately") {
		t.Errorf("disable confirmation: %d %q", confirmDisable.StatusCode, ends)
	}
	if res := c.Post(disableURL, url.Values{"_csrf": {c.CSRF("/admin/assistants")}}); res.StatusCode != http.StatusOK {
		t.Errorf("an unconfirmed disable: %d, want the confirmation page", res.StatusCode)
	}
	if r := webtest.CallAPI(t, b.Server.URL, secret, http.MethodGet, "/api/v1/tools", nil); r.Status != http.StatusOK {
		t.Errorf("an unconfirmed disable stopped the key: %d", r.Status)
	}

	// Revoking asks first, naming the key, its assistant and what ends;
	// a post without the confirmation changes nothing.
	revokeURL, _ := c.Get("/admin/assistants").Doc(t).Find(`[data-testid="assistant-helpdesk-bot"] a[data-testid="revoke"]`).Attr("href")
	confirm := c.Get(revokeURL)
	ends := confirm.Doc(t).Find(`[data-testid="confirm-ends"]`).Text()
	if confirm.StatusCode != http.StatusOK || !strings.Contains(ends, "of assistant helpdesk-bot stops working immediately") ||
		!strings.Contains(ends, "only live key") || !strings.Contains(ends, "open task") {
		t.Errorf("revoke confirmation: %d %q", confirm.StatusCode, ends)
	}
	if act, _ := confirm.Doc(t).Find(`form:has([data-testid="confirm-end"]) input[name="_csrf"]`).Attr("value"); act == "" {
		t.Errorf("the confirming form has no CSRF token")
	}
	if res := c.Post(revokeURL, url.Values{"_csrf": {c.CSRF("/admin/assistants")}}); res.StatusCode != http.StatusOK ||
		res.Doc(t).Find(`[data-testid="admin-confirm"]`).Length() != 1 {
		t.Errorf("an unconfirmed revoke: %d, want the confirmation page", res.StatusCode)
	}
	if r := webtest.CallAPI(t, b.Server.URL, secret, http.MethodGet, "/api/v1/tools", nil); r.Status != http.StatusOK {
		t.Errorf("an unconfirmed revoke stopped the key: %d", r.Status)
	}
	res = c.Post(revokeURL, url.Values{"_csrf": {c.CSRF("/admin/assistants")}, "confirm": {"yes"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: %d", res.StatusCode)
	}
	if r := webtest.CallAPI(t, b.Server.URL, secret, http.MethodGet, "/api/v1/tools", nil); r.Status != http.StatusUnauthorized {
		t.Errorf("a revoked key answered %d", r.Status)
	}
	if c.Get("/admin/assistants").Doc(t).Find(`[data-testid="assistant-helpdesk-bot"] .badge.idle`).Length() != 1 {
		t.Errorf("revoked key not marked")
	}
	// Revoking twice is a 404, not a 500.
	if res := c.Post(revokeURL, url.Values{"_csrf": {c.CSRF("/admin/assistants")}, "confirm": {"yes"}}); res.StatusCode != http.StatusNotFound {
		t.Errorf("revoke again: %d", res.StatusCode)
	}
}

func TestAdminAssistantsInABrowser(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	ctx := browsertest.New(t, 60*time.Second)
	admin := b.Users[accounts.Admin]
	err := chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+"/"),
		browserSignIn(admin),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`)),
		chromedp.Navigate(b.Server.URL+"/admin/assistants"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="new-assistant-form"]`)),
		chromedp.SendKeys(chromedp.CSS(`#assistant-name`), "browser-bot"),
		chromedp.Click(chromedp.CSS(`[data-testid="new-assistant-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="assistant-browser-bot"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="assistant-browser-bot"] [data-testid="issue-key"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="new-key-secret"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`[data-testid="new-key-secret"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "csk_live_") {
		t.Errorf("key shown: %q", secret)
	}
	if v := browsertest.Axe(t, ctx); len(v) > 0 {
		t.Errorf("%d serious accessibility violations: %+v", len(v), v)
	}
	if r := webtest.CallAPI(t, b.Server.URL, secret, http.MethodGet, "/api/v1/tools", nil); r.Status != http.StatusOK {
		t.Errorf("the key shown in the browser does not work: %d", r.Status)
	}
}
