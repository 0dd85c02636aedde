package demoshop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
)

// Refund is money paid back against an order. Refunds never change once
// made; ProcessorRefundID is internal.
type Refund struct {
	ID                string    `json:"id" db:"id"`
	OrderID           string    `json:"order_id" db:"order_id"`
	AmountCents       int64     `json:"amount_cents" db:"amount_cents"`
	Currency          string    `json:"currency" db:"currency"`
	Reason            string    `json:"reason" db:"reason"`
	Status            string    `json:"status" db:"status"`
	ProcessorRefundID string    `json:"processor_refund_id" db:"processor_refund_id"`
	CreatedAt         time.Time `json:"created_at" db:"created_at"`
}

const refundSelect = `
	SELECT id, order_id, amount_cents, currency, reason, status, processor_refund_id, created_at
	FROM shop.refunds`

// refundRequest is the body of POST /refunds.
type refundRequest struct {
	OrderID     string `json:"order_id"`
	AmountCents *int64 `json:"amount_cents"`
	Reason      string `json:"reason"`
}

func (req refundRequest) validate() error {
	switch {
	case req.OrderID == "":
		return errMissing("order_id")
	case req.AmountCents == nil:
		return errMissing("amount_cents")
	case *req.AmountCents <= 0:
		return errParam("amount_cents", "parameter_invalid_integer", "amount_cents must be a positive whole number of cents.")
	case len(req.Reason) > 200:
		return errParam("reason", "parameter_invalid", "reason must be at most 200 characters.")
	}
	return nil
}

// handleRefundCreate serves POST /refunds: pay back amount_cents of an order.
// Not idempotent: every call makes a new refund. The only rule is the
// balance: 422 amount_too_large above what is left to refund, 422
// charge_already_refunded when nothing is.
func (s *Shop) handleRefundCreate(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var req refundRequest
	if err := decodeBody(r, &req, false); err != nil {
		return err
	}
	if err := req.validate(); err != nil {
		return err
	}
	amount := *req.AmountCents
	var out Refund
	err := s.write(ctx, func(ctx context.Context, tx pgx.Tx) error {
		order, err := lockOrder(ctx, tx, req.OrderID)
		var notFound *apiError
		if errors.As(err, &notFound) && notFound.code == "resource_missing" {
			notFound.param = "order_id"
		}
		if err != nil {
			return err
		}
		if err := checkRefundable(order, amount); err != nil {
			return err
		}
		now, id := s.now(), newID("re_")
		_, err = tx.Exec(ctx, `
			INSERT INTO shop.refunds (id, order_id, amount_cents, currency, reason, status, request_id,
			                          processor_refund_id, created_at)
			VALUES ($1, $2, $3, $4, $5, 'succeeded', $6, $7, $8)`,
			id, order.ID, amount, order.Currency, req.Reason, requestID(ctx), "pyr_"+id[len("re_"):], now)
		if err != nil {
			return fmt.Errorf("insert refund on %s: %w", order.ID, err)
		}
		_, err = tx.Exec(ctx, `UPDATE shop.orders SET version = version + 1, updated_at = $2 WHERE id = $1`, order.ID, now)
		if err != nil {
			return fmt.Errorf("touch order %s: %w", order.ID, err)
		}
		err = s.recordEffect(ctx, tx, KindRefundCreated, order.ID, map[string]any{
			"refund_id":               id,
			"amount_cents":            amount,
			"reason":                  req.Reason,
			"refundable_before_cents": order.RefundableCents,
			"refundable_after_cents":  order.RefundableCents - amount,
			"from_version":            order.Version,
			"to_version":              order.Version + 1,
		})
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, refundSelect+` WHERE id = $1`, id)
		if err != nil {
			return fmt.Errorf("read refund %s: %w", id, err)
		}
		out, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Refund])
		if err != nil {
			return fmt.Errorf("read refund %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// checkRefundable is the shop's only refund rule: never more than was paid.
func checkRefundable(o Order, amount int64) error {
	details := map[string]any{"refundable_cents": o.RefundableCents, "amount_cents": amount}
	if o.RefundableCents == 0 {
		return &apiError{
			status: http.StatusUnprocessableEntity, typ: errTypeInvalidRequest, code: "charge_already_refunded",
			message: fmt.Sprintf("Order %s has already been refunded in full.", o.ID), param: "amount_cents", details: details,
		}
	}
	if amount > o.RefundableCents {
		return &apiError{
			status: http.StatusUnprocessableEntity, typ: errTypeInvalidRequest, code: "amount_too_large",
			message: fmt.Sprintf("Refund amount (%s) is greater than the unrefunded amount on order %s (%s).",
				formatCents(amount, o.Currency), o.ID, formatCents(o.RefundableCents, o.Currency)),
			param: "amount_cents", details: details,
		}
	}
	return nil
}

// handleRefundList serves GET /refunds?order_id=&limit=: refunds, newest first.
func (s *Shop) handleRefundList(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	rows, err := s.pool.Query(r.Context(), refundSelect+`
		WHERE ($1 = '' OR order_id = $1)
		ORDER BY created_at DESC, id
		LIMIT $2`, r.URL.Query().Get("order_id"), limit+1)
	if err != nil {
		return fmt.Errorf("list refunds: %w", err)
	}
	refunds, err := pgx.CollectRows(rows, pgx.RowToStructByName[Refund])
	if err != nil {
		return fmt.Errorf("list refunds: %w", err)
	}
	writeJSON(w, http.StatusOK, newList(refunds, limit))
	return nil
}
