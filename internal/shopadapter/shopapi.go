package shopadapter

import (
	"encoding/json"
	"time"
)

// The shop's answers, decoded into only the fields the adapter uses. The
// shop sends internal fields (risk_score, margin_cents, internal_notes,
// processor ids, cost_cents, supplier_notes, …) on purpose; they have no
// field here, so they are dropped while decoding and never reach a result,
// a quote or an error.

type shopList[T any] struct {
	Data    []T  `json:"data"`
	HasMore bool `json:"has_more"`
}

type shopSite struct {
	ID     string `json:"id"`
	Domain string `json:"domain"`
}

type shopCustomer struct {
	ID    string     `json:"id"`
	Name  string     `json:"name"`
	Email string     `json:"email"`
	Sites []shopSite `json:"sites"`
	// Locale is the customer's language as the shop keeps it.
	Locale string `json:"locale"`
}

type shopPaymentMethod struct {
	Brand  string `json:"brand"`
	Last4  string `json:"last4"`
	Status string `json:"status"`
}

type shopSubscription struct {
	ID                 string            `json:"id"`
	CustomerID         string            `json:"customer_id"`
	Site               string            `json:"site"`
	Plan               string            `json:"plan"`
	PriceCents         int64             `json:"price_cents"`
	Currency           string            `json:"currency"`
	Interval           string            `json:"interval"`
	Status             string            `json:"status"`
	CurrentPeriodStart time.Time         `json:"current_period_start"`
	CurrentPeriodEnd   time.Time         `json:"current_period_end"`
	CancelAtPeriodEnd  bool              `json:"cancel_at_period_end"`
	CancelledAt        *time.Time        `json:"cancelled_at"`
	CancelReason       *string           `json:"cancel_reason"`
	EndedAt            *time.Time        `json:"ended_at"`
	BalanceCents       int64             `json:"balance_cents"`
	PaymentMethod      shopPaymentMethod `json:"payment_method"`
	UpcomingInvoiceID  *string           `json:"upcoming_invoice_id"`
	Version            int               `json:"version"`
}

type shopReceipt struct {
	ID     string    `json:"id"`
	SentTo string    `json:"sent_to"`
	SentAt time.Time `json:"sent_at"`
}

type shopInvoice struct {
	ID                string        `json:"id"`
	Number            string        `json:"number"`
	SubscriptionID    string        `json:"subscription_id"`
	CustomerID        string        `json:"customer_id"`
	Status            string        `json:"status"`
	AmountCents       int64         `json:"amount_cents"`
	Currency          string        `json:"currency"`
	PeriodStart       time.Time     `json:"period_start"`
	PeriodEnd         time.Time     `json:"period_end"`
	PaidAt            *time.Time    `json:"paid_at"`
	VoidedAt          *time.Time    `json:"voided_at"`
	ReceiptsSent      int           `json:"receipts_sent"`
	LastReceiptSentAt *time.Time    `json:"last_receipt_sent_at"`
	Receipts          []shopReceipt `json:"receipts"`
	Version           int           `json:"version"`
}

type shopAddress struct {
	Name       string `json:"name"`
	Line1      string `json:"line1"`
	Line2      string `json:"line2"`
	City       string `json:"city"`
	PostalCode string `json:"postal_code"`
	Country    string `json:"country"`
}

type shopOrderItem struct {
	ID             string  `json:"id"`
	ProductID      *string `json:"product_id"`
	Name           string  `json:"name"`
	Quantity       int     `json:"quantity"`
	UnitPriceCents int64   `json:"unit_price_cents"`
	AmountCents    int64   `json:"amount_cents"`
}

type shopOrder struct {
	ID                  string          `json:"id"`
	Number              string          `json:"number"`
	CustomerID          string          `json:"customer_id"`
	Currency            string          `json:"currency"`
	Items               []shopOrderItem `json:"items"`
	SubtotalCents       int64           `json:"subtotal_cents"`
	ShippingCents       int64           `json:"shipping_cents"`
	TotalCents          int64           `json:"total_cents"`
	AmountRefundedCents int64           `json:"amount_refunded_cents"`
	RefundableCents     int64           `json:"refundable_cents"`
	FulfilmentStatus    string          `json:"fulfilment_status"`
	PlacedAt            time.Time       `json:"placed_at"`
	ShippedAt           *time.Time      `json:"shipped_at"`
	DeliveredAt         *time.Time      `json:"delivered_at"`
	Carrier             string          `json:"carrier"`
	TrackingNumber      string          `json:"tracking_number"`
	Damaged             bool            `json:"damaged"`
	ShippingAddress     shopAddress     `json:"shipping_address"`
	Version             int             `json:"version"`
}

type shopRefund struct {
	ID          string    `json:"id"`
	OrderID     string    `json:"order_id"`
	AmountCents int64     `json:"amount_cents"`
	Currency    string    `json:"currency"`
	Reason      string    `json:"reason"`
	Status      string    `json:"status"`
	CreatedAt   time.Time `json:"created_at"`
}

type shopProduct struct {
	ID          string `json:"id"`
	SKU         string `json:"sku"`
	Name        string `json:"name"`
	Description string `json:"description"`
	PriceCents  int64  `json:"price_cents"`
	Currency    string `json:"currency"`
	Stock       int    `json:"stock"`
	Version     int    `json:"version"`
}

type shopInventory struct {
	ProductID string     `json:"product_id"`
	SKU       string     `json:"sku"`
	Available int        `json:"available"`
	InStock   bool       `json:"in_stock"`
	RestockAt *time.Time `json:"restock_at"`
}

// shopEffect is one row of the shop's effect ledger (GET /_ledger).
type shopEffect struct {
	ID        int64           `json:"id"`
	At        time.Time       `json:"at"`
	Kind      string          `json:"kind"`
	Object    string          `json:"object"`
	RequestID string          `json:"request_id"`
	Data      json.RawMessage `json:"data"`
}

// The shop's effect kinds the adapter reads as evidence.
const (
	effectSubscriptionCancelled  = "subscription.cancelled"
	effectSubscriptionReinstated = "subscription.reinstated"
	effectInvoiceVoided          = "invoice.voided"
	effectReceiptSent            = "receipt.sent"
	effectRefundCreated          = "refund.created"
	effectAddressChanged         = "order.shipping_address_changed"
	effectProductUpdated         = "product.updated"
)
