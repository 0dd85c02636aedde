package shopadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"countersign/internal/adapter"
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
	lines, refundable := refundBalance(order, reason)
	if amount > refundable {
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
			return nil, &adapter.Error{Code: "amount_above_refundable", Outcome: adapter.Refused, PolicyRefusal: true,
				Message: msg + " " + shippingRule(reason),
				Hint: fmt.Sprintf("Do not propose this order again under another reason code or amount. Tell the customer "+
					"the policy allows at most %s for %s, and hand the case to a person if they want more.",
					money.Format(refundable, order.Currency), words(reason)),
				Fields: map[string]string{"amount_cents": fmt.Sprintf("must be at most %d for %s", refundable, reason)}}
		}
		return nil, &adapter.Error{Code: "amount_above_refundable", Outcome: adapter.Refused, Message: msg,
			Hint:   fmt.Sprintf("Propose at most %s, or explain to the customer why the refund is smaller than they asked.", money.Format(refundable, order.Currency)),
			Fields: map[string]string{"amount_cents": fmt.Sprintf("must be at most %d", refundable)}}
	}
	if amount == refundable {
		// All that can be refunded: the refund line says it, once.
		lines = lines[:len(lines)-1]
	}
	if amount < refundable {
		lines = append(lines, adapter.QuoteLine{Label: "Not in this refund (can still be refunded later)",
			To: "−" + money.Format(refundable-amount, order.Currency)})
	}
	lines = append(lines, adapter.QuoteLine{Label: "This refund", To: money.Format(amount, order.Currency), Emphasis: true, Sum: true})
	// The reason is sent to the shop, so the person approving sees it.
	lines = append([]adapter.QuoteLine{{Label: "Reason", To: words(reason)}}, lines...)
	facts := orderFacts(order)
	facts.Title = fmt.Sprintf("Refund %s for your %s", money.Format(amount, order.Currency), orderItems(order))
	facts.Why = refundWhy(order, reason, amount, refundable)
	facts.MoneyArrives = refundArrives
	q := adapter.Quote{
		Title:  fmt.Sprintf("Refund %s on order %s (%s)", money.Format(amount, order.Currency), order.ID, orderItems(order)),
		Target: target,
		Lines:  lines,
		Consequences: []string{
			fmt.Sprintf("The refund is paid back to the card used for order %s.", orderNumber(order)),
			"A refund cannot be undone.",
		},
		Customer:     facts,
		AmountCents:  &amount,
		Currency:     order.Currency,
		EffectiveAt:  &now,
		Constraints:  []string{window, shippingRule(reason), "A refund never exceeds the refundable balance for its reason, less earlier refunds."},
		ConfirmLabel: "Refund " + money.Format(amount, order.Currency),
		DeclineLabel: "Don't refund",
		Reversible:   false,
	}
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

// refundArrives is when a refund of the demo shop reaches the customer:
// its payment processor pays refunds back to the card within 5–10
// business days.
const refundArrives = "Within 5–10 business days, on the card you paid with."

// refundWhy says in the customer's words why the refund is less than what
// they paid: each rule of the policy that held part of it back, earlier
// refunds, and the part not asked for.
func refundWhy(o shopOrder, reason string, amount, refundable int64) []string {
	cur := o.Currency
	var why []string
	switch {
	case reason == "changed_mind":
		why = append(why, fmt.Sprintf("When you change your mind, shipping is not refunded and a %d%% restocking fee is kept on the items.", restockingFeePercent))
	case reason != "duplicate_charge" && reason != "not_received" && reason != "wrong_item" && o.ShippingCents > 0:
		why = append(why, fmt.Sprintf("Shipping (%s) is not refunded when an item arrives %s: the delivery itself took place.",
			money.Format(o.ShippingCents, cur), words(reason)))
	}
	if o.AmountRefundedCents > 0 {
		why = append(why, fmt.Sprintf("%s of this order was refunded before.", money.Format(o.AmountRefundedCents, cur)))
	}
	if amount < refundable {
		why = append(why, fmt.Sprintf("This refund covers the amount asked for. The other %s that can be refunded is not part of it and can still be refunded later.",
			money.Format(refundable-amount, cur)))
	}
	return why
}

// refundWindow checks the days since delivery (since shipping for
// not_received) in whole calendar days, and says in words which rule
// applied.
func refundWindow(o shopOrder, display, reason string, now time.Time) (string, error) {
	from, what := o.DeliveredAt, "delivered"
	switch {
	case reason == "not_received":
		if (o.FulfilmentStatus != "not_received" && o.FulfilmentStatus != "shipped") || o.ShippedAt == nil {
			return "", &adapter.Error{Code: "reason_does_not_apply", Outcome: adapter.Refused,
				Message: fmt.Sprintf("%s is %s; not_received applies only to an order that shipped and has not arrived.", display, words(o.FulfilmentStatus)),
				Hint:    "Ask the customer what happened; if it arrived damaged or wrong, use that reason instead."}
		}
		from, what = o.ShippedAt, "shipped"
	case reason == "duplicate_charge" && from == nil:
		from, what = &o.PlacedAt, "placed"
	case from == nil:
		return "", &adapter.Error{Code: "not_delivered", Outcome: adapter.Refused,
			Message: fmt.Sprintf("%s has not been delivered, so %s does not apply yet.", display, words(reason)),
			Hint:    "If the parcel is lost, use not_received once it has shipped; otherwise wait for delivery."}
	}
	days := calendarDays(*from, now)
	when := fmt.Sprintf("%s %s ago, on %s", what, plural(days, "day"), longDate(*from))
	switch {
	case days <= refundWindowDays:
		return fmt.Sprintf("The order was %s: inside the %d-day refund window.", when, refundWindowDays), nil
	case days <= storeCreditWindowDays:
		return "", &adapter.Error{Code: "outside_refund_window_store_credit", Outcome: adapter.Refused, PolicyRefusal: true,
			Message: fmt.Sprintf("%s was %s. Refunds are available for %d days; from day %d to %d the customer can have store credit instead.",
				display, when, refundWindowDays, refundWindowDays+1, storeCreditWindowDays),
			Hint: "Offer store credit through a person; do not call issue_refund again for this order."}
	default:
		return "", &adapter.Error{Code: "outside_refund_window", Outcome: adapter.Refused, PolicyRefusal: true,
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
func refundBalance(o shopOrder, reason string) ([]adapter.QuoteLine, int64) {
	cur := o.Currency
	neg := func(c int64) string { return "−" + money.Format(c, cur) }
	var lines []adapter.QuoteLine
	base := o.TotalCents
	if reason == "duplicate_charge" || o.ShippingCents == 0 {
		lines = append(lines, adapter.QuoteLine{Label: "You paid", To: money.Format(o.TotalCents, cur)})
	} else {
		lines = append(lines,
			adapter.QuoteLine{Label: "Items", To: money.Format(o.SubtotalCents, cur)},
			adapter.QuoteLine{Label: "Shipping", To: money.Format(o.ShippingCents, cur)},
			adapter.QuoteLine{Label: "You paid", To: money.Format(o.TotalCents, cur), Sum: true})
		if reason != "not_received" && reason != "wrong_item" {
			base -= o.ShippingCents
			lines = append(lines, adapter.QuoteLine{Label: "Shipping isn't refunded when " + reasonWhen(reason), To: neg(o.ShippingCents)})
		}
	}
	if reason == "changed_mind" {
		fee := (o.SubtotalCents*restockingFeePercent + 50) / 100
		base -= fee
		lines = append(lines, adapter.QuoteLine{Label: fmt.Sprintf("Restocking fee (%d%% of the items)", restockingFeePercent), To: neg(fee)})
	}
	if o.AmountRefundedCents > 0 {
		lines = append(lines, adapter.QuoteLine{Label: "Already refunded", To: neg(o.AmountRefundedCents)})
	}
	refundable := max(base-o.AmountRefundedCents, 0)
	if o.RefundableCents < refundable {
		// The shop holds less than the policy allows: what it has left caps it.
		lines = append(lines, adapter.QuoteLine{Label: "More than the order has left to refund", To: neg(refundable - max(o.RefundableCents, 0))})
		refundable = max(o.RefundableCents, 0)
	} else if base-o.AmountRefundedCents < 0 {
		// Earlier refunds took more than this reason allows: nothing is left.
		lines = append(lines, adapter.QuoteLine{Label: "More than this reason allows", To: money.Format(o.AmountRefundedCents-base, cur)})
	}
	lines = append(lines, adapter.QuoteLine{Label: "Can be refunded when " + reasonWhen(reason), To: money.Format(refundable, cur), Sum: true})
	return lines, refundable
}

// otherReasonCovers reports whether amount would be refundable on the
// order under a reason other than reason, so that reason's own rule is
// what refuses it; when none covers it the amount is simply more than the
// order has left.
func otherReasonCovers(o shopOrder, reason string, amount int64) bool {
	for _, r := range RefundReasons {
		if _, refundable := refundBalance(o, r); r != reason && amount <= refundable {
			return true
		}
	}
	return false
}

func shippingRule(reason string) string {
	switch reason {
	case "not_received", "wrong_item":
		return "Shipping is refunded when " + reasonWhen(reason) + "."
	case "changed_mind":
		return "Shipping isn't refunded when you changed your mind, and a 15% restocking fee is deducted from the items."
	case "duplicate_charge":
		return "A duplicate charge is refunded in full."
	default:
		return "Shipping isn't refunded when an item arrived damaged: the parcel arrived, so the carrier's work was done."
	}
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
