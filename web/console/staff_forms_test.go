package console_test

import (
	"net/http"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
)

func TestRefusedStaffFormsLeadWithAnErrorSummaryLinkedToTheirFields(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	inv := f.Refund(t, f.Order, 800)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])

	// Reject with no reason: the summary links to the first reason.
	form := webtest.CardForm(t, c.Get("/queue/"+inv.ID), "reject-form")
	res := c.Post("/queue/"+inv.ID+"/reject", form)
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("reject with no reason: %d", res.StatusCode)
	}
	doc := res.Doc(t)
	if ids := webtest.ErrorSummary(t, doc); len(ids) != 1 || ids[0] != "reason" {
		t.Errorf("reject's summary links to %v, want [reason]", ids)
	}
	if got := doc.Find(`[data-testid="reject-form"] fieldset`).AttrOr("aria-describedby", ""); got != "reason-error" {
		t.Errorf("the reasons' fieldset is described by %q", got)
	}

	// Send back with no question: the summary links to the question.
	form = webtest.CardForm(t, c.Get("/queue/"+inv.ID), "send-back-form")
	res = c.Post("/queue/"+inv.ID+"/send-back", form)
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("send back with no question: %d", res.StatusCode)
	}
	doc = res.Doc(t)
	if ids := webtest.ErrorSummary(t, doc); len(ids) != 1 || ids[0] != "question" {
		t.Errorf("send-back's summary links to %v, want [question]", ids)
	}
	if got := doc.Find(`#question`).AttrOr("aria-describedby", ""); got != "question-error" || doc.Find(`#question-error`).Length() != 1 {
		t.Errorf("the question is described by %q", got)
	}

	// An edit with an amount that is not money: the summary links to it.
	form = webtest.CardForm(t, c.Get("/queue/"+inv.ID), "edit-form")
	form.Set("arg.order_id", f.Order.ID)
	form.Set("arg.amount_cents", "lots")
	form.Set("arg.reason_code", "damaged")
	res = c.Post("/queue/"+inv.ID+"/edit", form)
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("edit with a bad amount: %d", res.StatusCode)
	}
	if ids := webtest.ErrorSummary(t, res.Doc(t)); len(ids) != 1 || ids[0] != "f-arg-amount_cents" {
		t.Errorf("the edit's summary links to %v, want [f-arg-amount_cents]", ids)
	}

	// A policy saved with a bad amount and a bad deadline: both, in the
	// order of the form.
	m := b.Client(t)
	m.MustSignIn(b.Users[accounts.Manager])
	pf := webtest.PolicyForm(b, m.CSRF("/policies/shop/issue_refund"), "1", "3", "Tighter.", "save")
	pf.Set("approval_window", "forever")
	pf.Set("auto_max", "twelve")
	res = m.Post("/policies/shop/issue_refund", pf)
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("policy save with errors: %d", res.StatusCode)
	}
	if ids := webtest.ErrorSummary(t, res.Doc(t)); strings.Join(ids, " ") != "auto_max approval_window" {
		t.Errorf("the policy's summary links to %v, want [auto_max approval_window]", ids)
	}

	// A page that refused nothing has no summary.
	if n := c.Get("/queue/" + inv.ID).Doc(t).Find(`[data-testid="error-summary"]`).Length(); n != 0 {
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
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	refund := f.Refund(t, f.Order, 800)
	text := f.Describe(t, "A warm walnut lamp.")
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])

	doc := c.Get("/queue/" + refund.ID).Doc(t)
	if got := doc.Find(`header [data-testid="cannot-undo"]`).Text(); !strings.Contains(got, "Cannot be undone") {
		t.Errorf("the refund's card does not say it cannot be undone: %q", got)
	}
	if got := doc.Find(`[data-testid="approve"]`).AttrOr("data-confirm", ""); got != "approve-confirm" {
		t.Errorf("the refund's Approve asks no confirmation (data-confirm=%q)", got)
	}
	dialog := doc.Find(`dialog#approve-confirm`)
	if what := dialog.Find(`[data-testid="confirm-what"]`).Text(); !strings.Contains(what, "Refund $8.00 on order "+f.Order.ID) ||
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

	doc = c.Get("/queue/" + text.ID).Doc(t)
	if doc.Find(`[data-testid="approve"][data-confirm]`).Length() != 0 || doc.Find(`dialog`).Length() != 0 ||
		doc.Find(`[data-testid="cannot-undo"]`).Length() != 0 {
		t.Errorf("a reversible description change asks for a confirmation or says it cannot be undone")
	}

	q := c.Get("/queue").Doc(t)
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
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	inv := f.AddressChange(t)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	line := c.Get("/queue/" + inv.ID).Doc(t).Find(`[data-testid="quote-line"] [data-testid="now-after"]`)
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
	sys := c.Get("/systems").Doc(t)
	if got := sys.Find(`[data-testid="action-issue_refund"] summary`).Text(); !strings.Contains(got, "Cannot be undone") || strings.Contains(got, "irreversible") {
		t.Errorf("the systems page says the refund's risk as %q", got)
	}
}
