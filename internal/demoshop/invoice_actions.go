package demoshop

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/jackc/pgx/v5"
)

// invoiceAction is the optional body of POST /invoices/{id}/void and /send.
type invoiceAction struct {
	ExpectedVersion *int `json:"expected_version"`
}

func lockInvoice(ctx context.Context, tx pgx.Tx, id string) (Invoice, error) {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM shop.invoices WHERE id = $1 FOR UPDATE`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return Invoice{}, errNotFound("invoice", id)
	}
	if err != nil {
		return Invoice{}, fmt.Errorf("lock invoice %s: %w", id, err)
	}
	return getInvoice(ctx, tx, id)
}

// handleInvoiceVoid serves POST /invoices/{id}/void: an upcoming invoice will
// never be charged. The second step of a cancellation; 409 for a paid or an
// already void invoice.
func (s *Shop) handleInvoiceVoid(w http.ResponseWriter, r *http.Request) error {
	ctx, id := r.Context(), r.PathValue("id")
	var body invoiceAction
	if err := decodeBody(r, &body, true); err != nil {
		return err
	}
	var out Invoice
	err := s.write(ctx, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := lockInvoice(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := checkVersion("invoice", body.ExpectedVersion, cur.Version); err != nil {
			return err
		}
		switch cur.Status {
		case InvoiceVoid:
			return errConflict("invoice_already_void", map[string]any{"status": cur.Status},
				"Invoice %s is already void.", id)
		case InvoicePaid:
			return errConflict("invoice_not_voidable", map[string]any{"status": cur.Status},
				"Invoice %s is paid and cannot be voided; refund the payment instead.", id)
		}
		now := s.now()
		_, err = tx.Exec(ctx, `
			UPDATE shop.invoices
			SET status = 'void', voided_at = $2, version = version + 1, updated_at = $2
			WHERE id = $1`, id, now)
		if err != nil {
			return fmt.Errorf("void invoice %s: %w", id, err)
		}
		err = s.recordEffect(ctx, tx, KindInvoiceVoided, id, map[string]any{
			"subscription_id": cur.SubscriptionID,
			"amount_cents":    cur.AmountCents,
			"period_start":    cur.PeriodStart,
			"from_version":    cur.Version,
			"to_version":      cur.Version + 1,
		})
		if err != nil {
			return err
		}
		out, err = getInvoice(ctx, tx, id)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// handleInvoiceSend serves POST /invoices/{id}/send: email the receipt of a
// paid invoice to the customer again. Every call sends one more receipt and
// records one more effect; 409 invoice_not_paid for other invoices.
func (s *Shop) handleInvoiceSend(w http.ResponseWriter, r *http.Request) error {
	ctx, id := r.Context(), r.PathValue("id")
	var body invoiceAction
	if err := decodeBody(r, &body, true); err != nil {
		return err
	}
	var out Invoice
	err := s.write(ctx, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := lockInvoice(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := checkVersion("invoice", body.ExpectedVersion, cur.Version); err != nil {
			return err
		}
		if cur.Status != InvoicePaid {
			return errConflict("invoice_not_paid", map[string]any{"status": cur.Status},
				"Invoice %s is %s; only a paid invoice has a receipt to send.", id, cur.Status)
		}
		var email string
		if err := tx.QueryRow(ctx, `SELECT email FROM shop.customers WHERE id = $1`, cur.CustomerID).Scan(&email); err != nil {
			return fmt.Errorf("read email of %s: %w", cur.CustomerID, err)
		}
		now, receiptID := s.now(), newID("rcpt_")
		_, err = tx.Exec(ctx, `
			INSERT INTO shop.receipts (id, invoice_id, sent_to, sent_at, request_id)
			VALUES ($1, $2, $3, $4, $5)`, receiptID, id, email, now, requestID(ctx))
		if err != nil {
			return fmt.Errorf("insert receipt for %s: %w", id, err)
		}
		_, err = tx.Exec(ctx, `
			UPDATE shop.invoices
			SET receipts_sent = receipts_sent + 1, last_receipt_sent_at = $2, version = version + 1, updated_at = $2
			WHERE id = $1`, id, now)
		if err != nil {
			return fmt.Errorf("count receipt for %s: %w", id, err)
		}
		err = s.recordEffect(ctx, tx, KindReceiptSent, id, map[string]any{
			"receipt_id":    receiptID,
			"sent_to":       email,
			"receipts_sent": cur.ReceiptsSent + 1,
			"from_version":  cur.Version,
			"to_version":    cur.Version + 1,
		})
		if err != nil {
			return err
		}
		out, err = getInvoice(ctx, tx, id)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
