package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/web/webtest"
)

// TestPlainApprovalOfAStepUpCardLinksToTheStepUpPage: when the policy
// asks for a passkey while the card's page is open, its plain Approve is
// refused with a message linking to the step-up page (with and without
// htmx), and the card still waits.
func TestPlainApprovalOfAStepUpCardLinksToTheStepUpPage(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	inv := f.Describe(t, "Now in oak.")
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	form := webtest.CardForm(t, c.Get("/queue/"+inv.ID), "approve-form")
	requireStepUp(t, b, "update_product_description")

	res := c.Post("/queue/"+inv.ID+"/approve", form)
	link := res.Doc(t).Find(`[data-testid="outcome"] a[data-testid="outcome-step-up"]`)
	if res.StatusCode != http.StatusForbidden || link.AttrOr("href", "") != "/queue/"+inv.ID+"/step-up" ||
		!strings.Contains(res.Doc(t).Find(`[data-testid="outcome"]`).Text(), "needs your passkey") {
		t.Fatalf("a plain approval of a step-up card: %d, outcome %q, want 403 saying so with the step-up link",
			res.StatusCode, res.Doc(t).Find(`[data-testid="outcome"]`).Text())
	}
	req, _ := http.NewRequest(http.MethodPost, b.Server.URL+"/queue/"+inv.ID+"/approve", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("Origin", b.Server.URL)
	hx := c.Do(req)
	if hx.StatusCode != http.StatusOK || hx.Doc(t).Find(`a[data-testid="outcome-step-up"]`).Length() != 1 {
		t.Fatalf("the same with htmx: %d, want 200 with the panel and the link", hx.StatusCode)
	}
	if st := b.InvocationState(t, inv.ID); st != controlplane.AwaitingApproval {
		t.Fatalf("the card is %s, want still awaiting approval", st)
	}
}

// TestStepUpPageWithoutAPasskeySaysHowToAddOne: a person without a
// passkey is told where to add one (and the ceremony says the same); a
// console without passkeys says an admin must set them up.
func TestStepUpPageWithoutAPasskeySaysHowToAddOne(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	pk, _ := passkeyConsole(t, b)
	requireStepUp(t, b, "update_product_description")
	inv := webtest.NewShopper(t, b).Describe(t, "Now in oak.")
	c := pk.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	page := c.Get("/queue/" + inv.ID + "/step-up").Doc(t)
	if page.Find(`[data-testid="no-passkey"] a[href="/account/factors"]`).Length() != 1 || page.Find(`[data-testid="step-up-form"]`).Length() != 0 {
		t.Fatal("the step-up page of a person without a passkey does not say where to add one")
	}
	status, raw := beginStepUp(t, c, inv.ID, shown{itoa(inv.Version), hexOf(inv.ArgsHash)})
	if r := decode(t, raw); status != http.StatusUnprocessableEntity || !strings.Contains(r.Error, "account page") {
		t.Fatalf("beginning a step-up without a passkey: %d %+v, want 422 saying where to add one", status, r)
	}
	plain := b.Client(t)
	plain.MustSignIn(b.Users[accounts.Agent])
	if plain.Get("/queue/"+inv.ID+"/step-up").Doc(t).Find(`[data-testid="passkeys-off"]`).Length() != 1 {
		t.Fatal("a console without passkeys does not say so on the step-up page")
	}
}

// TestBulkApprovalLeavesOutCardsThatNeedAPasskey: low-risk cards whose
// policy asks for a passkey are not offered for bulk approval; the queue
// and the confirmation say how many and why and link each to its step-up
// page, and a bulk approval that names one anyway leaves it waiting.
func TestBulkApprovalLeavesOutCardsThatNeedAPasskey(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	desc, addr := f.Describe(t, "Now in oak."), f.AddressChange(t)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	requireStepUp(t, b, "update_product_description")

	queue := c.Get("/queue").Doc(t)
	var offered []string
	queue.Find(`[data-testid="bulk-form"] input[name="id"]`).Each(func(_ int, s *goquery.Selection) { offered = append(offered, s.AttrOr("value", "")) })
	if len(offered) != 1 || offered[0] != addr.ID {
		t.Fatalf("bulk approval offers %v, want only the address change", offered)
	}
	checkLeftOut(t, queue, desc.ID)

	confirm := c.Post("/queue/bulk", url.Values{"_csrf": {c.CSRF("/queue")}, "id": {desc.ID, addr.ID}})
	doc := confirm.Doc(t)
	if confirm.StatusCode != http.StatusOK || doc.Find(`[data-testid="bulk-card-`+desc.ID+`"]`).Length() != 0 ||
		doc.Find(`[data-testid="bulk-card-`+addr.ID+`"]`).Length() != 1 {
		t.Fatalf("the confirmation (%d) lists the card that needs a passkey, or not the other", confirm.StatusCode)
	}
	checkLeftOut(t, doc, desc.ID)

	final := url.Values{"_csrf": {c.CSRF("/queue")}, "id": {desc.ID, addr.ID}, "v_" + desc.ID: {itoa(desc.Version)}, "h_" + desc.ID: {hexOf(desc.ArgsHash)},
		"v_" + addr.ID: {itoa(addr.Version)}, "h_" + addr.ID: {hexOf(addr.ArgsHash)}}
	if res := c.Post("/queue/bulk/approve", final); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("bulk approval: %d", res.StatusCode)
	}
	if st := b.InvocationState(t, desc.ID); st != controlplane.AwaitingApproval {
		t.Fatalf("a bulk approval naming the card that needs a passkey left it %s", st)
	}
	if st := b.InvocationState(t, addr.ID); st == controlplane.AwaitingApproval {
		t.Fatal("the card without step-up was not approved")
	}
	if flash := c.Get("/queue").Text; !strings.Contains(flash, "1 now needs your passkey and was left out") {
		t.Fatal("the flash does not say a card was left out for a passkey")
	}
}

// checkLeftOut fails unless doc says one card needs a passkey and links
// it to its step-up page.
func checkLeftOut(t *testing.T, doc *goquery.Document, id string) {
	t.Helper()
	section := doc.Find(`[data-testid="bulk-step-up"]`)
	if !strings.Contains(section.Text(), "1 request needs your passkey") ||
		section.Find(`a[data-testid="bulk-step-up-link"]`).AttrOr("href", "") != "/queue/"+id+"/step-up" {
		t.Fatalf("no line saying one card needs a passkey, linked to its step-up page: %q", section.Text())
	}
}

// TestStepUpOfARoleThePolicyLeavesOutAsksNoPasskey: a manager, whom the
// default policy does not let decide, sees why on the step-up page, and
// beginning a step-up is refused before any passkey is asked.
func TestStepUpOfARoleThePolicyLeavesOutAsksNoPasskey(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	pk, origin := passkeyConsole(t, b)
	requireStepUp(t, b, "update_product_description")
	inv := webtest.NewShopper(t, b).Describe(t, "Now in oak.")
	manager := b.Users[accounts.Manager]
	c := pk.Client(t)
	c.MustSignIn(manager)
	if _, status, r := addPasskey(t, c, manager, "Laptop", origin); status != http.StatusOK {
		t.Fatalf("adding the passkey: %d %+v", status, r)
	}
	if c.Get("/queue/"+inv.ID+"/step-up").Doc(t).Find(`[data-testid="may-not-decide"]`).Length() != 1 {
		t.Fatal("the step-up page does not tell a manager the policy leaves them out")
	}
	status, raw := beginStepUp(t, c, inv.ID, shown{itoa(inv.Version), hexOf(inv.ArgsHash)})
	if r := decode(t, raw); status != http.StatusForbidden || !strings.Contains(r.Error, "may not approve") {
		t.Fatalf("a manager beginning a step-up: %d %+v, want 403", status, r)
	}
}
