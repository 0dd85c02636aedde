package demoshop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// InvoiceStatus is the state of an invoice.
type InvoiceStatus string

const (
	// InvoiceUpcoming will be charged when its period starts.
	InvoiceUpcoming InvoiceStatus = "upcoming"
	// InvoicePaid was charged; its receipt can be sent again.
	InvoicePaid InvoiceStatus = "paid"
	// InvoiceVoid will never be charged.
	InvoiceVoid InvoiceStatus = "void"
)

// Invoice is one period's bill of a subscription, as the frontend API returns
// it, internal fields (processor_invoice_id, internal_notes) included.
type Invoice struct {
	ID                 string        `json:"id" db:"id"`
	Number             string        `json:"number" db:"number"`
	SubscriptionID     string        `json:"subscription_id" db:"subscription_id"`
	CustomerID         string        `json:"customer_id" db:"customer_id"`
	Status             InvoiceStatus `json:"status" db:"status"`
	AmountCents        int64         `json:"amount_cents" db:"amount_cents"`
	Currency           string        `json:"currency" db:"currency"`
	PeriodStart        time.Time     `json:"period_start" db:"period_start"`
	PeriodEnd          time.Time     `json:"period_end" db:"period_end"`
	PaidAt             *time.Time    `json:"paid_at" db:"paid_at"`
	VoidedAt           *time.Time    `json:"voided_at" db:"voided_at"`
	ReceiptsSent       int           `json:"receipts_sent" db:"receipts_sent"`
	LastReceiptSentAt  *time.Time    `json:"last_receipt_sent_at" db:"last_receipt_sent_at"`
	Receipts           []Receipt     `json:"receipts" db:"receipts"`
	ProcessorInvoiceID string        `json:"processor_invoice_id" db:"processor_invoice_id"`
	InternalNotes      string        `json:"internal_notes" db:"internal_notes"`
	Version            int           `json:"version" db:"version"`
	CreatedAt          time.Time     `json:"created_at" db:"created_at"`
	UpdatedAt          time.Time     `json:"updated_at" db:"updated_at"`
}

// Receipt is one sending of a paid invoice's receipt by email.
type Receipt struct {
	ID     string    `json:"id"`
	SentTo string    `json:"sent_to"`
	SentAt time.Time `json:"sent_at"`
}

const invoiceSelect = `
	SELECT i.id, i.number, i.subscription_id, i.customer_id, i.status, i.amount_cents, i.currency,
	       i.period_start, i.period_end, i.paid_at, i.voided_at, i.receipts_sent, i.last_receipt_sent_at,
	       COALESCE((SELECT json_agg(json_build_object('id', rc.id, 'sent_to', rc.sent_to, 'sent_at', rc.sent_at)
	                                 ORDER BY rc.sent_at, rc.id)
	                 FROM shop.receipts rc WHERE rc.invoice_id = i.id), '[]') AS receipts,
	       i.processor_invoice_id, i.internal_notes, i.version, i.created_at, i.updated_at
	FROM shop.invoices i`

func getInvoice(ctx context.Context, q querier, id string) (Invoice, error) {
	rows, err := q.Query(ctx, invoiceSelect+` WHERE i.id = $1`, id)
	if err != nil {
		return Invoice{}, fmt.Errorf("get invoice %s: %w", id, err)
	}
	inv, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Invoice])
	if errors.Is(err, pgx.ErrNoRows) {
		return Invoice{}, errNotFound("invoice", id)
	}
	if err != nil {
		return Invoice{}, fmt.Errorf("get invoice %s: %w", id, err)
	}
	return inv, nil
}

// invoiceRow is what a new invoice is inserted from.
type invoiceRow struct {
	ID             string
	SubscriptionID string
	CustomerID     string
	Status         InvoiceStatus
	AmountCents    int64
	Currency       string
	PeriodStart    time.Time
	PeriodEnd      time.Time
	PaidAt         *time.Time
	VoidedAt       *time.Time
	CreatedAt      time.Time
}

// insertInvoice adds an invoice; a paid one gets the receipt that went out
// when it was paid.
func insertInvoice(ctx context.Context, q querier, inv invoiceRow) error {
	number := strings.ToUpper(inv.ID[len(inv.ID)-8:]) + "-0001"
	receipts := 0
	if inv.Status == InvoicePaid {
		receipts = 1
	}
	_, err := q.Exec(ctx, `
		INSERT INTO shop.invoices (id, number, subscription_id, customer_id, status, amount_cents, currency,
		                           period_start, period_end, paid_at, voided_at, receipts_sent,
		                           last_receipt_sent_at, processor_invoice_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $10, $13, $14, $14)`,
		inv.ID, number, inv.SubscriptionID, inv.CustomerID, inv.Status, inv.AmountCents, inv.Currency,
		inv.PeriodStart, inv.PeriodEnd, inv.PaidAt, inv.VoidedAt, receipts, "pi_"+inv.ID[len("in_"):], inv.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert invoice %s: %w", inv.ID, err)
	}
	if inv.Status != InvoicePaid {
		return nil
	}
	_, err = q.Exec(ctx, `
		INSERT INTO shop.receipts (id, invoice_id, sent_to, sent_at)
		SELECT $1, $2, c.email, $3 FROM shop.customers c WHERE c.id = $4`,
		"rcpt_"+inv.ID[len("in_"):], inv.ID, inv.PaidAt, inv.CustomerID)
	if err != nil {
		return fmt.Errorf("insert receipt of invoice %s: %w", inv.ID, err)
	}
	return nil
}

// handleInvoiceGet serves GET /invoices/{id}, with the receipts sent for it.
func (s *Shop) handleInvoiceGet(w http.ResponseWriter, r *http.Request) error {
	inv, err := getInvoice(r.Context(), s.pool, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, inv)
	return nil
}

// handleInvoiceList serves GET /invoices?subscription_id=&customer_id=&status=&limit=:
// invoices by period, newest first.
func (s *Shop) handleInvoiceList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	status := InvoiceStatus(q.Get("status"))
	switch status {
	case "", InvoiceUpcoming, InvoicePaid, InvoiceVoid:
	default:
		return errParam("status", "parameter_invalid", "Invalid status %q: must be upcoming, paid or void.", status)
	}
	rows, err := s.pool.Query(r.Context(), invoiceSelect+`
		WHERE ($1 = '' OR i.subscription_id = $1)
		  AND ($2 = '' OR i.customer_id = $2)
		  AND ($3 = '' OR i.status = $3)
		ORDER BY i.period_start DESC, i.id
		LIMIT $4`, q.Get("subscription_id"), q.Get("customer_id"), string(status), limit+1)
	if err != nil {
		return fmt.Errorf("list invoices: %w", err)
	}
	invoices, err := pgx.CollectRows(rows, pgx.RowToStructByName[Invoice])
	if err != nil {
		return fmt.Errorf("list invoices: %w", err)
	}
	writeJSON(w, http.StatusOK, newList(invoices, limit))
	return nil
}
