package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// errorSummary checks a page that refused a form: one error summary at
// the top of the main content (role=alert, focusable, focused on load by
// autofocus), headed "There is a problem", whose links point at fields
// that are on the page, marked invalid and described by their message.
// It returns the links' targets in order.
func errorSummary(t *testing.T, doc *goquery.Document) []string {
	t.Helper()
	s := doc.Find(`main [data-testid="error-summary"]`)
	if s.Length() != 1 {
		t.Fatalf("%d error summaries on the page, want 1", s.Length())
	}
	if first := doc.Find(`main`).Children().Not(`.flash`).First(); first.AttrOr("data-testid", "") != "error-summary" {
		t.Errorf("the error summary is not at the top of the main content: first is <%s class=%q>", goquery.NodeName(first), first.AttrOr("class", ""))
	}
	for attr, want := range map[string]string{"role": "alert", "tabindex": "-1"} {
		if got := s.AttrOr(attr, ""); got != want {
			t.Errorf("error summary %s=%q, want %q", attr, got, want)
		}
	}
	if _, ok := s.Attr("autofocus"); !ok {
		t.Errorf("the error summary takes no focus on load (no autofocus)")
	}
	if h := strings.TrimSpace(s.Find("h2").Text()); h != "There is a problem" {
		t.Errorf("error summary heading %q", h)
	}
	var ids []string
	s.Find(`a[data-testid="error-summary-link"]`).Each(func(_ int, a *goquery.Selection) {
		id := strings.TrimPrefix(a.AttrOr("href", ""), "#")
		ids = append(ids, id)
		field := doc.Find(`[id="` + id + `"]`)
		if field.Length() != 1 {
			t.Errorf("error summary links to #%s, which is not on the page once", id)
			return
		}
		if strings.TrimSpace(a.Text()) == "" {
			t.Errorf("the link to #%s says nothing", id)
		}
		if field.AttrOr("aria-invalid", "") != "true" {
			t.Errorf("#%s is not marked aria-invalid", id)
		}
	})
	if len(ids) == 0 {
		t.Errorf("the error summary lists nothing")
	}
	return ids
}

func TestRefusedStaffFormsLeadWithAnErrorSummaryLinkedToTheirFields(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop())
	f := newConsoleFixture(t, b)
	inv := f.refund(t, f.order, 800)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])

	// Reject with no reason: the summary links to the first reason.
	form := cardForm(t, c.get("/queue/"+inv.ID), "reject-form")
	res := c.post("/queue/"+inv.ID+"/reject", form)
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("reject with no reason: %d", res.StatusCode)
	}
	doc := res.doc(t)
	if ids := errorSummary(t, doc); len(ids) != 1 || ids[0] != "reason" {
		t.Errorf("reject's summary links to %v, want [reason]", ids)
	}
	if got := doc.Find(`[data-testid="reject-form"] fieldset`).AttrOr("aria-describedby", ""); got != "reason-error" {
		t.Errorf("the reasons' fieldset is described by %q", got)
	}

	// Send back with no question: the summary links to the question.
	form = cardForm(t, c.get("/queue/"+inv.ID), "send-back-form")
	res = c.post("/queue/"+inv.ID+"/send-back", form)
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("send back with no question: %d", res.StatusCode)
	}
	doc = res.doc(t)
	if ids := errorSummary(t, doc); len(ids) != 1 || ids[0] != "question" {
		t.Errorf("send-back's summary links to %v, want [question]", ids)
	}
	if got := doc.Find(`#question`).AttrOr("aria-describedby", ""); got != "question-error" || doc.Find(`#question-error`).Length() != 1 {
		t.Errorf("the question is described by %q", got)
	}

	// An edit with an amount that is not money: the summary links to it.
	form = cardForm(t, c.get("/queue/"+inv.ID), "edit-form")
	form.Set("arg.order_id", f.order.ID)
	form.Set("arg.amount_cents", "lots")
	form.Set("arg.reason_code", "damaged")
	res = c.post("/queue/"+inv.ID+"/edit", form)
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("edit with a bad amount: %d", res.StatusCode)
	}
	if ids := errorSummary(t, res.doc(t)); len(ids) != 1 || ids[0] != "f-arg-amount_cents" {
		t.Errorf("the edit's summary links to %v, want [f-arg-amount_cents]", ids)
	}

	// A policy saved with a bad amount and a bad deadline: both, in the
	// order of the form.
	m := b.client(t)
	m.mustSignIn(b.users[accounts.Manager])
	pf := policyForm(b, m.csrf("/policies/shop/issue_refund"), "1", "3", "Tighter.", "save")
	pf.Set("approval_window", "forever")
	pf.Set("auto_max", "twelve")
	res = m.post("/policies/shop/issue_refund", pf)
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("policy save with errors: %d", res.StatusCode)
	}
	if ids := errorSummary(t, res.doc(t)); strings.Join(ids, " ") != "auto_max approval_window" {
		t.Errorf("the policy's summary links to %v, want [auto_max approval_window]", ids)
	}

	// A page that refused nothing has no summary.
	if n := c.get("/queue/" + inv.ID).doc(t).Find(`[data-testid="error-summary"]`).Length(); n != 0 {
		t.Errorf("a card's page shows an error summary before any decision")
	}
}

// TestApprovingWhatCannotBeUndoneAsksFirst: a refund's card says it cannot
// be undone (words, not a prefix of "reversible") and its Approve button
// opens a confirmation naming it before the a key approves; a reversible,
// small change approves in one key as before. The shortcuts are a
// disclosure near the heading, not inside the filter.
func TestApprovingWhatCannotBeUndoneAsksFirst(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop())
	f := newConsoleFixture(t, b)
	refund := f.refund(t, f.order, 800)
	text := f.describe(t, "A warm walnut lamp.")
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])

	doc := c.get("/queue/" + refund.ID).doc(t)
	if got := doc.Find(`header [data-testid="cannot-undo"]`).Text(); !strings.Contains(got, "Cannot be undone") {
		t.Errorf("the refund's card does not say it cannot be undone: %q", got)
	}
	if got := doc.Find(`[data-testid="approve"]`).AttrOr("data-confirm", ""); got != "approve-confirm" {
		t.Errorf("the refund's Approve asks no confirmation (data-confirm=%q)", got)
	}
	dialog := doc.Find(`dialog#approve-confirm`)
	if what := dialog.Find(`[data-testid="confirm-what"]`).Text(); !strings.Contains(what, "Refund $8.00 on order "+f.order.ID) ||
		!strings.Contains(dialog.Text(), "cannot be undone") {
		t.Errorf("the confirmation does not name what cannot be undone: %q", dialog.Text())
	}
	if got := dialog.Find(`[data-testid="approve-confirmed"]`).AttrOr("form", ""); got != "approve-form" {
		t.Errorf("the confirmation's button submits %q, want the approve form", got)
	}
	// The focus starts on Go back, the safe choice: a then Enter must not
	// approve what cannot be undone.
	if af := dialog.Find(`[autofocus]`); af.Length() != 1 || af.AttrOr("data-testid", "") != "approve-cancel" {
		t.Errorf("the confirmation's first focus is %q, want Go back", af.AttrOr("data-testid", ""))
	}
	limits := doc.Find(`.limits`).Text()
	if strings.Contains(limits, "not_received") || !strings.Contains(limits, "Not received") {
		t.Errorf("the limits show codes: %q", limits)
	}

	doc = c.get("/queue/" + text.ID).doc(t)
	if doc.Find(`[data-testid="approve"][data-confirm]`).Length() != 0 || doc.Find(`dialog`).Length() != 0 ||
		doc.Find(`[data-testid="cannot-undo"]`).Length() != 0 {
		t.Errorf("a reversible description change asks for a confirmation or says it cannot be undone")
	}

	q := c.get("/queue").doc(t)
	if q.Find(`.queue-title details#shortcuts summary`).Length() != 1 || q.Find(`.queue-filter [data-testid="shortcuts"]`).Length() != 0 {
		t.Errorf("the keyboard shortcuts are not a disclosure beside the queue's heading")
	}
	if q.Find(`[data-testid="card-`+refund.ID+`"] [data-testid="cannot-undo"]`).Length() != 1 {
		t.Errorf("the refund's queue card does not say it cannot be undone")
	}
}

// TestAddressChangeReadsAsNowAndAfter: on a card's page the address change
// is two lines, "Now" above "After", not one run with an arrow; and the
// systems page says a refund cannot be undone in those words.
func TestAddressChangeReadsAsNowAndAfter(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop())
	f := newConsoleFixture(t, b)
	inv := f.addressChange(t)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	line := c.get("/queue/" + inv.ID).doc(t).Find(`[data-testid="quote-line"] [data-testid="now-after"]`)
	if line.Length() != 1 {
		t.Fatalf("the address change is not shown as Now / After lines")
	}
	parts := line.Find(".na-line")
	if parts.Length() != 2 || !strings.HasPrefix(parts.Eq(0).Text(), "Now ") || !strings.HasPrefix(parts.Eq(1).Text(), "After ") ||
		!strings.Contains(parts.Eq(1).Text(), "1 Main St") {
		t.Errorf("the address lines read %q", line.Text())
	}
	if strings.Contains(line.Text(), "→") {
		t.Errorf("the address change still reads as one run with an arrow: %q", line.Text())
	}
	sys := c.get("/systems").doc(t)
	if got := sys.Find(`[data-testid="action-issue_refund"] summary`).Text(); !strings.Contains(got, "Cannot be undone") || strings.Contains(got, "irreversible") {
		t.Errorf("the systems page says the refund's risk as %q", got)
	}
}

// addressChange proposes, as the assistant in a task of its own, a new
// shipping address for a new order of the fixture's customer; the policy
// is set to stage 3, so it waits in the queue.
func (f *consoleFixture) addressChange(t *testing.T) controlplane.Invocation {
	t.Helper()
	b, ctx := f.b, context.Background()
	if _, err := b.store.Pool().Exec(ctx, `UPDATE policies SET stage = 3, version = version + 1 WHERE action = 'change_shipping_address'`); err != nil {
		t.Fatal(err)
	}
	task, err := b.cp.CreateTask(ctx, controlplane.AssistantActor("asst_test", "Test assistant"), controlplane.NewTask{
		CustomerRef: f.cust.Email, ConversationID: fmt.Sprintf("conv-addr-%d", time.Now().UnixNano()),
		AllowedActions: []string{"change_shipping_address"}, WriteBudget: 5, InflightLimit: 1, RatePerMinute: 60,
		ExpiresAt: b.clock.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	order, err := b.shop.CreateOrder(ctx, demoshop.OrderFixture{CustomerID: f.cust.ID,
		Items: []demoshop.ItemFixture{{Name: "Walnut lamp", UnitPriceCents: 4200, Quantity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"order_id": order.ID, "address": map[string]any{"name": "Ada Buyer",
		"line1": "1 Main St", "city": "Springfield", "postal_code": "12345", "country": "US"}})
	inv, err := b.cp.Propose(ctx, controlplane.Proposal{TaskID: task.ID, Action: "change_shipping_address", Args: raw,
		Actor: controlplane.AssistantActor("asst_test", "Test assistant")})
	if err != nil {
		t.Fatal(err)
	}
	return inv
}
