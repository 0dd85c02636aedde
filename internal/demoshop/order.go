package demoshop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
)

// FulfilmentStatus is where an order is between the warehouse and the door.
type FulfilmentStatus string

const (
	// FulfilmentPending orders are paid and not yet packed: the address can change.
	FulfilmentPending FulfilmentStatus = "pending"
	// FulfilmentFulfilled orders are packed and labelled.
	FulfilmentFulfilled FulfilmentStatus = "fulfilled"
	// FulfilmentShipped orders are with the carrier.
	FulfilmentShipped FulfilmentStatus = "shipped"
	// FulfilmentDelivered orders arrived at delivered_at.
	FulfilmentDelivered FulfilmentStatus = "delivered"
	// FulfilmentNotReceived orders were shipped and the customer reports they never arrived.
	FulfilmentNotReceived FulfilmentStatus = "not_received"
)

// Address is a postal address; Country is an ISO 3166-1 alpha-2 code.
type Address struct {
	Name       string `json:"name"`
	Line1      string `json:"line1"`
	Line2      string `json:"line2"`
	City       string `json:"city"`
	PostalCode string `json:"postal_code"`
	Country    string `json:"country"`
}

// OrderItem is one line of an order; ProductID is nil for items no longer sold.
type OrderItem struct {
	ID             string  `json:"id"`
	ProductID      *string `json:"product_id"`
	Name           string  `json:"name"`
	Quantity       int     `json:"quantity"`
	UnitPriceCents int64   `json:"unit_price_cents"`
	AmountCents    int64   `json:"amount_cents"`
}

// Order is a paid order as the frontend API returns it, internal fields
// (risk_score, fraud_flag, margin_cents, internal_notes) included. The
// customer paid TotalCents when ordering; RefundableCents is what is left
// after refunds, the most POST /refunds accepts.
type Order struct {
	ID string `json:"id" db:"id"`
	// Number is how the shop's own pages and e-mails name the order to its
	// customer: "#" and the id's last six characters, upper case.
	Number              string           `json:"number" db:"number"`
	CustomerID          string           `json:"customer_id" db:"customer_id"`
	Currency            string           `json:"currency" db:"currency"`
	Items               []OrderItem      `json:"items" db:"items"`
	SubtotalCents       int64            `json:"subtotal_cents" db:"subtotal_cents"`
	ShippingCents       int64            `json:"shipping_cents" db:"shipping_cents"`
	TotalCents          int64            `json:"total_cents" db:"total_cents"`
	AmountRefundedCents int64            `json:"amount_refunded_cents" db:"amount_refunded_cents"`
	RefundableCents     int64            `json:"refundable_cents" db:"refundable_cents"`
	FulfilmentStatus    FulfilmentStatus `json:"fulfilment_status" db:"fulfilment_status"`
	PlacedAt            time.Time        `json:"placed_at" db:"placed_at"`
	ShippedAt           *time.Time       `json:"shipped_at" db:"shipped_at"`
	DeliveredAt         *time.Time       `json:"delivered_at" db:"delivered_at"`
	Carrier             string           `json:"carrier" db:"carrier"`
	TrackingNumber      string           `json:"tracking_number" db:"tracking_number"`
	Damaged             bool             `json:"damaged" db:"damaged"`
	CaseNotes           string           `json:"case_notes" db:"case_notes"`
	ShippingAddress     Address          `json:"shipping_address" db:"shipping_address"`
	RiskScore           int              `json:"risk_score" db:"risk_score"`
	FraudFlag           bool             `json:"fraud_flag" db:"fraud_flag"`
	MarginCents         int64            `json:"margin_cents" db:"margin_cents"`
	InternalNotes       string           `json:"internal_notes" db:"internal_notes"`
	Version             int              `json:"version" db:"version"`
	CreatedAt           time.Time        `json:"created_at" db:"created_at"`
	UpdatedAt           time.Time        `json:"updated_at" db:"updated_at"`
}

const orderSelect = `
	SELECT o.id, '#' || upper(right(o.id, 6)) AS number, o.customer_id, o.currency,
	       COALESCE((SELECT json_agg(json_build_object(
	                    'id', li.id, 'product_id', li.product_id, 'name', li.name, 'quantity', li.quantity,
	                    'unit_price_cents', li.unit_price_cents, 'amount_cents', li.quantity * li.unit_price_cents)
	                  ORDER BY li.position)
	                 FROM shop.order_items li WHERE li.order_id = o.id), '[]') AS items,
	       items.subtotal AS subtotal_cents, o.shipping_cents,
	       items.subtotal + o.shipping_cents AS total_cents,
	       refunds.refunded AS amount_refunded_cents,
	       items.subtotal + o.shipping_cents - refunds.refunded AS refundable_cents,
	       o.fulfilment_status, o.placed_at, o.shipped_at, o.delivered_at, o.carrier, o.tracking_number,
	       o.damaged, o.case_notes,
	       json_build_object('name', o.ship_name, 'line1', o.ship_line1, 'line2', o.ship_line2,
	                         'city', o.ship_city, 'postal_code', o.ship_postal_code,
	                         'country', o.ship_country) AS shipping_address,
	       o.risk_score, o.fraud_flag, o.margin_cents, o.internal_notes, o.version, o.created_at, o.updated_at
	FROM shop.orders o
	CROSS JOIN LATERAL (SELECT COALESCE(sum(quantity * unit_price_cents), 0)::bigint AS subtotal
	                    FROM shop.order_items WHERE order_id = o.id) items
	CROSS JOIN LATERAL (SELECT COALESCE(sum(amount_cents), 0)::bigint AS refunded
	                    FROM shop.refunds WHERE order_id = o.id) refunds`

func getOrder(ctx context.Context, q querier, id string) (Order, error) {
	rows, err := q.Query(ctx, orderSelect+` WHERE o.id = $1`, id)
	if err != nil {
		return Order{}, fmt.Errorf("get order %s: %w", id, err)
	}
	o, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Order])
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, errNotFound("order", id)
	}
	if err != nil {
		return Order{}, fmt.Errorf("get order %s: %w", id, err)
	}
	return o, nil
}

// lockOrder takes the order's row lock, so refunds and address changes of one
// order happen one at a time, and reads the order.
func lockOrder(ctx context.Context, tx pgx.Tx, id string) (Order, error) {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM shop.orders WHERE id = $1 FOR UPDATE`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, errNotFound("order", id)
	}
	if err != nil {
		return Order{}, fmt.Errorf("lock order %s: %w", id, err)
	}
	return getOrder(ctx, tx, id)
}

// handleOrderGet serves GET /orders/{id}, with items and refund totals.
func (s *Shop) handleOrderGet(w http.ResponseWriter, r *http.Request) error {
	o, err := getOrder(r.Context(), s.pool, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o)
	return nil
}
