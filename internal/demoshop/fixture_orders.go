package demoshop

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ProductFixture describes a product for CreateProduct; zero fields get
// defaults, except Stock: zero means out of stock.
type ProductFixture struct {
	ID            string     // default: a random "prod_…" id
	SKU           string     // default: from the id
	Name          string     // default: "Sample product"
	Description   string     // may be empty
	PriceCents    int64      // default: 2500
	Currency      string     // default: "usd"
	CostCents     int64      // internal; default: 40% of the price
	Stock         int        // units on hand
	Reserved      int        // units held for open orders
	Warehouse     string     // default: "AMS-1"
	RestockAt     *time.Time // when more stock arrives
	SupplierNotes string     // internal
}

// CreateProduct inserts a product directly, without a ledger effect. It fails
// when the id or SKU is taken.
func (s *Shop) CreateProduct(ctx context.Context, f ProductFixture) (Product, error) {
	var out Product
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		id, err := s.insertProduct(ctx, tx, f, randomIDs)
		if err != nil {
			return err
		}
		out, err = getProduct(ctx, tx, id)
		return err
	})
	if err != nil {
		return Product{}, fmt.Errorf("demoshop: create product: %w", err)
	}
	return out, nil
}

func (s *Shop) insertProduct(ctx context.Context, tx pgx.Tx, f ProductFixture, ids idSource) (string, error) {
	if f.ID == "" {
		f.ID = ids("prod_", f.SKU)
	}
	if f.SKU == "" {
		f.SKU = "SKU-" + strings.ToUpper(f.ID[len(f.ID)-8:])
	}
	if f.Name == "" {
		f.Name = "Sample product"
	}
	if f.PriceCents == 0 {
		f.PriceCents = 2500
	}
	if f.Currency == "" {
		f.Currency = "usd"
	}
	if f.CostCents == 0 {
		f.CostCents = f.PriceCents * 4 / 10
	}
	if f.Warehouse == "" {
		f.Warehouse = "AMS-1"
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO shop.products (id, sku, name, description, price_cents, currency, cost_cents, stock,
		                           reserved, warehouse, restock_at, supplier_notes, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)`,
		f.ID, f.SKU, f.Name, f.Description, f.PriceCents, f.Currency, f.CostCents, f.Stock, f.Reserved,
		f.Warehouse, f.RestockAt, f.SupplierNotes, s.now())
	if err != nil {
		return "", fmt.Errorf("insert product %s: %w", f.SKU, err)
	}
	return f.ID, nil
}

// ItemFixture is one line of an OrderFixture. With a ProductID, an empty
// Name or zero UnitPriceCents is taken from the product.
type ItemFixture struct {
	ProductID      string
	Name           string // default: the product's name, or "Sample item"
	Quantity       int    // default: 1
	UnitPriceCents int64  // default: the product's price, or 2500
}

// OrderFixture describes a paid order for CreateOrder; zero fields get
// defaults.
type OrderFixture struct {
	ID               string           // default: a random "ord_" + 16 hex digits
	CustomerID       string           // required
	Items            []ItemFixture    // default: one "Sample item" at 25.00
	ShippingCents    int64            // what the customer paid for shipping
	Currency         string           // default: "usd"
	FulfilmentStatus FulfilmentStatus // default: delivered with DeliveredAt, else pending
	PlacedAt         time.Time        // default: 3 days before DeliveredAt, else now
	DeliveredAt      *time.Time       // nil: not delivered
	Damaged          bool             // the customer reported damage
	CaseNotes        string           // what support noted about a damage or loss case
	ShippingAddress  *Address         // default: a US address in the customer's name
	RiskScore        int              // internal; 0..100
	FraudFlag        bool             // internal
	MarginCents      int64            // internal; default: 30% of the subtotal
	InternalNotes    string           // internal
}

// CreateOrder inserts a paid order directly, without a ledger effect, e.g.
// one delivered exactly 30 days ago. It fails when the customer or a product
// does not exist.
func (s *Shop) CreateOrder(ctx context.Context, f OrderFixture) (Order, error) {
	var out Order
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		id, err := s.insertOrder(ctx, tx, f, randomIDs)
		if err != nil {
			return err
		}
		out, err = getOrder(ctx, tx, id)
		return err
	})
	if err != nil {
		return Order{}, fmt.Errorf("demoshop: create order: %w", err)
	}
	return out, nil
}

func (s *Shop) insertOrder(ctx context.Context, tx pgx.Tx, f OrderFixture, ids idSource) (string, error) {
	now := s.now()
	if f.ID == "" {
		f.ID = ids("ord_", f.CustomerID)
	}
	if f.Currency == "" {
		f.Currency = "usd"
	}
	if f.FulfilmentStatus == "" {
		f.FulfilmentStatus = FulfilmentPending
		if f.DeliveredAt != nil {
			f.FulfilmentStatus = FulfilmentDelivered
		}
	}
	if f.PlacedAt.IsZero() {
		f.PlacedAt = now
		if f.DeliveredAt != nil {
			f.PlacedAt = f.DeliveredAt.AddDate(0, 0, -3)
		}
	}
	if len(f.Items) == 0 {
		f.Items = []ItemFixture{{}}
	}
	items, subtotal, err := resolveItems(ctx, tx, f.Items)
	if err != nil {
		return "", err
	}
	if f.MarginCents == 0 {
		f.MarginCents = subtotal * 3 / 10
	}
	addr := f.ShippingAddress
	if addr == nil {
		var name string
		if err := tx.QueryRow(ctx, `SELECT name FROM shop.customers WHERE id = $1`, f.CustomerID).Scan(&name); err != nil {
			return "", fmt.Errorf("read customer %s: %w", f.CustomerID, err)
		}
		addr = &Address{Name: name, Line1: "500 Market Street", Line2: "Suite 210", City: "San Francisco", PostalCode: "94105", Country: "US"}
	}
	var shippedAt *time.Time
	carrier, tracking := "", ""
	if f.FulfilmentStatus != FulfilmentPending && f.FulfilmentStatus != FulfilmentFulfilled {
		at := f.PlacedAt.Add(26 * time.Hour)
		shippedAt, carrier, tracking = &at, "UPS", "1Z"+strings.ToUpper(f.ID[len(f.ID)-12:])
	}
	_, err = tx.Exec(ctx, `
		INSERT INTO shop.orders (id, customer_id, currency, shipping_cents, fulfilment_status, placed_at,
		    shipped_at, delivered_at, carrier, tracking_number, damaged, case_notes, ship_name, ship_line1,
		    ship_line2, ship_city, ship_postal_code, ship_country, risk_score, fraud_flag, margin_cents,
		    internal_notes, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
		        $21, $22, $23, $23)`,
		f.ID, f.CustomerID, f.Currency, f.ShippingCents, f.FulfilmentStatus, f.PlacedAt, shippedAt,
		f.DeliveredAt, carrier, tracking, f.Damaged, f.CaseNotes, addr.Name, addr.Line1, addr.Line2,
		addr.City, addr.PostalCode, addr.Country, f.RiskScore, f.FraudFlag, f.MarginCents, f.InternalNotes, now)
	if err != nil {
		return "", fmt.Errorf("insert order for %s: %w", f.CustomerID, err)
	}
	for i, it := range items {
		_, err := tx.Exec(ctx, `
			INSERT INTO shop.order_items (id, order_id, position, product_id, name, quantity, unit_price_cents)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			ids("li_", fmt.Sprint(f.ID, i)), f.ID, i+1, it.productID, it.Name, it.Quantity, it.UnitPriceCents)
		if err != nil {
			return "", fmt.Errorf("insert item %d of order %s: %w", i+1, f.ID, err)
		}
	}
	return f.ID, nil
}

type resolvedItem struct {
	ItemFixture
	productID *string
}

// resolveItems fills items from their products and sums them.
func resolveItems(ctx context.Context, tx pgx.Tx, in []ItemFixture) ([]resolvedItem, int64, error) {
	out := make([]resolvedItem, 0, len(in))
	var subtotal int64
	for _, it := range in {
		r := resolvedItem{ItemFixture: it}
		if it.ProductID != "" {
			var name string
			var price int64
			err := tx.QueryRow(ctx, `SELECT name, price_cents FROM shop.products WHERE id = $1`, it.ProductID).Scan(&name, &price)
			if err != nil {
				return nil, 0, fmt.Errorf("read product %s: %w", it.ProductID, err)
			}
			r.productID = &it.ProductID
			if r.Name == "" {
				r.Name = name
			}
			if r.UnitPriceCents == 0 {
				r.UnitPriceCents = price
			}
		}
		if r.Name == "" {
			r.Name = "Sample item"
		}
		if r.UnitPriceCents == 0 {
			r.UnitPriceCents = 2500
		}
		if r.Quantity == 0 {
			r.Quantity = 1
		}
		subtotal += int64(r.Quantity) * r.UnitPriceCents
		out = append(out, r)
	}
	return out, subtotal, nil
}

// RefundFixture describes an earlier refund for CreateRefund.
type RefundFixture struct {
	OrderID     string    // required
	AmountCents int64     // required; at most what is left to refund
	Reason      string    // free text
	CreatedAt   time.Time // default: now
}

// CreateRefund inserts a refund directly, as history: no ledger effect and no
// version change. It fails like POST /refunds when the amount is above what
// is left to refund.
func (s *Shop) CreateRefund(ctx context.Context, f RefundFixture) (Refund, error) {
	var out Refund
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		order, err := lockOrder(ctx, tx, f.OrderID)
		if err != nil {
			return err
		}
		if err := checkRefundable(order, f.AmountCents); err != nil {
			return err
		}
		if f.CreatedAt.IsZero() {
			f.CreatedAt = s.now()
		}
		id := newID("re_")
		_, err = tx.Exec(ctx, `
			INSERT INTO shop.refunds (id, order_id, amount_cents, currency, reason, status, processor_refund_id, created_at)
			VALUES ($1, $2, $3, $4, $5, 'succeeded', $6, $7)`,
			id, order.ID, f.AmountCents, order.Currency, f.Reason, "pyr_"+id[len("re_"):], f.CreatedAt)
		if err != nil {
			return fmt.Errorf("insert refund on %s: %w", order.ID, err)
		}
		rows, err := tx.Query(ctx, refundSelect+` WHERE id = $1`, id)
		if err != nil {
			return fmt.Errorf("read refund %s: %w", id, err)
		}
		out, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Refund])
		return err
	})
	if err != nil {
		return Refund{}, fmt.Errorf("demoshop: create refund: %w", err)
	}
	return out, nil
}
