package shopadapter

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"countersign/internal/adapter"
	"countersign/internal/locale"
)

// planReceipt checks that the invoice is the customer's and paid.
func (a *Adapter) planReceipt(ctx context.Context, p adapter.Principal, args map[string]any) (*plan, error) {
	cust, err := a.customer(ctx, p)
	if err != nil {
		return nil, err
	}
	inv, target, err := a.findInvoice(ctx, cust, str(args, "invoice_id"))
	if err != nil {
		return nil, err
	}
	if inv.Status != "paid" {
		return nil, &adapter.Error{Code: "invoice_not_paid", Outcome: adapter.Refused,
			Message: fmt.Sprintf("%s is %s; only a paid invoice has a receipt to send.", target.Display, inv.Status),
			Hint:    "Use get_invoice to find the paid invoice the customer means."}
	}
	q := a.localized(func(t texts) adapter.Quote {
		amount := t.money(inv.AmountCents, inv.Currency)
		paid := t.T("receipt.amount_paid", locale.Params{"Amount": amount})
		if inv.PaidAt != nil {
			paid = t.T("receipt.amount_paid_on", locale.Params{"Amount": amount, "Date": t.date(*inv.PaidAt)})
		}
		return adapter.Quote{
			Title:  t.T("receipt.title", locale.Params{"Number": inv.Number}),
			Target: target,
			Lines: []adapter.QuoteLine{
				{Label: t.T("line.invoice", nil), To: target.Display},
				{Label: t.T("line.amount", nil), To: paid},
				{Label: t.T("line.send_to", nil), To: cust.Email, Emphasis: true},
				{Label: t.T("line.receipts_sent", nil), From: strconv.Itoa(inv.ReceiptsSent), To: strconv.Itoa(inv.ReceiptsSent + 1)},
			},
			Consequences: []string{t.T("receipt.copy_sent", locale.Params{"Amount": amount, "Email": cust.Email})},
			Constraints:  []string{t.T("receipt.only_paid", nil), t.T("receipt.only_account_email", nil)},
			ConfirmLabel: t.T("receipt.confirm", nil),
			DeclineLabel: t.T("receipt.decline", nil),
			Reversible:   true,
		}
	})
	before := make([]string, 0, len(inv.Receipts))
	for _, r := range inv.Receipts {
		before = append(before, r.ID)
	}
	return &plan{quote: q, send: func(ctx context.Context, key string) (adapter.Result, error) {
		var after shopInvoice
		err := a.shop.write(ctx, http.MethodPost, "/invoices/"+url.PathEscape(inv.ID)+"/send", key,
			versionBody{ExpectedVersion: inv.Version}, &after)
		if err != nil {
			return adapter.Result{Steps: []adapter.Step{failedStep("send_receipt", err)}}, err
		}
		// The new receipt is the one that was not there before: receipts
		// sent in the same instant cannot be told apart by time.
		var sent shopReceipt
		for _, r := range after.Receipts {
			if !slices.Contains(before, r.ID) {
				sent = r
			}
		}
		if sent.ID == "" {
			return adapter.Result{Steps: []adapter.Step{{Name: "send_receipt", Outcome: "unknown", Detail: "no new receipt in the answer"}}},
				adapter.Unknowable(fmt.Errorf("shopadapter: the answer to sending a receipt of %s lists no new receipt", inv.ID))
		}
		return adapter.Result{
			Reference: sent.ID,
			Data:      map[string]any{"receipt_id": sent.ID, "invoice_id": inv.ID, "sent_to": sent.SentTo, "receipts_sent": after.ReceiptsSent},
			Steps:     []adapter.Step{{Name: "send_receipt", Outcome: "applied", Detail: sent.ID}},
		}, nil
	}}, nil
}

// verifyReceipt reads the invoice again: its receipts must include the one
// the call sent.
func (a *Adapter) verifyReceipt(ctx context.Context, p adapter.Principal, call adapter.Call, args map[string]any, res *adapter.Result) (adapter.Verification, error) {
	cust, err := a.customer(ctx, p)
	if err != nil {
		return adapter.Verification{}, err
	}
	inv, _, err := a.findInvoice(ctx, cust, targetRef(call, args, "invoice_id"))
	if err != nil {
		return adapter.Verification{}, err
	}
	receiptID := ""
	if res != nil {
		receiptID = res.Reference
	}
	if receiptID == "" {
		effects, err := a.effects(ctx, call.IdempotencyKey)
		if err != nil {
			return adapter.Verification{}, err
		}
		if r := singleEffect(effectReceiptSent, "", "receipt_id")(call.IdempotencyKey, effects); r != nil {
			receiptID = r.Reference
		}
	}
	found := receiptID != "" && slices.ContainsFunc(inv.Receipts, func(r shopReceipt) bool { return r.ID == receiptID })
	evidence := fmt.Sprintf("Read invoice %s again: %s sent, including %s.", inv.Number, plural(inv.ReceiptsSent, "receipt"), receiptID)
	if !found {
		evidence = fmt.Sprintf("Read invoice %s again: %s sent, none of them %q.", inv.Number, plural(inv.ReceiptsSent, "receipt"), receiptID)
	}
	return adapter.Verification{Verified: found, Evidence: evidence, At: a.now(),
		Observed: map[string]any{"invoice_id": inv.ID, "receipts_sent": inv.ReceiptsSent, "receipt_found": found}}, nil
}
