package shopadapter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/locale"
	"countersign/internal/money"
)

// subscriptionPatch is the body of PATCH /subscriptions/{id} as a billing
// page sends it; expected_version makes a stale write a conflict.
type subscriptionPatch struct {
	Status            string  `json:"status"`
	CancelAtPeriodEnd *bool   `json:"cancel_at_period_end,omitempty"`
	CancelReason      *string `json:"cancel_reason,omitempty"`
	ExpectedVersion   int     `json:"expected_version"`
}

// versionBody is the body of POST /invoices/{id}/void and /send.
type versionBody struct {
	ExpectedVersion int `json:"expected_version"`
}

// planCancel checks everything a cancellation needs: the subscription is
// the customer's and active, it was not cancelled through the adapter in
// the last 24 hours, and an immediate cancellation can settle its balance.
func (a *Adapter) planCancel(ctx context.Context, p adapter.Principal, args map[string]any) (*plan, error) {
	cust, err := a.customer(ctx, p)
	if err != nil {
		return nil, err
	}
	sub, target, err := a.findSubscription(ctx, cust, str(args, "subscription_id"))
	if err != nil {
		return nil, err
	}
	reason, immediately := str(args, "reason_code"), str(args, "effective") == "immediately"
	if sub.Status == "cancelled" {
		return nil, &adapter.Error{Code: "already_cancelled", Outcome: adapter.Refused,
			Message: fmt.Sprintf("%s is already cancelled (%s).", target.Display, subscriptionState(sub)),
			Hint:    "Nothing to cancel; tell the customer when their access ends. reinstate_subscription undoes a cancellation."}
	}
	if err := a.checkOncePerDay(ctx, sub.ID, target.Display); err != nil {
		return nil, err
	}
	var charge int64
	if immediately && sub.BalanceCents > 0 {
		if sub.PaymentMethod.Status == "declined" {
			return nil, &adapter.Error{Code: "payment_method_declined", Outcome: adapter.Refused,
				Message: fmt.Sprintf("The card ending %s was declined, and the outstanding balance of %s must be paid before %s can be cancelled immediately.",
					sub.PaymentMethod.Last4, money.Format(sub.BalanceCents, sub.Currency), target.Display),
				Hint: "Ask the customer to update their card; do not retry the cancellation."}
		}
		charge = sub.BalanceCents
	}
	var upcoming *shopInvoice
	if sub.UpcomingInvoiceID != nil {
		var inv shopInvoice
		if err := a.shop.read(ctx, "/invoices/"+url.PathEscape(*sub.UpcomingInvoiceID), &inv); err != nil {
			return nil, err
		}
		upcoming = &inv
	}
	q := a.cancelQuote(target, sub, upcoming, reason, immediately, charge)
	return &plan{quote: q, send: func(ctx context.Context, key string) (adapter.Result, error) {
		return a.sendCancel(ctx, key, target.Display, sub, upcoming, reason, !immediately)
	}}, nil
}

// checkOncePerDay refuses a second cancellation of a subscription within 24
// hours, counting every earlier call whose effect happened or may have.
func (a *Adapter) checkOncePerDay(ctx context.Context, subID, display string) error {
	if a.ledger == nil {
		return adapter.ErrNoLedger
	}
	n, err := a.ledger.CountRecent(ctx, a.name, ActionCancelSubscription, subID, a.now().Add(-24*time.Hour))
	if err != nil {
		return adapter.LedgerFailure(err)
	}
	if n > 0 {
		return &adapter.Error{Code: "limit_one_per_day", Outcome: adapter.Refused, PolicyRefusal: true,
			Message: fmt.Sprintf("%s was already cancelled in the last 24 hours; at most one cancellation per subscription per day.", display),
			Hint:    "Do not try again today. If the customer needs more, hand the conversation to a person."}
	}
	return nil
}

func (a *Adapter) cancelQuote(target adapter.Target, sub shopSubscription, upcoming *shopInvoice, reason string, immediately bool, charge int64) adapter.Quote {
	now := a.now()
	until := lastDay(sub.CurrentPeriodEnd)
	effective := sub.CurrentPeriodEnd.UTC()
	if immediately {
		effective = now
	}
	return a.localized(func(t texts) adapter.Quote {
		q := adapter.Quote{
			Title:  t.T("cancel.title", locale.Params{"Plan": sub.Plan, "Site": sub.Site}),
			Target: target,
			Lines: []adapter.QuoteLine{{Label: t.T("line.status", nil), From: t.T("value.active", nil), To: t.T("value.cancelled", nil),
				Customer: t.T("cancel.customer", nil)}},
			ConfirmLabel: t.T("cancel.confirm", nil),
			DeclineLabel: t.T("cancel.decline", nil),
			Reversible:   true,
			Constraints: []string{
				t.T("cancel.once_a_day", nil),
				t.T("cancel.undo_until", locale.Params{"Date": t.date(until)}),
			},
			EffectiveAt: &effective,
		}
		if immediately {
			q.Lines = append(q.Lines, adapter.QuoteLine{Label: t.T("line.access", nil),
				From: t.T("cancel.access_until", locale.Params{"Date": t.date(until)}), To: t.T("cancel.access_ends_now", nil)})
			q.Consequences = append(q.Consequences, t.T("cancel.ends_now", nil))
		} else {
			q.Lines = append(q.Lines, adapter.QuoteLine{Label: t.T("line.access_until", nil), To: t.date(until)})
			q.Consequences = append(q.Consequences, t.T("cancel.keep_access", locale.Params{"Date": t.date(until)}))
		}
		if charge > 0 {
			card := locale.Params{"Amount": t.money(charge, sub.Currency), "Last4": sub.PaymentMethod.Last4}
			q.AmountCents, q.Currency = &charge, sub.Currency
			q.Lines = append(q.Lines, adapter.QuoteLine{Label: t.T("line.balance_now", nil), To: t.T("cancel.charge_card", card)})
			q.Consequences = append(q.Consequences, t.T("cancel.balance_charged", card))
			q.Constraints = append(q.Constraints, t.T("cancel.settles_first", nil))
		}
		if upcoming != nil {
			q.Lines = append(q.Lines, adapter.QuoteLine{Label: t.T("line.next_charge", nil), Emphasis: true, To: t.T("value.none", nil),
				From: t.T("value.amount_on", locale.Params{"Amount": t.money(upcoming.AmountCents, upcoming.Currency), "Date": t.date(upcoming.PeriodStart)})})
			q.Consequences = append(q.Consequences, t.T("cancel.not_charged", locale.Params{"Date": t.date(upcoming.PeriodStart)}))
		}
		q.Lines = append(q.Lines, adapter.QuoteLine{Label: t.T("line.reason", nil), To: t.T("cancel_reason."+reason, nil)})
		return q
	})
}

// sendCancel runs the cancellation workflow: mark the subscription
// cancelled, then void its upcoming invoice. When the shop answers that the
// void failed, the first step is undone and the call is refused as rolled
// back; when an answer is lost, or undoing fails, the outcome is Unknown. A
// half-done cancellation is never reported as done.
func (a *Adapter) sendCancel(ctx context.Context, key, display string, sub shopSubscription, upcoming *shopInvoice, reason string, atPeriodEnd bool) (adapter.Result, error) {
	res := adapter.Result{Reference: reference("sub_cancel_", key)}
	path := "/subscriptions/" + url.PathEscape(sub.ID)
	var cancelled shopSubscription
	err := a.shop.write(ctx, http.MethodPatch, path, key, subscriptionPatch{Status: "cancelled",
		CancelAtPeriodEnd: &atPeriodEnd, CancelReason: &reason, ExpectedVersion: sub.Version}, &cancelled)
	if err != nil {
		res.Steps = append(res.Steps, failedStep("cancel_subscription", err))
		return res, err
	}
	res.Steps = append(res.Steps, adapter.Step{Name: "cancel_subscription", Outcome: "applied"})
	res.Data = map[string]any{
		"subscription_id":      sub.ID,
		"status":               cancelled.Status,
		"cancel_at_period_end": cancelled.CancelAtPeriodEnd,
		"access_until":         longDate(lastDay(sub.CurrentPeriodEnd)),
		"charged_cents":        sub.BalanceCents - cancelled.BalanceCents,
	}
	if !atPeriodEnd {
		res.Data["access_until"] = longDate(a.now())
	}
	if upcoming == nil {
		return res, nil
	}
	err = a.shop.write(ctx, http.MethodPost, "/invoices/"+url.PathEscape(upcoming.ID)+"/void", key,
		versionBody{ExpectedVersion: upcoming.Version}, nil)
	// An invoice someone else voided meanwhile is the state this step wants.
	if err == nil || isCode(err, "invoice_already_void") {
		res.Steps = append(res.Steps, adapter.Step{Name: "void_upcoming_invoice", Outcome: "applied", Detail: upcoming.ID})
		res.Data["invoice_voided"] = upcoming.ID
		return res, nil
	}
	res.Steps = append(res.Steps, failedStep("void_upcoming_invoice", err))
	if !answered(err) {
		ue := adapter.Unknowable(err)
		ue.Message = fmt.Sprintf("%s was cancelled, but the shop did not confirm that its upcoming invoice was voided; the next charge may still happen.", display)
		ue.Hint = "Do not retry. A person will check the invoice (reconcile this call)."
		return res, ue
	}
	// The shop answered that the void failed, so undo the cancellation.
	// Reinstating is safe whether or not the void was applied: the shop
	// bills the next period again either way.
	err2 := a.shop.write(ctx, http.MethodPatch, path, key,
		subscriptionPatch{Status: "active", ExpectedVersion: cancelled.Version}, nil)
	if err2 != nil {
		res.Steps = append(res.Steps, failedStep("reinstate_subscription", err2))
		return res, &adapter.Error{Code: adapter.CodeOutcomeUnknown, Outcome: adapter.Unknown,
			Message: fmt.Sprintf("%s was cancelled, its upcoming invoice could not be voided, and undoing the cancellation failed; the subscription may be half cancelled.", display),
			Hint:    "Do not retry. A person must check the subscription and its invoice now.", Err: errors.Join(err, err2)}
	}
	res.Steps = append(res.Steps, adapter.Step{Name: "reinstate_subscription", Outcome: "compensated", Detail: "cancellation undone"})
	charged, _ := res.Data["charged_cents"].(int64)
	res.Data = map[string]any{"subscription_id": sub.ID, "status": "active"}
	if charged > 0 {
		// Reinstating does not give back the balance the immediate
		// cancellation settled: something changed, and "nothing changed"
		// would be a lie. A person refunds it or finishes the cancellation.
		res.Data["charged_cents"] = charged
		return res, &adapter.Error{Code: adapter.CodeOutcomeUnknown, Outcome: adapter.Unknown,
			Message: fmt.Sprintf("%s was cancelled and then reinstated because its upcoming invoice could not be voided, but the %s balance charged to the card ending %s when it was cancelled was not returned.",
				display, money.Format(charged, sub.Currency), sub.PaymentMethod.Last4),
			Hint: "Do not retry. A person must refund the charge or finish the cancellation, then reconcile this call.", Err: err}
	}
	return res, &adapter.Error{Code: "cancellation_rolled_back", Outcome: adapter.Refused,
		Message: fmt.Sprintf("%s was not cancelled: the shop could not stop its upcoming invoice, so the cancellation was undone. Nothing changed; the plan is active as before.", display),
		Hint:    "Tell the customer the cancellation did not go through and nothing changed; a person can look into it. Do not retry it yourself.",
		Err:     err}
}

// failedStep records a step that failed, by what is known of its effect.
func failedStep(name string, err error) adapter.Step {
	outcome, detail := "refused", err.Error()
	if ae, ok := adapter.AsError(err); ok {
		detail = ae.Code
		if ae.Outcome == adapter.Unknown {
			outcome = "unknown"
		}
	}
	return adapter.Step{Name: name, Outcome: outcome, Detail: detail}
}

// verifyCancel reads the subscription again: it must be cancelled as asked
// (at period end or not) with no upcoming invoice left, and the invoice the
// call voided must read void.
func (a *Adapter) verifyCancel(ctx context.Context, p adapter.Principal, call adapter.Call, args map[string]any, res *adapter.Result) (adapter.Verification, error) {
	sub, err := a.verifiedSubscription(ctx, p, call, args)
	if err != nil {
		return adapter.Verification{}, err
	}
	atPeriodEnd := str(args, "effective") == "end_of_period"
	observed := map[string]any{"subscription_id": sub.ID, "status": sub.Status,
		"cancel_at_period_end": sub.CancelAtPeriodEnd, "upcoming_invoice_id": sub.UpcomingInvoiceID}
	invoiceOK, invoiceWords := sub.UpcomingInvoiceID == nil, "it has no upcoming invoice"
	if !invoiceOK {
		invoiceWords = "invoice " + *sub.UpcomingInvoiceID + " is still upcoming"
	}
	if voided, _ := resultData(res, "invoice_voided"); voided != "" {
		var inv shopInvoice
		if err := a.shop.read(ctx, "/invoices/"+url.PathEscape(voided), &inv); err != nil {
			return adapter.Verification{}, err
		}
		observed["invoice_status"] = inv.Status
		if inv.Status != "void" {
			invoiceOK, invoiceWords = false, "invoice "+voided+" is "+inv.Status
		}
	}
	ok := sub.Status == "cancelled" && sub.CancelAtPeriodEnd == atPeriodEnd && invoiceOK
	evidence := fmt.Sprintf("Read %s again: status %s, cancel at period end %t; %s.",
		subscriptionDisplay(sub), sub.Status, sub.CancelAtPeriodEnd, invoiceWords)
	return adapter.Verification{Verified: ok, Evidence: evidence, Observed: observed, At: a.now()}, nil
}

// verifiedSubscription re-reads the subscription a call acted on.
func (a *Adapter) verifiedSubscription(ctx context.Context, p adapter.Principal, call adapter.Call, args map[string]any) (shopSubscription, error) {
	cust, err := a.customer(ctx, p)
	if err != nil {
		return shopSubscription{}, err
	}
	sub, _, err := a.findSubscription(ctx, cust, targetRef(call, args, "subscription_id"))
	return sub, err
}

// cancelEvidence: a cancellation is whole only when the subscription was
// cancelled, its invoice voided, and nothing reinstated it under the same
// key.
func cancelEvidence(key string, effects []shopEffect) *adapter.Result {
	var cancelled, voided, reinstated bool
	var steps []adapter.Step
	for _, e := range effects {
		switch e.Kind {
		case effectSubscriptionCancelled:
			cancelled = true
			steps = append(steps, adapter.Step{Name: "cancel_subscription", Outcome: "applied"})
		case effectInvoiceVoided:
			voided = true
			steps = append(steps, adapter.Step{Name: "void_upcoming_invoice", Outcome: "applied", Detail: e.Object})
		case effectSubscriptionReinstated:
			reinstated = true
		}
	}
	if !cancelled || !voided || reinstated {
		return nil
	}
	return &adapter.Result{Reference: reference("sub_cancel_", key), Steps: steps}
}
