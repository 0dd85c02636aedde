package shopadapter

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"countersign/internal/adapter"
	"countersign/internal/locale"
)

// planReinstate checks that the subscription is the customer's, cancelled,
// and still inside its current period.
func (a *Adapter) planReinstate(ctx context.Context, p adapter.Principal, args map[string]any) (*plan, error) {
	cust, err := a.customer(ctx, p)
	if err != nil {
		return nil, err
	}
	sub, target, err := a.findSubscription(ctx, cust, str(args, "subscription_id"))
	if err != nil {
		return nil, err
	}
	if sub.Status != "cancelled" {
		return nil, &adapter.Error{Code: "not_cancelled", Outcome: adapter.Refused,
			Message: fmt.Sprintf("%s is active; only a cancelled subscription can be reinstated.", target.Display),
			Hint:    "Nothing to reinstate; tell the customer their plan is active."}
	}
	now := a.now()
	if !sub.CurrentPeriodEnd.After(now) {
		return nil, &adapter.Error{Code: "subscription_ended", Outcome: adapter.Refused,
			Message: fmt.Sprintf("%s ended with its period on %s and cannot be reinstated.", target.Display, longDate(sub.CurrentPeriodEnd)),
			Hint:    "A new subscription is needed; hand this to a person."}
	}
	renews := sub.CurrentPeriodEnd.UTC()
	q := a.localized(func(t texts) adapter.Quote {
		on := locale.Params{"Amount": t.money(sub.PriceCents, sub.Currency), "Date": t.date(renews)}
		return adapter.Quote{
			Title:  t.T("reinstate.title", locale.Params{"Plan": sub.Plan, "Site": sub.Site}),
			Target: target,
			Lines: []adapter.QuoteLine{
				{Label: t.T("line.status", nil), From: t.T("value.cancelled", nil), To: t.T("value.active", nil), Customer: t.T("reinstate.customer", nil)},
				{Label: t.T("line.next_charge", nil), From: t.T("value.none", nil), To: t.T("value.amount_on", on), Emphasis: true},
			},
			Consequences: []string{
				t.T("reinstate.renews", locale.Params{"Plan": sub.Plan, "Site": sub.Site, "Date": t.date(renews)}),
				t.T("reinstate.charged", on),
			},
			EffectiveAt:  &now,
			Constraints:  []string{t.T("reinstate.only_cancelled", nil)},
			ConfirmLabel: t.T("reinstate.confirm", nil),
			DeclineLabel: t.T("reinstate.decline", nil),
			Reversible:   true,
		}
	})
	return &plan{quote: q, send: func(ctx context.Context, key string) (adapter.Result, error) {
		res := adapter.Result{Reference: reference("sub_reinstate_", key)}
		var back shopSubscription
		err := a.shop.write(ctx, http.MethodPatch, "/subscriptions/"+url.PathEscape(sub.ID), key,
			subscriptionPatch{Status: "active", ExpectedVersion: sub.Version}, &back)
		if err != nil {
			res.Steps = []adapter.Step{failedStep("reinstate_subscription", err)}
			return res, err
		}
		res.Steps = []adapter.Step{{Name: "reinstate_subscription", Outcome: "applied"}}
		res.Data = map[string]any{"subscription_id": back.ID, "status": back.Status, "renews_on": longDate(renews)}
		return res, nil
	}}, nil
}

// verifyReinstate reads the subscription again: it must be active.
func (a *Adapter) verifyReinstate(ctx context.Context, p adapter.Principal, call adapter.Call, args map[string]any, _ *adapter.Result) (adapter.Verification, error) {
	sub, err := a.verifiedSubscription(ctx, p, call, args)
	if err != nil {
		return adapter.Verification{}, err
	}
	return adapter.Verification{
		Verified: sub.Status == "active",
		Evidence: fmt.Sprintf("Read %s again: status %s.", subscriptionDisplay(sub), sub.Status),
		Observed: map[string]any{"subscription_id": sub.ID, "status": sub.Status, "upcoming_invoice_id": sub.UpcomingInvoiceID},
		At:       a.now(),
	}, nil
}
