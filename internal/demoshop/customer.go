package demoshop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
)

// Customer is a shop customer as the frontend API returns it, internal
// fields (risk_score, fraud_flag, internal_notes, processor_customer_id)
// included.
type Customer struct {
	ID    string `json:"id" db:"id"`
	Name  string `json:"name" db:"name"`
	Email string `json:"email" db:"email"`
	// Locale is the customer's language, a BCP 47 tag ("fr"); "" when
	// the shop does not know it.
	Locale              string    `json:"locale" db:"locale"`
	Sites               []Site    `json:"sites" db:"sites"`
	RiskScore           int       `json:"risk_score" db:"risk_score"`
	FraudFlag           bool      `json:"fraud_flag" db:"fraud_flag"`
	InternalNotes       string    `json:"internal_notes" db:"internal_notes"`
	ProcessorCustomerID string    `json:"processor_customer_id" db:"processor_customer_id"`
	Version             int       `json:"version" db:"version"`
	CreatedAt           time.Time `json:"created_at" db:"created_at"`
	UpdatedAt           time.Time `json:"updated_at" db:"updated_at"`
}

// Site is one account of a customer, named by its domain ("acme.example").
type Site struct {
	ID     string `json:"id"`
	Domain string `json:"domain"`
}

const customerSelect = `
	SELECT c.id, c.name, c.email, c.locale,
	       COALESCE((SELECT json_agg(json_build_object('id', s.id, 'domain', s.domain) ORDER BY s.created_at, s.id)
	                 FROM shop.sites s WHERE s.customer_id = c.id), '[]') AS sites,
	       c.risk_score, c.fraud_flag, c.internal_notes, c.processor_customer_id,
	       c.version, c.created_at, c.updated_at
	FROM shop.customers c`

func getCustomer(ctx context.Context, q querier, id string) (Customer, error) {
	rows, err := q.Query(ctx, customerSelect+` WHERE c.id = $1`, id)
	if err != nil {
		return Customer{}, fmt.Errorf("get customer %s: %w", id, err)
	}
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Customer])
	if errors.Is(err, pgx.ErrNoRows) {
		return Customer{}, errNotFound("customer", id)
	}
	if err != nil {
		return Customer{}, fmt.Errorf("get customer %s: %w", id, err)
	}
	return c, nil
}

// handleCustomerList serves GET /customers?email=&limit=: customers, newest
// first, optionally only the one with that email.
func (s *Shop) handleCustomerList(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	rows, err := s.pool.Query(r.Context(), customerSelect+`
		WHERE ($1 = '' OR lower(c.email) = lower($1))
		ORDER BY c.created_at DESC, c.id
		LIMIT $2`, r.URL.Query().Get("email"), limit+1)
	if err != nil {
		return fmt.Errorf("list customers: %w", err)
	}
	customers, err := pgx.CollectRows(rows, pgx.RowToStructByName[Customer])
	if err != nil {
		return fmt.Errorf("list customers: %w", err)
	}
	writeJSON(w, http.StatusOK, newList(customers, limit))
	return nil
}

// handleCustomerGet serves GET /customers/{id}.
func (s *Shop) handleCustomerGet(w http.ResponseWriter, r *http.Request) error {
	c, err := getCustomer(r.Context(), s.pool, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// handleCustomerSubscriptions serves GET /customers/{id}/subscriptions: all
// of the customer's subscriptions, cancelled ones included.
func (s *Shop) handleCustomerSubscriptions(w http.ResponseWriter, r *http.Request) error {
	ctx, id := r.Context(), r.PathValue("id")
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	if _, err := getCustomer(ctx, s.pool, id); err != nil {
		return err
	}
	rows, err := s.pool.Query(ctx, subscriptionSelect+`
		WHERE sub.customer_id = $1
		ORDER BY sub.created_at, sub.id
		LIMIT $2`, id, limit+1)
	if err != nil {
		return fmt.Errorf("list subscriptions of %s: %w", id, err)
	}
	subs, err := pgx.CollectRows(rows, pgx.RowToStructByName[Subscription])
	if err != nil {
		return fmt.Errorf("list subscriptions of %s: %w", id, err)
	}
	writeJSON(w, http.StatusOK, newList(subs, limit))
	return nil
}

// handleCustomerOrders serves GET /customers/{id}/orders: the customer's
// orders with their items, newest first.
func (s *Shop) handleCustomerOrders(w http.ResponseWriter, r *http.Request) error {
	ctx, id := r.Context(), r.PathValue("id")
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	if _, err := getCustomer(ctx, s.pool, id); err != nil {
		return err
	}
	rows, err := s.pool.Query(ctx, orderSelect+`
		WHERE o.customer_id = $1
		ORDER BY o.placed_at DESC, o.id
		LIMIT $2`, id, limit+1)
	if err != nil {
		return fmt.Errorf("list orders of %s: %w", id, err)
	}
	orders, err := pgx.CollectRows(rows, pgx.RowToStructByName[Order])
	if err != nil {
		return fmt.Errorf("list orders of %s: %w", id, err)
	}
	writeJSON(w, http.StatusOK, newList(orders, limit))
	return nil
}
