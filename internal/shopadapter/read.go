package shopadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"countersign/internal/adapter"
)

// maxListed caps every list a read tool returns.
const maxListed = 10

// readDef ties a read tool's spec to the code that answers it.
type readDef struct {
	spec adapter.ReadToolSpec
	run  func(a *Adapter, ctx context.Context, p adapter.Principal, args map[string]any) (adapter.ReadResult, error)
}

func readDefs() []readDef {
	return []readDef{
		{spec: adapter.ReadToolSpec{Name: "get_order", Title: "Look up an order",
			Description: "One of the customer's orders: items, amounts, refunds so far, fulfilment status, delivery date and days since delivery, shipping address.",
			Params:      []adapter.Param{idParam("order_id", "order", "ord_…, or \"walnut lamp\"")}},
			run: (*Adapter).readOrder},
		{spec: adapter.ReadToolSpec{Name: "list_orders", Title: "List orders",
			Description: "The customer's orders, newest first, with ids and a display name for each; at most 10, with truncated set and count the total.",
			Params: []adapter.Param{
				{Name: "status", Type: "string", Enum: OrderStatuses, Description: "Only orders in this fulfilment status."},
				{Name: "limit", Type: "integer", Min: adapter.Int64(1), Max: adapter.Int64(maxListed), Description: "How many to return (1-10, default 10)."},
			}},
			run: (*Adapter).readOrders},
		{spec: adapter.ReadToolSpec{Name: "list_subscriptions", Title: "List subscriptions",
			Description: "The customer's subscriptions, cancelled ones included: plan, site, status, price, period end, upcoming invoice."},
			run: (*Adapter).readSubscriptions},
		{spec: adapter.ReadToolSpec{Name: "get_invoice", Title: "Look up an invoice",
			Description: "One of the customer's invoices: number, status (upcoming, paid, void), amount, period, receipts sent.",
			Params:      []adapter.Param{idParam("invoice_id", "invoice", "in_…, or the invoice number")}},
			run: (*Adapter).readInvoice},
		{spec: adapter.ReadToolSpec{Name: "get_product", Title: "Look up a product",
			Description: "A product of the shop's catalogue: SKU, name, description, price.",
			Params:      []adapter.Param{idParam("product_id", "product", "prod_…, a SKU or the product's name")}},
			run: (*Adapter).readProduct},
		{spec: adapter.ReadToolSpec{Name: "check_inventory", Title: "Check stock",
			Description: "Whether products are in stock, how many are available and when more arrive.",
			Params: []adapter.Param{{Name: "product_ids", Type: "string", Required: true, MaxLength: 400,
				Description: "Up to 10 product ids (prod_…), separated by commas."}}},
			run: (*Adapter).readInventory},
	}
}

// Read runs a read tool for the principal. Answers are built by copying an
// allowlist of fields; lists are capped at 10 with Truncated set and Count
// the total. It fails like Resolve for objects that are not the
// customer's.
func (a *Adapter) Read(ctx context.Context, p adapter.Principal, tool string, raw json.RawMessage) (adapter.ReadResult, error) {
	i := slices.IndexFunc(a.reads, func(d readDef) bool { return d.spec.Name == tool })
	if i < 0 {
		return adapter.ReadResult{}, &adapter.Error{Code: adapter.CodeUnknownAction, Outcome: adapter.Refused,
			Message: fmt.Sprintf("System %q has no read tool %q.", a.name, tool),
			Hint:    "List the tools to see the read tools this assistant may use."}
	}
	args, err := a.reads[i].spec.Validate(raw)
	if err != nil {
		return adapter.ReadResult{}, err
	}
	return a.reads[i].run(a, ctx, p, args)
}

// OrderView is an order as get_order shows it.
type OrderView struct {
	OrderID           string          `json:"order_id"`
	Display           string          `json:"display"`
	FulfilmentStatus  string          `json:"fulfilment_status"`
	PlacedAt          time.Time       `json:"placed_at"`
	ShippedAt         *time.Time      `json:"shipped_at,omitempty"`
	DeliveredAt       *time.Time      `json:"delivered_at,omitempty"`
	DaysSinceDelivery *int            `json:"days_since_delivery,omitempty"`
	Items             []OrderItemView `json:"items"`
	ItemsTruncated    bool            `json:"items_truncated,omitempty"`
	Currency          string          `json:"currency"`
	SubtotalCents     int64           `json:"subtotal_cents"`
	ShippingCents     int64           `json:"shipping_cents"`
	TotalCents        int64           `json:"total_cents"`
	RefundedCents     int64           `json:"refunded_cents"`
	RefundableCents   int64           `json:"refundable_cents"`
	DamageReported    bool            `json:"damage_reported"`
	Carrier           string          `json:"carrier,omitempty"`
	TrackingNumber    string          `json:"tracking_number,omitempty"`
	ShippingAddress   AddressView     `json:"shipping_address"`
}

// OrderItemView is one line of an order.
type OrderItemView struct {
	ProductID      string `json:"product_id,omitempty"`
	Name           string `json:"name"`
	Quantity       int    `json:"quantity"`
	UnitPriceCents int64  `json:"unit_price_cents"`
	AmountCents    int64  `json:"amount_cents"`
}

// AddressView is a postal address; Country is ISO 3166-1 alpha-2.
type AddressView struct {
	Name       string `json:"name"`
	Line1      string `json:"line1"`
	Line2      string `json:"line2,omitempty"`
	City       string `json:"city"`
	PostalCode string `json:"postal_code"`
	Country    string `json:"country"`
}

func (a *Adapter) orderView(o shopOrder) OrderView {
	v := OrderView{OrderID: o.ID, Display: orderDisplay(o), FulfilmentStatus: o.FulfilmentStatus, PlacedAt: o.PlacedAt,
		ShippedAt: o.ShippedAt, DeliveredAt: o.DeliveredAt, Currency: o.Currency, SubtotalCents: o.SubtotalCents,
		ShippingCents: o.ShippingCents, TotalCents: o.TotalCents, RefundedCents: o.AmountRefundedCents,
		RefundableCents: o.RefundableCents, DamageReported: o.Damaged, Carrier: o.Carrier, TrackingNumber: o.TrackingNumber,
		ShippingAddress: AddressView(o.ShippingAddress), Items: []OrderItemView{}}
	if o.DeliveredAt != nil {
		days := calendarDays(*o.DeliveredAt, a.now())
		v.DaysSinceDelivery = &days
	}
	for i, it := range o.Items {
		if i == maxListed {
			v.ItemsTruncated = true
			break
		}
		item := OrderItemView{Name: it.Name, Quantity: it.Quantity, UnitPriceCents: it.UnitPriceCents, AmountCents: it.AmountCents}
		if it.ProductID != nil {
			item.ProductID = *it.ProductID
		}
		v.Items = append(v.Items, item)
	}
	return v
}

func (a *Adapter) readOrder(ctx context.Context, p adapter.Principal, args map[string]any) (adapter.ReadResult, error) {
	cust, err := a.customer(ctx, p)
	if err != nil {
		return adapter.ReadResult{}, err
	}
	o, _, err := a.findOrder(ctx, cust, str(args, "order_id"))
	if err != nil {
		return adapter.ReadResult{}, err
	}
	return adapter.ReadResult{Data: a.orderView(o), Count: 1}, nil
}

// OrderSummary is an order as list_orders shows it.
type OrderSummary struct {
	OrderID          string     `json:"order_id"`
	Display          string     `json:"display"`
	FulfilmentStatus string     `json:"fulfilment_status"`
	PlacedAt         time.Time  `json:"placed_at"`
	DeliveredAt      *time.Time `json:"delivered_at,omitempty"`
	ItemCount        int        `json:"item_count"`
	TotalCents       int64      `json:"total_cents"`
	Currency         string     `json:"currency"`
}

func (a *Adapter) readOrders(ctx context.Context, p adapter.Principal, args map[string]any) (adapter.ReadResult, error) {
	cust, err := a.customer(ctx, p)
	if err != nil {
		return adapter.ReadResult{}, err
	}
	orders, more, err := a.orders(ctx, cust)
	if err != nil {
		return adapter.ReadResult{}, err
	}
	limit := int(integer(args, "limit"))
	if limit == 0 {
		limit = maxListed
	}
	status := str(args, "status")
	out := []OrderSummary{}
	count := 0
	for _, o := range orders {
		if status != "" && o.FulfilmentStatus != status {
			continue
		}
		count++
		if len(out) < limit {
			out = append(out, OrderSummary{OrderID: o.ID, Display: orderDisplay(o), FulfilmentStatus: o.FulfilmentStatus,
				PlacedAt: o.PlacedAt, DeliveredAt: o.DeliveredAt, ItemCount: len(o.Items), TotalCents: o.TotalCents, Currency: o.Currency})
		}
	}
	return adapter.ReadResult{Data: out, Count: count, Truncated: count > len(out) || more}, nil
}

// SubscriptionView is a subscription as list_subscriptions shows it.
type SubscriptionView struct {
	SubscriptionID    string            `json:"subscription_id"`
	Display           string            `json:"display"`
	Plan              string            `json:"plan"`
	Site              string            `json:"site"`
	Status            string            `json:"status"`
	PriceCents        int64             `json:"price_cents"`
	Currency          string            `json:"currency"`
	Interval          string            `json:"interval"`
	CurrentPeriodEnd  time.Time         `json:"current_period_end"`
	CancelAtPeriodEnd bool              `json:"cancel_at_period_end"`
	EndedAt           *time.Time        `json:"ended_at,omitempty"`
	BalanceCents      int64             `json:"balance_cents"`
	PaymentMethod     PaymentMethodView `json:"payment_method"`
	UpcomingInvoiceID string            `json:"upcoming_invoice_id,omitempty"`
}

// PaymentMethodView is the card a subscription is billed to.
type PaymentMethodView struct {
	Brand  string `json:"brand"`
	Last4  string `json:"last4"`
	Status string `json:"status"`
}

func (a *Adapter) readSubscriptions(ctx context.Context, p adapter.Principal, _ map[string]any) (adapter.ReadResult, error) {
	cust, err := a.customer(ctx, p)
	if err != nil {
		return adapter.ReadResult{}, err
	}
	subs, err := a.subscriptions(ctx, cust)
	if err != nil {
		return adapter.ReadResult{}, err
	}
	out := []SubscriptionView{}
	for _, s := range subs[:min(len(subs), maxListed)] {
		v := SubscriptionView{SubscriptionID: s.ID, Display: subscriptionDisplay(s), Plan: s.Plan, Site: s.Site,
			Status: s.Status, PriceCents: s.PriceCents, Currency: s.Currency, Interval: s.Interval,
			CurrentPeriodEnd: s.CurrentPeriodEnd, CancelAtPeriodEnd: s.CancelAtPeriodEnd, EndedAt: s.EndedAt,
			BalanceCents: s.BalanceCents, PaymentMethod: PaymentMethodView(s.PaymentMethod)}
		if s.UpcomingInvoiceID != nil {
			v.UpcomingInvoiceID = *s.UpcomingInvoiceID
		}
		out = append(out, v)
	}
	return adapter.ReadResult{Data: out, Count: len(subs), Truncated: len(subs) > len(out)}, nil
}

// InvoiceView is an invoice as get_invoice shows it.
type InvoiceView struct {
	InvoiceID         string        `json:"invoice_id"`
	Number            string        `json:"number"`
	Display           string        `json:"display"`
	SubscriptionID    string        `json:"subscription_id"`
	Status            string        `json:"status"`
	AmountCents       int64         `json:"amount_cents"`
	Currency          string        `json:"currency"`
	PeriodStart       time.Time     `json:"period_start"`
	PeriodEnd         time.Time     `json:"period_end"`
	PaidAt            *time.Time    `json:"paid_at,omitempty"`
	VoidedAt          *time.Time    `json:"voided_at,omitempty"`
	ReceiptsSent      int           `json:"receipts_sent"`
	Receipts          []ReceiptView `json:"receipts"`
	ReceiptsTruncated bool          `json:"receipts_truncated,omitempty"`
}

// ReceiptView is one sending of an invoice's receipt.
type ReceiptView struct {
	ReceiptID string    `json:"receipt_id"`
	SentTo    string    `json:"sent_to"`
	SentAt    time.Time `json:"sent_at"`
}

func (a *Adapter) readInvoice(ctx context.Context, p adapter.Principal, args map[string]any) (adapter.ReadResult, error) {
	cust, err := a.customer(ctx, p)
	if err != nil {
		return adapter.ReadResult{}, err
	}
	inv, target, err := a.findInvoice(ctx, cust, str(args, "invoice_id"))
	if err != nil {
		return adapter.ReadResult{}, err
	}
	v := InvoiceView{InvoiceID: inv.ID, Number: inv.Number, Display: target.Display, SubscriptionID: inv.SubscriptionID,
		Status: inv.Status, AmountCents: inv.AmountCents, Currency: inv.Currency, PeriodStart: inv.PeriodStart,
		PeriodEnd: inv.PeriodEnd, PaidAt: inv.PaidAt, VoidedAt: inv.VoidedAt, ReceiptsSent: inv.ReceiptsSent,
		Receipts: []ReceiptView{}}
	// The newest receipts matter most; the shop lists them oldest first.
	for i := len(inv.Receipts) - 1; i >= 0; i-- {
		if len(v.Receipts) == maxListed {
			v.ReceiptsTruncated = true
			break
		}
		r := inv.Receipts[i]
		v.Receipts = append(v.Receipts, ReceiptView{ReceiptID: r.ID, SentTo: r.SentTo, SentAt: r.SentAt})
	}
	return adapter.ReadResult{Data: v, Count: 1}, nil
}

// ProductView is a product as get_product shows it.
type ProductView struct {
	ProductID   string `json:"product_id"`
	SKU         string `json:"sku"`
	Name        string `json:"name"`
	Display     string `json:"display"`
	Description string `json:"description"`
	PriceCents  int64  `json:"price_cents"`
	Currency    string `json:"currency"`
}

func (a *Adapter) readProduct(ctx context.Context, _ adapter.Principal, args map[string]any) (adapter.ReadResult, error) {
	pr, _, err := a.findProduct(ctx, str(args, "product_id"))
	if err != nil {
		return adapter.ReadResult{}, err
	}
	return adapter.ReadResult{Count: 1, Data: ProductView{ProductID: pr.ID, SKU: pr.SKU, Name: pr.Name,
		Display: productDisplay(pr), Description: pr.Description, PriceCents: pr.PriceCents, Currency: pr.Currency}}, nil
}

// InventoryReport is check_inventory's answer: the stock of each product
// found, and the ids the shop does not know.
type InventoryReport struct {
	Items    []InventoryView `json:"items"`
	NotFound []string        `json:"not_found"`
}

// InventoryView is the availability of one product.
type InventoryView struct {
	ProductID string     `json:"product_id"`
	SKU       string     `json:"sku"`
	Name      string     `json:"name"`
	Available int        `json:"available"`
	InStock   bool       `json:"in_stock"`
	RestockAt *time.Time `json:"restock_at,omitempty"`
}

func (a *Adapter) readInventory(ctx context.Context, _ adapter.Principal, args map[string]any) (adapter.ReadResult, error) {
	var ids []string
	for _, id := range strings.FieldsFunc(str(args, "product_ids"), func(r rune) bool { return r == ',' || r == ' ' }) {
		if !isID(id, "prod_") {
			return adapter.ReadResult{}, adapter.Invalid(map[string]string{"product_ids": fmt.Sprintf("%q is not a product id (prod_…)", shorten(id, 40))})
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 || len(ids) > maxListed {
		return adapter.ReadResult{}, adapter.Invalid(map[string]string{"product_ids": fmt.Sprintf("give 1 to %d product ids, separated by commas", maxListed)})
	}
	var products shopList[shopProduct]
	if err := a.shop.read(ctx, "/products?limit=100&ids="+url.QueryEscape(strings.Join(ids, ",")), &products); err != nil {
		return adapter.ReadResult{}, err
	}
	report := InventoryReport{Items: []InventoryView{}, NotFound: []string{}}
	for _, id := range ids {
		i := slices.IndexFunc(products.Data, func(pr shopProduct) bool { return pr.ID == id })
		if i < 0 {
			report.NotFound = append(report.NotFound, id)
			continue
		}
		var inv shopInventory
		if err := a.shop.read(ctx, "/inventory/"+url.PathEscape(id), &inv); err != nil {
			return adapter.ReadResult{}, err
		}
		report.Items = append(report.Items, InventoryView{ProductID: id, SKU: inv.SKU, Name: products.Data[i].Name,
			Available: inv.Available, InStock: inv.InStock, RestockAt: inv.RestockAt})
	}
	return adapter.ReadResult{Data: report, Count: len(report.Items)}, nil
}
