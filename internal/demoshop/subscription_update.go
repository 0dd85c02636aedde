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

// subscriptionPatch is the body of PATCH /subscriptions/{id}, as a billing
// page sends it.
type subscriptionPatch struct {
	Status            *SubscriptionStatus `json:"status"`
	CancelAtPeriodEnd *bool               `json:"cancel_at_period_end"`
	CancelReason      *string             `json:"cancel_reason"`
	ExpectedVersion   *int                `json:"expected_version"`
}

func (p subscriptionPatch) validate() error {
	if p.Status == nil {
		return errMissing("status")
	}
	switch *p.Status {
	case SubscriptionCancelled:
		if p.CancelReason != nil && len(*p.CancelReason) > 500 {
			return errParam("cancel_reason", "parameter_invalid", "cancel_reason must be at most 500 characters.")
		}
	case SubscriptionActive:
		if p.CancelAtPeriodEnd != nil {
			return errParam("cancel_at_period_end", "parameter_invalid", "cancel_at_period_end only applies with status \"cancelled\".")
		}
		if p.CancelReason != nil {
			return errParam("cancel_reason", "parameter_invalid", "cancel_reason only applies with status \"cancelled\".")
		}
	default:
		return errParam("status", "parameter_invalid", "Invalid status %q: must be \"active\" or \"cancelled\".", *p.Status)
	}
	return nil
}

// handleSubscriptionUpdate serves PATCH /subscriptions/{id}: status
// "cancelled" cancels (at period end, or at once, which first charges any
// balance to the card: 402 card_declined when it fails); status "active"
// reinstates a cancelled subscription before its period ends, creating the
// next upcoming invoice again if it was voided.
func (s *Shop) handleSubscriptionUpdate(w http.ResponseWriter, r *http.Request) error {
	ctx, id := r.Context(), r.PathValue("id")
	var p subscriptionPatch
	if err := decodeBody(r, &p, false); err != nil {
		return err
	}
	if err := p.validate(); err != nil {
		return err
	}
	var out Subscription
	err := s.write(ctx, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := lockSubscription(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := checkVersion("subscription", p.ExpectedVersion, cur.Version); err != nil {
			return err
		}
		if *p.Status == SubscriptionCancelled {
			err = s.cancelSubscription(ctx, tx, cur, p)
		} else {
			err = s.reinstateSubscription(ctx, tx, cur)
		}
		if err != nil {
			return err
		}
		out, err = getSubscription(ctx, tx, id)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func lockSubscription(ctx context.Context, tx pgx.Tx, id string) (Subscription, error) {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM shop.subscriptions WHERE id = $1 FOR UPDATE`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return Subscription{}, errNotFound("subscription", id)
	}
	if err != nil {
		return Subscription{}, fmt.Errorf("lock subscription %s: %w", id, err)
	}
	return getSubscription(ctx, tx, id)
}

func (s *Shop) cancelSubscription(ctx context.Context, tx pgx.Tx, cur Subscription, p subscriptionPatch) error {
	if cur.Status == SubscriptionCancelled {
		return errConflict("subscription_already_cancelled", map[string]any{"status": cur.Status},
			"Subscription %s is already cancelled.", cur.ID)
	}
	now := s.now()
	atPeriodEnd := p.CancelAtPeriodEnd != nil && *p.CancelAtPeriodEnd
	var charged int64
	if !atPeriodEnd && cur.BalanceCents > 0 {
		if cur.PaymentMethod.Status == PaymentMethodDeclined {
			return declinedError(ctx, tx, cur)
		}
		charged = cur.BalanceCents
	}
	var endedAt *time.Time
	accessUntil := cur.CurrentPeriodEnd
	effective := "end_of_period"
	if !atPeriodEnd {
		endedAt, accessUntil, effective = &now, now, "immediately"
	}
	_, err := tx.Exec(ctx, `
		UPDATE shop.subscriptions
		SET status = 'cancelled', cancel_at_period_end = $2, cancelled_at = $3, cancel_reason = $4,
		    ended_at = $5, balance_cents = balance_cents - $6, version = version + 1, updated_at = $3
		WHERE id = $1`,
		cur.ID, atPeriodEnd, now, p.CancelReason, endedAt, charged)
	if err != nil {
		return fmt.Errorf("cancel subscription %s: %w", cur.ID, err)
	}
	return s.recordEffect(ctx, tx, KindSubscriptionCancelled, cur.ID, map[string]any{
		"effective":     effective,
		"cancel_reason": p.CancelReason,
		"access_until":  accessUntil,
		"charged_cents": charged,
		"from_version":  cur.Version,
		"to_version":    cur.Version + 1,
	})
}

// declinedError is the provider's answer when settling the balance fails.
func declinedError(ctx context.Context, tx pgx.Tx, cur Subscription) error {
	var declineCode string
	err := tx.QueryRow(ctx, `SELECT decline_code FROM shop.subscriptions WHERE id = $1`, cur.ID).Scan(&declineCode)
	if err != nil {
		return fmt.Errorf("read decline code of %s: %w", cur.ID, err)
	}
	if declineCode == "" {
		declineCode = "generic_decline"
	}
	return &apiError{
		status:      http.StatusPaymentRequired,
		typ:         errTypeCard,
		code:        "card_declined",
		declineCode: declineCode,
		message: fmt.Sprintf("Your card was declined. The outstanding balance of %s must be paid before %s can be cancelled immediately.",
			formatCents(cur.BalanceCents, cur.Currency), cur.ID),
		details: map[string]any{"amount_cents": cur.BalanceCents, "payment_method_last4": cur.PaymentMethod.Last4},
	}
}

func (s *Shop) reinstateSubscription(ctx context.Context, tx pgx.Tx, cur Subscription) error {
	if cur.Status == SubscriptionActive {
		return errConflict("subscription_not_cancelled", map[string]any{"status": cur.Status},
			"Subscription %s is active; only a cancelled subscription can be reinstated.", cur.ID)
	}
	now := s.now()
	if !cur.CurrentPeriodEnd.After(now) {
		return errConflict("subscription_ended", map[string]any{"current_period_end": cur.CurrentPeriodEnd},
			"Subscription %s ended with its period on %s and cannot be reinstated; start a new subscription instead.",
			cur.ID, cur.CurrentPeriodEnd.Format("January 2, 2006"))
	}
	_, err := tx.Exec(ctx, `
		UPDATE shop.subscriptions
		SET status = 'active', cancel_at_period_end = false, cancelled_at = NULL, cancel_reason = NULL,
		    ended_at = NULL, version = version + 1, updated_at = $2
		WHERE id = $1`, cur.ID, now)
	if err != nil {
		return fmt.Errorf("reinstate subscription %s: %w", cur.ID, err)
	}
	var created *string
	if cur.UpcomingInvoiceID == nil {
		inv := nextInvoice(cur, now)
		if err := insertInvoice(ctx, tx, inv); err != nil {
			return err
		}
		created = &inv.ID
	}
	return s.recordEffect(ctx, tx, KindSubscriptionReinstated, cur.ID, map[string]any{
		"invoice_created": created,
		"from_version":    cur.Version,
		"to_version":      cur.Version + 1,
	})
}

// nextInvoice is the upcoming invoice for the period after the current one.
func nextInvoice(sub Subscription, now time.Time) invoiceRow {
	start := sub.CurrentPeriodEnd
	return invoiceRow{
		ID:             newID("in_"),
		SubscriptionID: sub.ID,
		CustomerID:     sub.CustomerID,
		Status:         InvoiceUpcoming,
		AmountCents:    sub.PriceCents,
		Currency:       sub.Currency,
		PeriodStart:    start,
		PeriodEnd:      addInterval(start, sub.Interval),
		CreatedAt:      now,
	}
}

// addInterval moves t one billing interval ("month" or "year") ahead.
func addInterval(t time.Time, interval string) time.Time {
	if interval == "year" {
		return t.AddDate(1, 0, 0)
	}
	return t.AddDate(0, 1, 0)
}

// formatCents writes an amount the way a receipt does: "$18.50", "18.50 EUR".
func formatCents(cents int64, currency string) string {
	amount := fmt.Sprintf("%d.%02d", cents/100, cents%100)
	if currency == "usd" {
		return "$" + amount
	}
	return amount + " " + strings.ToUpper(currency)
}
