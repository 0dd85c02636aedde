package shopadapter

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"countersign/internal/adapter"
	"countersign/internal/locale"
	"countersign/internal/money"
)

// The kinds of object the shop adapter resolves.
const (
	KindSubscription = "subscription"
	KindOrder        = "order"
	KindInvoice      = "invoice"
	KindProduct      = "product"
)

// Resolve turns ref into exactly one object of kind: an id ("sub_…",
// "ord_…", "in_…", "prod_…") or the customer's words ("Pro", "acme.example",
// "Pro plan for acme.example", "walnut lamp", an invoice number, a product
// name or SKU). Subscriptions, orders and invoices must be the principal's;
// anything else is not_found. Several matches fail with
// ambiguous_reference listing them; it never guesses.
func (a *Adapter) Resolve(ctx context.Context, p adapter.Principal, kind, ref string) (adapter.Target, error) {
	if kind == KindProduct {
		_, t, err := a.findProduct(ctx, ref)
		return t, err
	}
	switch kind {
	case KindSubscription, KindOrder, KindInvoice:
	default:
		return adapter.Target{}, adapter.Invalid(map[string]string{"kind": "one of subscription, order, invoice, product"})
	}
	cust, err := a.customer(ctx, p)
	if err != nil {
		return adapter.Target{}, err
	}
	var t adapter.Target
	switch kind {
	case KindSubscription:
		_, t, err = a.findSubscription(ctx, cust, ref)
	case KindOrder:
		_, t, err = a.findOrder(ctx, cust, ref)
	default:
		_, t, err = a.findInvoice(ctx, cust, ref)
	}
	return t, err
}

func (a *Adapter) target(kind, id, display string, version int) adapter.Target {
	return adapter.Target{System: a.name, Kind: kind, ID: id, Display: display, Version: strconv.Itoa(version)}
}

func (a *Adapter) findSubscription(ctx context.Context, cust shopCustomer, ref string) (shopSubscription, adapter.Target, error) {
	ref = strings.TrimSpace(ref)
	if isID(ref, "sub_") {
		s, err := a.subscription(ctx, cust, ref)
		return s, a.target(KindSubscription, s.ID, subscriptionDisplay(s), s.Version), err
	}
	subs, err := a.subscriptions(ctx, cust)
	if err != nil {
		return shopSubscription{}, adapter.Target{}, err
	}
	s, err := pick(KindSubscription, ref, subs, subscriptionTerms, func(s shopSubscription) adapter.Candidate {
		return adapter.Candidate{ID: s.ID, Display: subscriptionDisplay(s) + ", " + subscriptionState(s)}
	})
	return s, a.target(KindSubscription, s.ID, subscriptionDisplay(s), s.Version), err
}

// subscription reads one of the customer's subscriptions by id.
func (a *Adapter) subscription(ctx context.Context, cust shopCustomer, id string) (shopSubscription, error) {
	var s shopSubscription
	err := a.shop.read(ctx, "/subscriptions/"+url.PathEscape(id), &s)
	if isCode(err, adapter.CodeNotFound) || (err == nil && s.CustomerID != cust.ID) {
		return shopSubscription{}, notOwned(KindSubscription, id)
	}
	return s, err
}

func (a *Adapter) subscriptions(ctx context.Context, cust shopCustomer) ([]shopSubscription, error) {
	var list shopList[shopSubscription]
	err := a.shop.read(ctx, "/customers/"+url.PathEscape(cust.ID)+"/subscriptions?limit=100", &list)
	return list.Data, err
}

func subscriptionDisplay(s shopSubscription) string {
	return fmt.Sprintf("%s plan for %s", s.Plan, s.Site)
}

// subscriptionState says where a subscription stands, for candidates.
func subscriptionState(s shopSubscription) string {
	switch {
	case s.Status != "cancelled":
		return "active, renews " + longDate(s.CurrentPeriodEnd)
	case s.CancelAtPeriodEnd:
		return "cancelled, access until " + longDate(lastDay(s.CurrentPeriodEnd))
	default:
		return "cancelled"
	}
}

func subscriptionTerms(s shopSubscription) []string {
	terms := []string{s.ID, s.Plan, s.Site, siteLabel(s.Site), s.Status, s.Interval, s.Interval + "ly"}
	if s.Interval == "year" {
		terms = append(terms, "annual")
	}
	return terms
}

func (a *Adapter) findOrder(ctx context.Context, cust shopCustomer, ref string) (shopOrder, adapter.Target, error) {
	ref = strings.TrimSpace(ref)
	if isID(ref, "ord_") {
		o, err := a.order(ctx, cust, ref)
		return o, a.orderTarget(o), err
	}
	orders, _, err := a.orders(ctx, cust)
	if err != nil {
		return shopOrder{}, adapter.Target{}, err
	}
	o, err := pick(KindOrder, ref, orders, orderTerms, func(o shopOrder) adapter.Candidate {
		return adapter.Candidate{ID: o.ID, Display: orderDisplay(o)}
	})
	return o, a.orderTarget(o), err
}

// IdentityOrderNumber is the business key of the shop's orders: the
// number its pages and mail give the customer, which a payment provider
// or another system of the business records with the order's payment. A
// description file that declares the same identity name reaches the same
// orders (internal/httpadapter/README.md, "identity").
const IdentityOrderNumber = "order_number"

// orderTarget is an order as a target, its business key read from the
// shop's answer (never from the arguments that named it).
func (a *Adapter) orderTarget(o shopOrder) adapter.Target {
	t := a.target(KindOrder, o.ID, orderDisplay(o), o.Version)
	if o.Number != "" {
		t.BusinessKey = &adapter.BusinessKey{Name: IdentityOrderNumber, Value: o.Number}
	}
	return t
}

func (a *Adapter) order(ctx context.Context, cust shopCustomer, id string) (shopOrder, error) {
	var o shopOrder
	err := a.shop.read(ctx, "/orders/"+url.PathEscape(id), &o)
	if isCode(err, adapter.CodeNotFound) || (err == nil && o.CustomerID != cust.ID) {
		return shopOrder{}, notOwned(KindOrder, id)
	}
	return o, err
}

// orders reads the customer's orders, newest first; more is true when the
// shop had more than one page.
func (a *Adapter) orders(ctx context.Context, cust shopCustomer) (orders []shopOrder, more bool, err error) {
	var list shopList[shopOrder]
	err = a.shop.read(ctx, "/customers/"+url.PathEscape(cust.ID)+"/orders?limit=100", &list)
	return list.Data, list.HasMore, err
}

// orderDisplay names an order the way a customer recognises it:
// "Order ord_… (Walnut desk lamp, delivered 20 Mar)".
func orderDisplay(o shopOrder) string {
	return fmt.Sprintf("Order %s (%s, %s)", o.ID, orderItems(o), orderState(o))
}

// orderNumber is the order's short reference as the shop shows it to its
// customers ("#245695"); a shop that sends none gets the last six
// characters of the id.
func orderNumber(o shopOrder) string {
	if o.Number != "" {
		return o.Number
	}
	return "#" + shortID(o.ID)
}

// shortID is the last six characters of an id, upper case: short enough
// to read out, and enough to find the object again.
func shortID(id string) string {
	if len(id) > 6 {
		id = id[len(id)-6:]
	}
	return strings.ToUpper(id)
}

// orderFacts are how a customer recognises an order: its number, the day
// it was placed and its items, with no internal id.
func orderFacts(t texts, o shopOrder) *adapter.CustomerFacts {
	f := &adapter.CustomerFacts{Reference: t.T("facts.reference", locale.Params{"Number": orderNumber(o)}), DateLabel: t.T("facts.ordered", nil)}
	placed := o.PlacedAt.UTC()
	f.Date = &placed
	for _, it := range o.Items {
		f.Items = append(f.Items, t.T("facts.item", locale.Params{"Name": it.Name, "Quantity": it.Quantity}))
	}
	return f
}

func orderItems(o shopOrder) string {
	switch len(o.Items) {
	case 0:
		return "no items"
	case 1:
		return o.Items[0].Name
	default:
		return fmt.Sprintf("%s and %s more", o.Items[0].Name, plural(len(o.Items)-1, "item"))
	}
}

func orderState(o shopOrder) string {
	switch {
	case o.FulfilmentStatus == "delivered" && o.DeliveredAt != nil:
		return "delivered " + shortDate(*o.DeliveredAt)
	case o.FulfilmentStatus == "not_received" && o.ShippedAt != nil:
		return "shipped " + shortDate(*o.ShippedAt) + ", reported not received"
	case o.FulfilmentStatus == "shipped" && o.ShippedAt != nil:
		return "shipped " + shortDate(*o.ShippedAt)
	case o.FulfilmentStatus == "fulfilled":
		return "packed " + shortDate(o.PlacedAt) + ", not shipped yet"
	case o.FulfilmentStatus == "pending":
		return "placed " + shortDate(o.PlacedAt) + ", not shipped yet"
	default:
		return words(o.FulfilmentStatus)
	}
}

func orderTerms(o shopOrder) []string {
	terms := []string{o.ID, words(o.FulfilmentStatus), o.Carrier, o.TrackingNumber}
	for _, it := range o.Items {
		terms = append(terms, it.Name)
	}
	switch o.FulfilmentStatus {
	case "pending", "fulfilled", "shipped":
		terms = append(terms, "open")
	}
	if o.Damaged {
		terms = append(terms, "damaged", "broken")
	}
	terms = append(terms, monthNames(o.PlacedAt)...)
	if o.DeliveredAt != nil {
		terms = append(terms, monthNames(*o.DeliveredAt)...)
	}
	return terms
}

func (a *Adapter) findInvoice(ctx context.Context, cust shopCustomer, ref string) (shopInvoice, adapter.Target, error) {
	ref = strings.TrimSpace(ref)
	subs, err := a.subscriptions(ctx, cust)
	if err != nil {
		return shopInvoice{}, adapter.Target{}, err
	}
	display := func(inv shopInvoice) string { return invoiceDisplay(inv, subs) }
	if isID(ref, "in_") {
		var inv shopInvoice
		err := a.shop.read(ctx, "/invoices/"+url.PathEscape(ref), &inv)
		if isCode(err, adapter.CodeNotFound) || (err == nil && inv.CustomerID != cust.ID) {
			return shopInvoice{}, adapter.Target{}, notOwned(KindInvoice, ref)
		}
		return inv, a.target(KindInvoice, inv.ID, display(inv), inv.Version), err
	}
	var list shopList[shopInvoice]
	if err := a.shop.read(ctx, "/invoices?limit=100&customer_id="+url.QueryEscape(cust.ID), &list); err != nil {
		return shopInvoice{}, adapter.Target{}, err
	}
	terms := func(inv shopInvoice) []string {
		t := append([]string{inv.ID, inv.Number, inv.Status}, monthNames(inv.PeriodStart)...)
		for _, s := range subs {
			if s.ID == inv.SubscriptionID {
				t = append(t, s.Plan, s.Site, siteLabel(s.Site))
			}
		}
		return t
	}
	inv, err := pick(KindInvoice, ref, list.Data, terms, func(inv shopInvoice) adapter.Candidate {
		return adapter.Candidate{ID: inv.ID, Display: display(inv)}
	})
	return inv, a.target(KindInvoice, inv.ID, display(inv), inv.Version), err
}

// invoiceDisplay: "Invoice 1A2B-0001 (Pro plan for acme.example, 12 Mar – 12 Apr 2026, paid $49.00)".
func invoiceDisplay(inv shopInvoice, subs []shopSubscription) string {
	what := "subscription"
	for _, s := range subs {
		if s.ID == inv.SubscriptionID {
			what = subscriptionDisplay(s)
		}
	}
	return fmt.Sprintf("Invoice %s (%s, %s – %s, %s %s)", inv.Number, what, shortDate(inv.PeriodStart),
		inv.PeriodEnd.UTC().Format("2 Jan 2006"), inv.Status, money.Format(inv.AmountCents, inv.Currency))
}

// findProduct resolves a product of the shop's catalogue. Products belong
// to the shop, not to a customer: there is no owner to check.
func (a *Adapter) findProduct(ctx context.Context, ref string) (shopProduct, adapter.Target, error) {
	ref = strings.TrimSpace(ref)
	if isID(ref, "prod_") {
		var pr shopProduct
		err := a.shop.read(ctx, "/products/"+url.PathEscape(ref), &pr)
		if isCode(err, adapter.CodeNotFound) {
			err = adapter.NotFound(KindProduct, ref)
		}
		return pr, a.target(KindProduct, pr.ID, productDisplay(pr), pr.Version), err
	}
	var list shopList[shopProduct]
	if err := a.shop.read(ctx, "/products?limit=100", &list); err != nil {
		return shopProduct{}, adapter.Target{}, err
	}
	// A SKU names one product exactly, whatever else its words match.
	for _, pr := range list.Data {
		if strings.EqualFold(pr.SKU, ref) {
			return pr, a.target(KindProduct, pr.ID, productDisplay(pr), pr.Version), nil
		}
	}
	pr, err := pick(KindProduct, ref, list.Data, func(pr shopProduct) []string {
		return []string{pr.ID, pr.SKU, pr.Name}
	}, func(pr shopProduct) adapter.Candidate {
		return adapter.Candidate{ID: pr.ID, Display: productDisplay(pr)}
	})
	return pr, a.target(KindProduct, pr.ID, productDisplay(pr), pr.Version), err
}

func productDisplay(pr shopProduct) string { return fmt.Sprintf("%s (%s)", pr.Name, pr.SKU) }

// pick keeps the items every meaningful word of ref describes: one is the
// answer, none is not_found, several are ambiguous_reference with the
// candidates in human terms.
func pick[T any](kind, ref string, items []T, terms func(T) []string, candidate func(T) adapter.Candidate) (T, error) {
	var zero T
	if ref == "" {
		return zero, adapter.Invalid(map[string]string{kind + "_id": "required: an id or the customer's words for the " + kind})
	}
	var matched []T
	for _, it := range items {
		if describes(ref, terms(it)) {
			matched = append(matched, it)
		}
	}
	switch len(matched) {
	case 0:
		return zero, adapter.NotFound(kind, ref)
	case 1:
		return matched[0], nil
	}
	candidates := make([]adapter.Candidate, 0, len(matched))
	for _, it := range matched {
		candidates = append(candidates, candidate(it))
	}
	// The shop's order can depend on ids; people read a sorted list.
	slices.SortStableFunc(candidates, func(x, y adapter.Candidate) int { return strings.Compare(x.Display, y.Display) })
	return zero, adapter.Ambiguous(kind, ref, candidates)
}

// shopNouns are the shop's words for its kinds of object, which name no
// object in particular ("my plan").
var shopNouns = map[string]bool{"plan": true, "subscription": true, "order": true, "invoice": true,
	"receipt": true, "product": true, "site": true, "account": true}

// describes reports whether every meaningful word of ref is one of the
// object's terms, with the shop's nouns passed over.
func describes(ref string, terms []string) bool { return adapter.Describes(ref, terms, shopNouns) }

// siteLabel is a domain's first label: "acme" for "acme.example".
func siteLabel(domain string) string {
	label, _, _ := strings.Cut(domain, ".")
	return label
}

func monthNames(t time.Time) []string {
	m := t.UTC().Month().String()
	return []string{m, m[:3]}
}

// isID reports whether ref is shaped like an id with prefix: the prefix and
// then only letters, digits and underscores.
func isID(ref, prefix string) bool {
	rest, ok := strings.CutPrefix(ref, prefix)
	if !ok || rest == "" {
		return false
	}
	for _, r := range rest {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
			return false
		}
	}
	return true
}
