package demoshop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// idSource names new objects: fixtures draw random ids, the seed derives
// stable ones from a key so every seeded shop has the same ids.
type idSource func(prefix, key string) string

func randomIDs(prefix, _ string) string { return newID(prefix) }

func seedIDs(prefix, key string) string {
	sum := sha256.Sum256([]byte("countersign-demoshop:" + prefix + key))
	return prefix + hex.EncodeToString(sum[:8])
}

// CustomerFixture describes a customer for CreateCustomer; zero fields get
// defaults.
type CustomerFixture struct {
	ID            string   // default: a random "cus_…" id
	Name          string   // default: "Test Customer"
	Email         string   // default: unique, from the id
	Sites         []string // domains; default: one "<id>.example"
	RiskScore     int      // internal; 0..100
	FraudFlag     bool     // internal
	InternalNotes string   // internal
	Locale        string   // the customer's language, a BCP 47 tag; default none
}

// CreateCustomer inserts a customer and its sites directly, without the HTTP
// API and without a ledger effect, for tests of other packages. It fails
// when an id, email or domain is already taken.
func (s *Shop) CreateCustomer(ctx context.Context, f CustomerFixture) (Customer, error) {
	var out Customer
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		id, err := s.insertCustomer(ctx, tx, f, randomIDs)
		if err != nil {
			return err
		}
		out, err = getCustomer(ctx, tx, id)
		return err
	})
	if err != nil {
		return Customer{}, fmt.Errorf("demoshop: create customer: %w", err)
	}
	return out, nil
}

// SetCustomerLocale records the language of the customer with email, as
// a shop's customer record keeps it (a BCP 47 tag, "" for none), for tests
// of other packages. It fails when the shop has no such customer.
func (s *Shop) SetCustomerLocale(ctx context.Context, email, locale string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE shop.customers SET locale = $2, version = version + 1, updated_at = $3
		WHERE lower(email) = lower($1)`, email, locale, s.now())
	if err != nil {
		return fmt.Errorf("demoshop: set the locale of %s: %w", email, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("demoshop: set the locale of %s: %w", email, errNotFound("customer", email))
	}
	return nil
}

func (s *Shop) insertCustomer(ctx context.Context, tx pgx.Tx, f CustomerFixture, ids idSource) (string, error) {
	if f.ID == "" {
		f.ID = ids("cus_", f.Email)
	}
	if f.Name == "" {
		f.Name = "Test Customer"
	}
	if f.Email == "" {
		f.Email = f.ID + "@example.test"
	}
	if len(f.Sites) == 0 {
		f.Sites = []string{f.ID + ".example"}
	}
	now := s.now()
	_, err := tx.Exec(ctx, `
		INSERT INTO shop.customers (id, name, email, risk_score, fraud_flag, internal_notes,
		                            processor_customer_id, locale, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
		f.ID, f.Name, f.Email, f.RiskScore, f.FraudFlag, f.InternalNotes, "pcus_"+f.ID[len("cus_"):], f.Locale, now)
	if err != nil {
		return "", fmt.Errorf("insert customer %s: %w", f.Email, err)
	}
	for i, domain := range f.Sites {
		if err := insertSite(ctx, tx, ids("site_", domain), f.ID, domain, now.Add(time.Duration(i)*time.Microsecond)); err != nil {
			return "", err
		}
	}
	return f.ID, nil
}

func insertSite(ctx context.Context, tx pgx.Tx, id, customerID, domain string, at time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO shop.sites (id, customer_id, domain, created_at) VALUES ($1, $2, $3, $4)`,
		id, customerID, domain, at)
	if err != nil {
		return fmt.Errorf("insert site %s: %w", domain, err)
	}
	return nil
}

// SubscriptionFixture describes a subscription for CreateSubscription; zero
// fields get defaults.
type SubscriptionFixture struct {
	ID                string             // default: a random "sub_…" id
	CustomerID        string             // required
	Site              string             // domain; default: the customer's first site; added to the customer when new
	Plan              string             // default: "Pro"
	PriceCents        int64              // default: 2900
	Currency          string             // default: "usd"
	Interval          string             // "month" (default) or "year"
	Status            SubscriptionStatus // default: active
	PeriodEnd         time.Time          // default: 20 days from now
	CancelAtPeriodEnd bool               // with Status cancelled: access until PeriodEnd
	CancelReason      string             // with Status cancelled
	BalanceCents      int64              // usage an immediate cancellation must charge
	CardDeclined      bool               // the card declines every charge
	DeclineCode       string             // default with CardDeclined: "insufficient_funds"
	NoInvoices        bool               // skip the paid current and upcoming next invoice
	MarginCents       int64              // internal
	InternalNotes     string             // internal
}

// CreateSubscription inserts a subscription directly, without a ledger
// effect, with a paid invoice (and its receipt) for the current period and
// an invoice for the next one: upcoming, or void when the subscription is
// cancelled. It fails when the customer does not exist.
func (s *Shop) CreateSubscription(ctx context.Context, f SubscriptionFixture) (Subscription, error) {
	var out Subscription
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		id, err := s.insertSubscription(ctx, tx, f, randomIDs)
		if err != nil {
			return err
		}
		out, err = getSubscription(ctx, tx, id)
		return err
	})
	if err != nil {
		return Subscription{}, fmt.Errorf("demoshop: create subscription: %w", err)
	}
	return out, nil
}

func (s *Shop) insertSubscription(ctx context.Context, tx pgx.Tx, f SubscriptionFixture, ids idSource) (string, error) {
	now := s.now()
	siteID, err := s.siteFor(ctx, tx, f.CustomerID, f.Site, ids)
	if err != nil {
		return "", err
	}
	if f.ID == "" {
		f.ID = ids("sub_", siteID+f.Plan)
	}
	f = subscriptionDefaults(f, now)
	start := f.PeriodEnd.AddDate(0, -1, 0)
	if f.Interval == "year" {
		start = f.PeriodEnd.AddDate(-1, 0, 0)
	}
	brand, last4, pmStatus := "visa", "4242", PaymentMethodValid
	if f.CardDeclined {
		last4, pmStatus = "0341", PaymentMethodDeclined
	}
	var cancelledAt, endedAt *time.Time
	var reason *string
	if f.Status == SubscriptionCancelled {
		at := now.Add(-24 * time.Hour)
		cancelledAt, reason = &at, &f.CancelReason
		if !f.CancelAtPeriodEnd {
			endedAt = &at
		}
	}
	_, err = tx.Exec(ctx, `
		INSERT INTO shop.subscriptions (id, customer_id, site_id, plan, price_cents, currency, billing_interval,
		    status, current_period_start, current_period_end, cancel_at_period_end, cancelled_at,
		    cancel_reason, ended_at, balance_cents, payment_method_brand, payment_method_last4,
		    payment_method_status, decline_code, margin_cents, processor_subscription_id, internal_notes,
		    created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
		        $21, $22, $23, $23)`,
		f.ID, f.CustomerID, siteID, f.Plan, f.PriceCents, f.Currency, f.Interval, f.Status, start, f.PeriodEnd,
		f.CancelAtPeriodEnd, cancelledAt, reason, endedAt, f.BalanceCents, brand, last4, pmStatus, f.DeclineCode,
		f.MarginCents, "psub_"+f.ID[len("sub_"):], f.InternalNotes, now)
	if err != nil {
		return "", fmt.Errorf("insert subscription for %s: %w", f.CustomerID, err)
	}
	if f.NoInvoices {
		return f.ID, nil
	}
	paid := invoiceRow{
		ID: ids("in_", f.ID+"current"), SubscriptionID: f.ID, CustomerID: f.CustomerID, Status: InvoicePaid,
		AmountCents: f.PriceCents, Currency: f.Currency, PeriodStart: start, PeriodEnd: f.PeriodEnd,
		PaidAt: &start, CreatedAt: now,
	}
	next := invoiceRow{
		ID: ids("in_", f.ID+"next"), SubscriptionID: f.ID, CustomerID: f.CustomerID, Status: InvoiceUpcoming,
		AmountCents: f.PriceCents, Currency: f.Currency, PeriodStart: f.PeriodEnd,
		PeriodEnd: addInterval(f.PeriodEnd, f.Interval), CreatedAt: now,
	}
	if f.Status == SubscriptionCancelled {
		next.Status, next.VoidedAt = InvoiceVoid, cancelledAt
	}
	for _, inv := range []invoiceRow{paid, next} {
		if err := insertInvoice(ctx, tx, inv); err != nil {
			return "", err
		}
	}
	return f.ID, nil
}

func subscriptionDefaults(f SubscriptionFixture, now time.Time) SubscriptionFixture {
	if f.Plan == "" {
		f.Plan = "Pro"
	}
	if f.PriceCents == 0 {
		f.PriceCents = 2900
	}
	if f.Currency == "" {
		f.Currency = "usd"
	}
	if f.Interval == "" {
		f.Interval = "month"
	}
	if f.Status == "" {
		f.Status = SubscriptionActive
	}
	if f.PeriodEnd.IsZero() {
		f.PeriodEnd = now.AddDate(0, 0, 20)
	}
	if f.CardDeclined && f.DeclineCode == "" {
		f.DeclineCode = "insufficient_funds"
	}
	return f
}

// siteFor finds the customer's site by domain (the first site when domain is
// empty), adding the domain to the customer when it is new.
func (s *Shop) siteFor(ctx context.Context, tx pgx.Tx, customerID, domain string, ids idSource) (string, error) {
	var siteID, owner string
	err := tx.QueryRow(ctx, `
		SELECT id, customer_id FROM shop.sites
		WHERE ($2 = '' AND customer_id = $1) OR domain = $2
		ORDER BY created_at, id LIMIT 1`, customerID, domain).Scan(&siteID, &owner)
	switch {
	case err == nil && owner != customerID:
		return "", fmt.Errorf("site %s belongs to customer %s, not %s", domain, owner, customerID)
	case err == nil:
		return siteID, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return "", fmt.Errorf("find site %q of %s: %w", domain, customerID, err)
	case domain == "":
		return "", fmt.Errorf("customer %s has no site", customerID)
	}
	siteID = ids("site_", domain)
	if err := insertSite(ctx, tx, siteID, customerID, domain, s.now()); err != nil {
		return "", err
	}
	return siteID, nil
}

// InvoiceFixture describes an extra invoice for CreateInvoice; zero fields
// get defaults.
type InvoiceFixture struct {
	ID             string        // default: a random "in_…" id
	SubscriptionID string        // required
	Status         InvoiceStatus // default: paid
	AmountCents    int64         // default: the subscription's price
	PeriodStart    time.Time     // default: the subscription's current period
	PeriodEnd      time.Time     // default: PeriodStart plus one interval
}

// CreateInvoice inserts an invoice directly, without a ledger effect; a paid
// one comes with its receipt. It fails when the subscription does not exist.
func (s *Shop) CreateInvoice(ctx context.Context, f InvoiceFixture) (Invoice, error) {
	var out Invoice
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		sub, err := getSubscription(ctx, tx, f.SubscriptionID)
		if err != nil {
			return err
		}
		now := s.now()
		inv := invoiceRow{
			ID: f.ID, SubscriptionID: sub.ID, CustomerID: sub.CustomerID, Status: f.Status,
			AmountCents: f.AmountCents, Currency: sub.Currency, PeriodStart: f.PeriodStart,
			PeriodEnd: f.PeriodEnd, CreatedAt: now,
		}
		if inv.ID == "" {
			inv.ID = newID("in_")
		}
		if inv.Status == "" {
			inv.Status = InvoicePaid
		}
		if inv.AmountCents == 0 {
			inv.AmountCents = sub.PriceCents
		}
		if inv.PeriodStart.IsZero() {
			inv.PeriodStart = sub.CurrentPeriodStart
		}
		if inv.PeriodEnd.IsZero() {
			inv.PeriodEnd = addInterval(inv.PeriodStart, sub.Interval)
		}
		switch inv.Status {
		case InvoicePaid:
			inv.PaidAt = &inv.PeriodStart
		case InvoiceVoid:
			inv.VoidedAt = &now
		}
		if err := insertInvoice(ctx, tx, inv); err != nil {
			return err
		}
		out, err = getInvoice(ctx, tx, inv.ID)
		return err
	})
	if err != nil {
		return Invoice{}, fmt.Errorf("demoshop: create invoice: %w", err)
	}
	return out, nil
}
