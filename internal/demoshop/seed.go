package demoshop

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DemoCustomerEmail is the email of the console's demo customer in the seed.
const DemoCustomerEmail = "customer@demo.countersign.test"

// seedLockKey serialises concurrent Seed calls on one database.
const seedLockKey = 0x5e0d5eed

// Seed fills a migrated shop with the demo data set, dated relative to now
// (orders delivered 5, 20, 45 and 90 days before it, periods ending after
// it). It runs once per database: a later call does nothing. Seeded ids are
// the same in every database. It fails when the schema is missing.
func Seed(ctx context.Context, pool *pgxpool.Pool, now time.Time) error {
	s := New(pool, Options{Now: func() time.Time { return now }})
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", seedLockKey); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		tag, err := tx.Exec(ctx, `
			INSERT INTO shop.seed_runs (name, seeded_at) VALUES ('demo', $1)
			ON CONFLICT (name) DO NOTHING`, s.now())
		if err != nil {
			return fmt.Errorf("mark seeded: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		return s.seedDemo(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("demoshop: seed: %w", err)
	}
	return nil
}

// seedOrder is one order of a seeded customer; DeliveredDaysAgo 0 means not
// delivered.
type seedOrder struct {
	key              string
	deliveredDaysAgo int
	placedDaysAgo    int
	status           FulfilmentStatus
	items            []seedItem
	shippingCents    int64
	damaged          bool
	caseNotes        string
	address          *Address
}

type seedItem struct {
	sku string
	qty int
}

type seedCustomer struct {
	CustomerFixture
	subs   []SubscriptionFixture
	orders []seedOrder
}

func (s *Shop) seedDemo(ctx context.Context, tx pgx.Tx) error {
	now := s.now()
	for _, p := range seedProducts(now) {
		if _, err := s.insertProduct(ctx, tx, p, seedIDs); err != nil {
			return err
		}
	}
	for _, c := range seedCustomers(now) {
		id, err := s.insertCustomer(ctx, tx, c.CustomerFixture, seedIDs)
		if err != nil {
			return err
		}
		for _, sub := range c.subs {
			sub.CustomerID = id
			if _, err := s.insertSubscription(ctx, tx, sub, seedIDs); err != nil {
				return err
			}
		}
		for _, o := range c.orders {
			if _, err := s.insertOrder(ctx, tx, o.fixture(id, now), seedIDs); err != nil {
				return err
			}
		}
	}
	return nil
}

func (o seedOrder) fixture(customerID string, now time.Time) OrderFixture {
	f := OrderFixture{
		ID:               seedIDs("ord_", o.key),
		CustomerID:       customerID,
		ShippingCents:    o.shippingCents,
		FulfilmentStatus: o.status,
		Damaged:          o.damaged,
		CaseNotes:        o.caseNotes,
		ShippingAddress:  o.address,
	}
	if o.deliveredDaysAgo > 0 {
		at := now.AddDate(0, 0, -o.deliveredDaysAgo)
		f.DeliveredAt = &at
	}
	if o.placedDaysAgo > 0 {
		f.PlacedAt = now.AddDate(0, 0, -o.placedDaysAgo)
	}
	for _, it := range o.items {
		f.Items = append(f.Items, ItemFixture{ProductID: seedIDs("prod_", it.sku), Quantity: it.qty})
	}
	return f
}
