package shopadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/locale"
	"countersign/internal/money"
)

// The demo shop's refund policy (refund window, store-credit window,
// restocking fee), enforced here whatever the caller says.
const (
	refundWindowDays      = 30
	storeCreditWindowDays = 60
	restockingFeePercent  = 15
)

// refundRequest is the body of POST /refunds.
type refundRequest struct {
	OrderID     string `json:"order_id"`
	AmountCents int64  `json:"amount_cents"`
	Reason      string `json:"reason"`
}

// planRefund applies the refund policy to one of the customer's orders:
// the window by calendar days, then the refundable balance by reason.
func (a *Adapter) planRefund(ctx context.Context, p adapter.Principal, args map[string]any) (*plan, error) {
	cust, err := a.customer(ctx, p)
	if err != nil {
		return nil, err
	}
	order, target, err := a.findOrder(ctx, cust, str(args, "order_id"))
	if err != nil {
		return nil, err
	}
	reason, amount := str(args, "reason_code"), integer(args, "amount_cents")
	now := a.now()
	window, err := refundWindow(order, target.Display, reason, now)
	if err != nil {
		return nil, err
	}
	_, refundable := refundBalance(english(), order, reason)
	if amount > refundable {
		return nil, refundTooLarge(order, reason, amount, refundable)
	}
	q := a.localized(func(t texts) adapter.Quote {
		cur := order.Currency
		lines, _ := refundBalance(t, order, reason)
		if amount == refundable {
			// All that can be refunded: the refund line says it, once.
			lines = lines[:len(lines)-1]
		}
		if amount < refundable {
			lines = append(lines, adapter.QuoteLine{Label: t.T("refund.line.not_in_this_refund", nil), To: t.minus(refundable-amount, cur)})
		}
		lines = append(lines, adapter.QuoteLine{Label: t.T("refund.line.this_refund", nil), To: t.money(amount, cur), Emphasis: true, Sum: true})
		// The reason is sent to the shop, so the person approving sees it.
		lines = append([]adapter.QuoteLine{{Label: t.T("line.reason", nil), To: t.T("refund_reason."+reason, nil)}}, lines...)
		items := t.items(order)
		facts := orderFacts(t, order)
		facts.Title = t.T("refund.customer_title", locale.Params{"Amount": t.money(amount, cur), "Items": items})
		facts.Why = refundWhy(t, order, reason, amount, refundable)
		facts.MoneyArrives = t.T("refund.arrives", nil)
		return adapter.Quote{
			Title:  t.T("refund.title", locale.Params{"Amount": t.money(amount, cur), "ID": order.ID, "Items": items}),
			Target: target,
			Lines:  lines,
			Consequences: []string{
				t.T("refund.paid_back", locale.Params{"Number": orderNumber(order)}),
				t.T("refund.final", nil),
			},
			Customer:     facts,
			AmountCents:  &amount,
			Currency:     order.Currency,
			EffectiveAt:  &now,
			Constraints:  []string{window.words(t), shippingRule(t, reason), t.T("refund.never_exceeds", nil)},
			ConfirmLabel: t.T("refund.confirm", locale.Params{"Amount": t.money(amount, cur)}),
			DeclineLabel: t.T("refund.decline", nil),
			Reversible:   false,
		}
	})
	return &plan{quote: q, send: func(ctx context.Context, key string) (adapter.Result, error) {
		var r shopRefund
		err := a.shop.write(ctx, http.MethodPost, "/refunds", key,
			refundRequest{OrderID: order.ID, AmountCents: amount, Reason: reason}, &r)
		if err != nil {
			return adapter.Result{Steps: []adapter.Step{failedStep("create_refund", err)}}, err
		}
		paid := r.AmountCents
		return adapter.Result{
			Reference: r.ID, AmountCents: &paid, Currency: r.Currency,
			Data: map[string]any{"refund_id": r.ID, "order_id": r.OrderID, "amount_cents": r.AmountCents,
				"currency": r.Currency, "status": r.Status},
			Steps: []adapter.Step{{Name: "create_refund", Outcome: "applied", Detail: r.ID}},
		}, nil
	}}, nil
}

// refundTooLarge refuses an amount above what the policy lets the order
// refund for reason. The message is the assistant's, in English.
func refundTooLarge(order shopOrder, reason string, amount, refundable int64) error {
	msg := fmt.Sprintf("%s is more than can be refunded for %s on this order: at most %s.",
		money.Format(amount, order.Currency), words(reason), money.Format(refundable, order.Currency))
	if refundable == 0 {
		msg = fmt.Sprintf("Nothing is left to refund for %s on this order.", words(reason))
	}
	if otherReasonCovers(order, reason, amount) {
		// The reason's own rule refuses it (shipping for damaged, the
		// restocking fee for changed_mind): a decision of the refund
		// policy, not arithmetic. Trying another reason code for the
		// same money is guessing around the policy, so the order is blocked.
		return &adapter.Error{Code: "amount_above_refundable", Outcome: adapter.Refused, PolicyRefusal: true,
			Message: msg + " " + shippingRule(english(), reason),
			Hint: fmt.Sprintf("Do not propose this order again under another reason code or amount. Tell the customer "+
				"the policy allows at most %s for %s, and hand the case to a person if they want more.",
				money.Format(refundable, order.Currency), words(reason)),
			Fields: map[string]string{"amount_cents": fmt.Sprintf("must be at most %d for %s", refundable, reason)}}
	}
	return &adapter.Error{Code: "amount_above_refundable", Outcome: adapter.Refused, Message: msg,
		Hint:   fmt.Sprintf("Propose at most %s, or explain to the customer why the refund is smaller than they asked.", money.Format(refundable, order.Currency)),
		Fields: map[string]string{"amount_cents": fmt.Sprintf("must be at most %d", refundable)}}
}

// refundWhy says in the customer's words why the refund is less than what
// they paid: each rule of the policy that held part of it back, earlier
// refunds, and the part not asked for. When a refund of the demo shop
// arrives (refund.arrives): its payment processor pays refunds back to
// the card within 5–10 business days.
func refundWhy(t texts, o shopOrder, reason string, amount, refundable int64) []string {
	cur := o.Currency
	var why []string
	switch {
	case reason == "changed_mind":
		why = append(why, t.T("refund.why.changed_mind", locale.Params{"Percent": restockingFeePercent}))
	case reason != "duplicate_charge" && reason != "not_received" && reason != "wrong_item" && o.ShippingCents > 0:
		why = append(why, t.T("refund.why.shipping_kept", locale.Params{"Amount": t.money(o.ShippingCents, cur)}))
	}
	if o.AmountRefundedCents > 0 {
		why = append(why, t.T("refund.why.refunded_before", locale.Params{"Amount": t.money(o.AmountRefundedCents, cur)}))
	}
	if amount < refundable {
		why = append(why, t.T("refund.why.rest_later", locale.Params{"Amount": t.money(refundable-amount, cur)}))
	}
	return why
}

// window is where an order stands in the refund window: what happened
// to it ("delivered", "shipped", "placed"), on which day, how many whole
// calendar days ago.
type window struct {
	what string
	on   time.Time
	days int
}

// words is the window's rule as a quote's constraint: "The order was
// delivered 3 days ago, on April 9, 2026: inside the 30-day refund window."
func (w window) words(t texts) string {
	return t.N("refund.window."+w.what, w.days, locale.Params{"Date": t.date(w.on), "Window": refundWindowDays})
}

// refundWindow checks the days since delivery (since shipping for
// not_received) in whole calendar days; outside it the refusal says which
// rule applied.
func refundWindow(o shopOrder, display, reason string, now time.Time) (window, error) {
	from, what := o.DeliveredAt, "delivered"
	switch {
	case reason == "not_received":
		if (o.FulfilmentStatus != "not_received" && o.FulfilmentStatus != "shipped") || o.ShippedAt == nil {
			return window{}, &adapter.Error{Code: "reason_does_not_apply", Outcome: adapter.Refused,
				Message: fmt.Sprintf("%s is %s; not_received applies only to an order that shipped and has not arrived.", display, words(o.FulfilmentStatus)),
				Hint:    "Ask the customer what happened; if it arrived damaged or wrong, use that reason instead."}
		}
		from, what = o.ShippedAt, "shipped"
	case reason == "duplicate_charge" && from == nil:
		from, what = &o.PlacedAt, "placed"
	case from == nil:
		return window{}, &adapter.Error{Code: "not_delivered", Outcome: adapter.Refused,
			Message: fmt.Sprintf("%s has not been delivered, so %s does not apply yet.", display, words(reason)),
			Hint:    "If the parcel is lost, use not_received once it has shipped; otherwise wait for delivery."}
	}
	days := calendarDays(*from, now)
	when := fmt.Sprintf("%s %s ago, on %s", what, plural(days, "day"), longDate(*from))
	switch {
	case days <= refundWindowDays:
		return window{what: what, on: *from, days: days}, nil
	case days <= storeCreditWindowDays:
		return window{}, &adapter.Error{Code: "outside_refund_window_store_credit", Outcome: adapter.Refused, PolicyRefusal: true,
			Message: fmt.Sprintf("%s was %s. Refunds are available for %d days; from day %d to %d the customer can have store credit instead.",
				display, when, refundWindowDays, refundWindowDays+1, storeCreditWindowDays),
			Hint: "Offer store credit through a person; do not call issue_refund again for this order."}
	default:
		return window{}, &adapter.Error{Code: "outside_refund_window", Outcome: adapter.Refused, PolicyRefusal: true,
			Message: fmt.Sprintf("%s was %s. Refunds are available for %d days and store credit for %d, so neither applies any more.",
				display, when, refundWindowDays, storeCreditWindowDays),
			Hint: "Decline politely and tell the customer why; do not call issue_refund again for this order."}
	}
}

// refundBalance is the policy's arithmetic, as quote lines that add up
// where they are read, and the most that may be refunded: items, plus
// shipping for not_received and wrong_item, less 15% for changed_mind, the
// full charge for duplicate_charge; less earlier refunds; never above the
// shop's own refundable balance. It starts from what the customer paid and
// names each part held back, so no line reads as a free one.
func refundBalance(t texts, o shopOrder, reason string) ([]adapter.QuoteLine, int64) {
	cur := o.Currency
	var lines []adapter.QuoteLine
	base := o.TotalCents
	if reason == "duplicate_charge" || o.ShippingCents == 0 {
		lines = append(lines, adapter.QuoteLine{Label: t.T("refund.line.you_paid", nil), To: t.money(o.TotalCents, cur)})
	} else {
		lines = append(lines,
			adapter.QuoteLine{Label: t.T("refund.line.items", nil), To: t.money(o.SubtotalCents, cur)},
			adapter.QuoteLine{Label: t.T("refund.line.shipping", nil), To: t.money(o.ShippingCents, cur)},
			adapter.QuoteLine{Label: t.T("refund.line.you_paid", nil), To: t.money(o.TotalCents, cur), Sum: true})
		if reason != "not_received" && reason != "wrong_item" {
			base -= o.ShippingCents
			lines = append(lines, adapter.QuoteLine{Label: t.T("refund.line.shipping_kept."+reason, nil), To: t.minus(o.ShippingCents, cur)})
		}
	}
	if reason == "changed_mind" {
		fee := (o.SubtotalCents*restockingFeePercent + 50) / 100
		base -= fee
		lines = append(lines, adapter.QuoteLine{Label: t.T("refund.line.restocking_fee", locale.Params{"Percent": restockingFeePercent}), To: t.minus(fee, cur)})
	}
	if o.AmountRefundedCents > 0 {
		lines = append(lines, adapter.QuoteLine{Label: t.T("refund.line.already_refunded", nil), To: t.minus(o.AmountRefundedCents, cur)})
	}
	refundable := max(base-o.AmountRefundedCents, 0)
	if o.RefundableCents < refundable {
		// The shop holds less than the policy allows: what it has left caps it.
		lines = append(lines, adapter.QuoteLine{Label: t.T("refund.line.more_than_left", nil), To: t.minus(refundable-max(o.RefundableCents, 0), cur)})
		refundable = max(o.RefundableCents, 0)
	} else if base-o.AmountRefundedCents < 0 {
		// Earlier refunds took more than this reason allows: nothing is left.
		lines = append(lines, adapter.QuoteLine{Label: t.T("refund.line.more_than_reason", nil), To: t.money(o.AmountRefundedCents-base, cur)})
	}
	lines = append(lines, adapter.QuoteLine{Label: t.T("refund.line.refundable."+reason, nil), To: t.money(refundable, cur), Sum: true})
	return lines, refundable
}

// otherReasonCovers reports whether amount would be refundable on the
// order under a reason other than reason, so that reason's own rule is
// what refuses it; when none covers it the amount is simply more than the
// order has left.
func otherReasonCovers(o shopOrder, reason string, amount int64) bool {
	for _, r := range RefundReasons {
		if _, refundable := refundBalance(english(), o, r); r != reason && amount <= refundable {
			return true
		}
	}
	return false
}

// shippingRule is the refund policy's rule on shipping for reason, in
// t's language, with the policy's restocking fee.
func shippingRule(t texts, reason string) string {
	return t.T("refund.rule."+reason, locale.Params{"Percent": restockingFeePercent})
}

// verifyRefund lists the order's refunds: the call's refund must be there
// with the amount asked.
func (a *Adapter) verifyRefund(ctx context.Context, p adapter.Principal, call adapter.Call, args map[string]any, res *adapter.Result) (adapter.Verification, error) {
	cust, err := a.customer(ctx, p)
	if err != nil {
		return adapter.Verification{}, err
	}
	order, _, err := a.findOrder(ctx, cust, targetRef(call, args, "order_id"))
	if err != nil {
		return adapter.Verification{}, err
	}
	refundID := ""
	if res != nil {
		refundID = res.Reference
	}
	if refundID == "" {
		effects, err := a.effects(ctx, call.IdempotencyKey)
		if err != nil {
			return adapter.Verification{}, err
		}
		if r := refundEvidence(call.IdempotencyKey, effects); r != nil {
			refundID = r.Reference
		}
	}
	var list shopList[shopRefund]
	if err := a.shop.read(ctx, "/refunds?limit=100&order_id="+url.QueryEscape(order.ID), &list); err != nil {
		return adapter.Verification{}, err
	}
	amount := integer(args, "amount_cents")
	for _, r := range list.Data {
		if r.ID == refundID && refundID != "" {
			return adapter.Verification{Verified: r.AmountCents == amount,
				Evidence: fmt.Sprintf("The refunds of order %s include %s for %s (%s).", order.ID, r.ID, money.Format(r.AmountCents, r.Currency), r.Status),
				Observed: map[string]any{"refund_id": r.ID, "order_id": order.ID, "amount_cents": r.AmountCents, "status": r.Status},
				At:       a.now()}, nil
		}
	}
	return adapter.Verification{Verified: false,
		Evidence: fmt.Sprintf("The %s of order %s do not include the refund %q.", plural(len(list.Data), "refund"), order.ID, refundID),
		Observed: map[string]any{"order_id": order.ID, "refunds": len(list.Data)}, At: a.now()}, nil
}

// refundEvidence: a refund.created effect carries the refund's id.
func refundEvidence(_ string, effects []shopEffect) *adapter.Result {
	for _, e := range effects {
		if e.Kind != effectRefundCreated {
			continue
		}
		var d struct {
			RefundID    string `json:"refund_id"`
			AmountCents int64  `json:"amount_cents"`
		}
		if json.Unmarshal(e.Data, &d) != nil || d.RefundID == "" {
			continue
		}
		return &adapter.Result{Reference: d.RefundID,
			Data:  map[string]any{"refund_id": d.RefundID, "order_id": e.Object, "amount_cents": d.AmountCents},
			Steps: []adapter.Step{{Name: "create_refund", Outcome: "applied", Detail: d.RefundID}}}
	}
	return nil
}
