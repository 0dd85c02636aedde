package shopadapter

import (
	"context"

	"countersign/internal/adapter"
)

// The shop's actions.
const (
	ActionCancelSubscription    = "cancel_subscription"
	ActionReinstateSubscription = "reinstate_subscription"
	ActionIssueRefund           = "issue_refund"
	ActionResendReceipt         = "resend_receipt"
	ActionUpdateProductDesc     = "update_product_description"
	ActionChangeShippingAddress = "change_shipping_address"
)

// The enums of the actions' and read tools' arguments.
var (
	CancelReasons = []string{"too_expensive", "missing_feature", "switching", "other"}
	CancelEffects = []string{"immediately", "end_of_period"}
	RefundReasons = []string{"damaged", "not_received", "wrong_item", "changed_mind", "duplicate_charge"}
	OrderStatuses = []string{"pending", "fulfilled", "shipped", "delivered", "not_received"}
)

// maxDescription bounds a product description in characters; at four bytes
// a character it stays inside the shop's 5,000-byte limit.
const maxDescription = 1000

// actionDef ties an action's spec to how it is planned, verified and
// recognised in the shop's evidence.
type actionDef struct {
	spec   adapter.ActionSpec
	plan   func(a *Adapter, ctx context.Context, p adapter.Principal, args map[string]any) (*plan, error)
	verify func(a *Adapter, ctx context.Context, p adapter.Principal, call adapter.Call, args map[string]any, res *adapter.Result) (adapter.Verification, error)
	// evidence rebuilds a result from the shop's effects for the call's
	// key, or returns nil when they do not show the whole effect.
	evidence func(key string, effects []shopEffect) *adapter.Result
}

// idParam is an argument naming one of the shop's objects. An id goes
// into the object's path (/orders/{id}), so it is a path segment.
func idParam(name, kind, example string) adapter.Param {
	return adapter.Param{Name: name, Type: "string", Required: true, MaxLength: 200, PathSegment: true,
		Description: "The " + kind + "'s id (" + example + ") from a read tool, or the customer's own words for it. " +
			"Words that match several " + kind + "s are refused with the candidates; ask the customer which one."}
}

func actionDefs() []actionDef {
	return []actionDef{
		{spec: adapter.ActionSpec{
			Name:  ActionCancelSubscription,
			Title: "Cancel a subscription",
			Description: "Cancel one of the customer's subscriptions, either at the end of the current period (access stays " +
				"until then and the next charge is stopped) or immediately (access ends now and any outstanding usage " +
				"balance is charged first). Runs as one workflow: the subscription is marked cancelled and its upcoming " +
				"invoice is voided; if the second step fails the first is undone. Preview it and have the customer confirm.",
			Params: []adapter.Param{
				idParam("subscription_id", "subscription", "sub_…, or \"Pro plan for acme.example\""),
				{Name: "reason_code", Type: "string", Required: true, Enum: CancelReasons, Description: "Why the customer cancels."},
				{Name: "effective", Type: "string", Required: true, Enum: CancelEffects, Description: "When the cancellation takes effect."},
			},
			Risk:         adapter.Reversible,
			Compensation: ActionReinstateSubscription,
			Limits: []string{
				"At most one cancellation per subscription per day.",
				"A subscription that is already cancelled cannot be cancelled again.",
				"An immediate cancellation is refused while a balance is owed on a declined card.",
			},
			Guidance:     cancelGuidance,
			TargetKind:   KindSubscription,
			TargetParam:  "subscription_id",
			DefaultStage: 3,
			DoneWords:    "Cancelled",
			RejectReasons: []string{
				"The conversation does not show that you asked to cancel.",
				"The cancellation date is not the one you asked for.",
				"This subscription cannot be cancelled this way; a person will contact you.",
			},
		}, plan: (*Adapter).planCancel, verify: (*Adapter).verifyCancel, evidence: cancelEvidence},
		{spec: adapter.ActionSpec{
			Name:  ActionReinstateSubscription,
			Title: "Reinstate a cancelled subscription",
			Description: "Undo a cancellation: a cancelled subscription whose current period has not ended becomes active " +
				"again and renews at its usual price. This is the compensation of cancel_subscription.",
			Params:        []adapter.Param{idParam("subscription_id", "subscription", "sub_…")},
			Risk:          adapter.Reversible,
			Compensation:  ActionCancelSubscription,
			Limits:        []string{"Only a cancelled subscription whose current period has not ended."},
			Guidance:      reinstateGuidance,
			TargetKind:    KindSubscription,
			TargetParam:   "subscription_id",
			DefaultStage:  3,
			DoneWords:     "Your subscription is active again",
			RejectReasons: []string{"This subscription cannot be reinstated; a person will contact you."},
		}, plan: (*Adapter).planReinstate, verify: (*Adapter).verifyReinstate, evidence: singleEffect(effectSubscriptionReinstated, "sub_reinstate_", "")},
		{spec: adapter.ActionSpec{
			Name:  ActionIssueRefund,
			Title: "Refund an order",
			Description: "Pay money back to the customer against one of their orders, under the refund policy in the " +
				"guidance: within 30 days of delivery, never more than the refundable balance for the reason. The dry " +
				"run shows the arithmetic. A refund cannot be undone.",
			Params: []adapter.Param{
				idParam("order_id", "order", "ord_…, or \"walnut lamp\""),
				{Name: "amount_cents", Type: "integer", Required: true, Min: adapter.Int64(1), Max: adapter.Int64(10_000_000),
					Description: "The amount to refund, in cents of the order's currency."},
				{Name: "reason_code", Type: "string", Required: true, Enum: RefundReasons, Description: "What went wrong; it decides what the refund covers."},
			},
			Risk: adapter.Irreversible,
			Limits: []string{
				"Refunds only within 30 calendar days of delivery (Not received: 30 days of shipping).",
				"31 to 60 days after delivery: store credit through a person, never a refund.",
				"Never more than the refundable balance for the reason code, less earlier refunds.",
				"Shipping is refunded only for Not received and Wrong item; Changed mind deducts a 15% restocking fee.",
			},
			Guidance:     refundGuidance,
			TargetKind:   KindOrder,
			TargetParam:  "order_id",
			AmountParam:  "amount_cents",
			DefaultStage: 3,
			DoneWords:    "Refunded",
			RejectReasons: []string{
				"The amount is more than this order allows.",
				"This order does not qualify for a refund under our policy.",
				"This order was already refunded for the same problem.",
				"A person needs to look at this order before any refund.",
			},
		}, plan: (*Adapter).planRefund, verify: (*Adapter).verifyRefund, evidence: refundEvidence},
		{spec: adapter.ActionSpec{
			Name:  ActionResendReceipt,
			Title: "Resend a receipt",
			Description: "E-mail the receipt of one of the customer's paid invoices again, to the address on their " +
				"account. Low risk; sending it twice only sends a second copy.",
			Params:        []adapter.Param{idParam("invoice_id", "invoice", "in_…, or the invoice number")},
			Risk:          adapter.Reversible,
			Limits:        []string{"Paid invoices only.", "Sent only to the e-mail address on the customer's account."},
			Guidance:      receiptGuidance,
			TargetKind:    KindInvoice,
			TargetParam:   "invoice_id",
			DefaultStage:  5,
			DoneWords:     "The receipt has been sent again",
			RejectReasons: []string{"The receipt goes only to the e-mail address on file."},
		}, plan: (*Adapter).planReceipt, verify: (*Adapter).verifyReceipt, evidence: singleEffect(effectReceiptSent, "", "receipt_id")},
		{spec: adapter.ActionSpec{
			Name:  ActionUpdateProductDesc,
			Title: "Update a product description",
			Description: "Replace the description text of a product in the shop's catalogue. For shop operators, not " +
				"customers. Changes the description only: name, price and stock cannot change through it.",
			Params: []adapter.Param{
				idParam("product_id", "product", "prod_…, a SKU or the product's name"),
				{Name: "description", Type: "string", Required: true, MaxLength: maxDescription, Multiline: true, Description: "The complete new description."},
			},
			Risk:         adapter.Reversible,
			Compensation: ActionUpdateProductDesc,
			Limits: []string{
				"Changes the description only; name, price and stock never change.",
				"At most 1,000 characters.",
				"For a shop operator principal only.",
			},
			Guidance:     productGuidance,
			TargetKind:   KindProduct,
			TargetParam:  "product_id",
			Concerns:     adapter.ConcernsBusiness,
			DefaultStage: 3,
			DoneWords:    "The description is updated",
			RejectReasons: []string{
				"The new description is inaccurate or misleading.",
				"The description does not follow our content rules.",
				"Product descriptions are changed by the catalogue team, not through support.",
			},
		}, plan: (*Adapter).planProduct, verify: (*Adapter).verifyProduct, evidence: singleEffect(effectProductUpdated, "prod_update_", "")},
		{spec: adapter.ActionSpec{
			Name:  ActionChangeShippingAddress,
			Title: "Change an order's shipping address",
			Description: "Send one of the customer's orders to a different address, before it has left the warehouse. " +
				"Refused once the order is fulfilled, shipped or delivered.",
			Params: []adapter.Param{
				idParam("order_id", "order", "ord_…"),
				{Name: "address", Type: "object", Required: true, Description: "The new address, in full.", Properties: []adapter.Param{
					{Name: "name", Type: "string", Required: true, MaxLength: 100, Description: "the recipient"},
					{Name: "line1", Type: "string", Required: true, MaxLength: 100, Description: "street and number"},
					{Name: "line2", Type: "string", MaxLength: 100, Description: "apartment, suite, floor"},
					{Name: "city", Type: "string", Required: true, MaxLength: 100, Description: "city or town"},
					{Name: "postal_code", Type: "string", Required: true, MaxLength: 16, Description: "postal code"},
					{Name: "country", Type: "string", Required: true, MaxLength: 2, Description: "ISO 3166-1 alpha-2 country code, e.g. US, DE, GB"},
				}},
			},
			Risk:         adapter.Reversible,
			Compensation: ActionChangeShippingAddress,
			Limits:       []string{"Only before the order is fulfilled.", "The country must be an ISO 3166-1 alpha-2 code."},
			Guidance:     addressGuidance,
			TargetKind:   KindOrder,
			TargetParam:  "order_id",
			DefaultStage: 4,
			DoneWords:    "The shipping address is changed",
			RejectReasons: []string{
				"The new address could not be confirmed as yours.",
				"The order has already shipped; its address can no longer change.",
				"The new address is incomplete.",
			},
		}, plan: (*Adapter).planAddress, verify: (*Adapter).verifyAddress, evidence: singleEffect(effectAddressChanged, "addr_change_", "")},
	}
}

// str and integer read validated arguments; validation has already
// guaranteed their presence and type.
func str(args map[string]any, name string) string {
	s, _ := args[name].(string)
	return s
}

func integer(args map[string]any, name string) int64 {
	n, _ := args[name].(int64)
	return n
}

const cancelGuidance = `Cancelling a subscription

1. Find the subscription with list_subscriptions. Confirm with the customer which one they mean, by plan and site ("Pro plan for acme.example"). If they have several that fit, ask; never pick one yourself.
2. Ask when it should end. end_of_period keeps access until the current period ends and stops the next charge. immediately ends access now and first charges any outstanding usage balance to the card on file.
3. Ask why, and map the answer to reason_code: too_expensive, missing_feature, switching, or other.
4. Preview it (dry run). The customer confirms the quote, not your summary. Never say it is cancelled before the result says so, with its reference.

The adapter enforces: one cancellation per subscription per day; a cancelled subscription cannot be cancelled again; an immediate cancellation with a balance owed on a declined card is refused - ask the customer to update their card, and do not retry the cancellation. Until the period ends, reinstate_subscription undoes a cancellation.`

const reinstateGuidance = `Reinstating a subscription

Use it when a customer changes their mind after cancelling. The subscription becomes active again and renews at the end of its current period at its usual price; the quote shows the next charge. Only a cancelled subscription whose current period has not ended can be reinstated; after that a new subscription is needed, which a person arranges. Confirm the plan and site with the customer first.`

const refundGuidance = `Deciding a refund

Check the delivery date on the order (get_order shows days_since_delivery) before anything else. Days are whole calendar days (UTC dates) from the day of delivery to today.

- Delivered 30 days ago or less: a refund is available.
- Delivered 31-60 days ago: offer store credit, and do not call issue_refund. Store credit is issued by a person.
- Delivered more than 60 days ago: decline, and say why.

For not_received the window counts from the day the order shipped, and the order must be shipped or reported not received.

What the amount covers, by reason_code:

| reason_code      | item total  | shipping | restocking fee |
| ---------------- | ----------- | -------- | -------------- |
| not_received     | yes         | yes      | n/a            |
| damaged          | yes         | no       | n/a            |
| wrong_item       | yes         | yes      | n/a            |
| changed_mind     | yes         | no       | deduct 15%     |
| duplicate_charge | full charge | n/a      | n/a            |

Anything already refunded on the order is deducted. The dry run shows this arithmetic; never propose more than its refundable line.

damaged does not refund shipping: the parcel arrived, so the carrier was paid for work that was performed. Customers argue this one. The answer is that we replace the item free of charge if they would rather have that, which you can offer without approval.

A refund cannot be undone. When the dry run refuses, tell the customer why in plain words; do not try again with another amount or reason_code to get around it.`

const receiptGuidance = `Resending a receipt

Use it when the customer asks for a copy of a receipt. Find the invoice with get_invoice, or by the invoice number the customer quotes. Only paid invoices have a receipt; upcoming and void invoices are refused. The receipt goes to the e-mail address on the customer's account and cannot be sent anywhere else; if the customer wants it elsewhere, a person must change their account first.`

const productGuidance = `Editing a product description

For shop operators editing the catalogue, never on a customer's behalf. The action changes the product's description text only; its name, price and stock cannot change through it, whatever is asked. Keep descriptions factual - materials, dimensions, what is in the box - and make no promises about delivery times, discounts or prices. The quote shows the old and the new text; the old text can be restored by running the action again with it.`

const addressGuidance = `Changing a shipping address

Use it when the customer wants an order that has not left the warehouse delivered elsewhere. Ask for the full address: recipient name, line 1, optional line 2, city, postal code, and the country as a two-letter ISO code (US, DE, GB, ...). Read it back through the dry-run quote before it is confirmed. Once the order is fulfilled (packed), shipped or delivered the address can no longer change: say so, and offer that a person can ask the carrier for a redirect.`
