package demoshop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
)

// SubscriptionStatus is the state of a subscription.
type SubscriptionStatus string

const (
	// SubscriptionActive bills every period.
	SubscriptionActive SubscriptionStatus = "active"
	// SubscriptionCancelled bills no more: with cancel_at_period_end it keeps
	// access until current_period_end, otherwise it ended at ended_at.
	SubscriptionCancelled SubscriptionStatus = "cancelled"
)

// PaymentMethodStatus says whether the card on file can be charged.
type PaymentMethodStatus string

const (
	// PaymentMethodValid cards are charged successfully.
	PaymentMethodValid PaymentMethodStatus = "valid"
	// PaymentMethodDeclined cards are declined: a charge gets 402 card_declined.
	PaymentMethodDeclined PaymentMethodStatus = "declined"
)

// PaymentMethod is the card a subscription is billed to.
type PaymentMethod struct {
	Brand  string              `json:"brand"`
	Last4  string              `json:"last4"`
	Status PaymentMethodStatus `json:"status"`
}

// Subscription is a plan a customer pays for one site, as the frontend API
// returns it, internal fields (margin_cents, processor_subscription_id,
// internal_notes) included. BalanceCents is usage owed now, which an
// immediate cancellation must charge to the card.
type Subscription struct {
	ID                      string             `json:"id" db:"id"`
	CustomerID              string             `json:"customer_id" db:"customer_id"`
	SiteID                  string             `json:"site_id" db:"site_id"`
	Site                    string             `json:"site" db:"site"`
	Plan                    string             `json:"plan" db:"plan"`
	PriceCents              int64              `json:"price_cents" db:"price_cents"`
	Currency                string             `json:"currency" db:"currency"`
	Interval                string             `json:"interval" db:"billing_interval"`
	Status                  SubscriptionStatus `json:"status" db:"status"`
	CurrentPeriodStart      time.Time          `json:"current_period_start" db:"current_period_start"`
	CurrentPeriodEnd        time.Time          `json:"current_period_end" db:"current_period_end"`
	CancelAtPeriodEnd       bool               `json:"cancel_at_period_end" db:"cancel_at_period_end"`
	CancelledAt             *time.Time         `json:"cancelled_at" db:"cancelled_at"`
	CancelReason            *string            `json:"cancel_reason" db:"cancel_reason"`
	EndedAt                 *time.Time         `json:"ended_at" db:"ended_at"`
	BalanceCents            int64              `json:"balance_cents" db:"balance_cents"`
	PaymentMethod           PaymentMethod      `json:"payment_method" db:"payment_method"`
	UpcomingInvoiceID       *string            `json:"upcoming_invoice_id" db:"upcoming_invoice_id"`
	MarginCents             int64              `json:"margin_cents" db:"margin_cents"`
	ProcessorSubscriptionID string             `json:"processor_subscription_id" db:"processor_subscription_id"`
	InternalNotes           string             `json:"internal_notes" db:"internal_notes"`
	Version                 int                `json:"version" db:"version"`
	CreatedAt               time.Time          `json:"created_at" db:"created_at"`
	UpdatedAt               time.Time          `json:"updated_at" db:"updated_at"`
}

const subscriptionSelect = `
	SELECT sub.id, sub.customer_id, sub.site_id, site.domain AS site, sub.plan, sub.price_cents,
	       sub.currency, sub.billing_interval, sub.status, sub.current_period_start,
	       sub.current_period_end, sub.cancel_at_period_end, sub.cancelled_at, sub.cancel_reason,
	       sub.ended_at, sub.balance_cents,
	       json_build_object('brand', sub.payment_method_brand, 'last4', sub.payment_method_last4,
	                         'status', sub.payment_method_status) AS payment_method,
	       (SELECT i.id FROM shop.invoices i
	        WHERE i.subscription_id = sub.id AND i.status = 'upcoming'
	        ORDER BY i.period_start, i.id LIMIT 1) AS upcoming_invoice_id,
	       sub.margin_cents, sub.processor_subscription_id, sub.internal_notes,
	       sub.version, sub.created_at, sub.updated_at
	FROM shop.subscriptions sub
	JOIN shop.sites site ON site.id = sub.site_id`

func getSubscription(ctx context.Context, q querier, id string) (Subscription, error) {
	rows, err := q.Query(ctx, subscriptionSelect+` WHERE sub.id = $1`, id)
	if err != nil {
		return Subscription{}, fmt.Errorf("get subscription %s: %w", id, err)
	}
	sub, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Subscription])
	if errors.Is(err, pgx.ErrNoRows) {
		return Subscription{}, errNotFound("subscription", id)
	}
	if err != nil {
		return Subscription{}, fmt.Errorf("get subscription %s: %w", id, err)
	}
	return sub, nil
}

// handleSubscriptionGet serves GET /subscriptions/{id}.
func (s *Shop) handleSubscriptionGet(w http.ResponseWriter, r *http.Request) error {
	sub, err := getSubscription(r.Context(), s.pool, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sub)
	return nil
}
