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

// Product is an item the shop sells, as the frontend API returns it,
// internal fields (cost_cents, margin_cents, supplier_notes) included.
type Product struct {
	ID            string    `json:"id" db:"id"`
	SKU           string    `json:"sku" db:"sku"`
	Name          string    `json:"name" db:"name"`
	Description   string    `json:"description" db:"description"`
	PriceCents    int64     `json:"price_cents" db:"price_cents"`
	Currency      string    `json:"currency" db:"currency"`
	Stock         int       `json:"stock" db:"stock"`
	CostCents     int64     `json:"cost_cents" db:"cost_cents"`
	MarginCents   int64     `json:"margin_cents" db:"margin_cents"`
	SupplierNotes string    `json:"supplier_notes" db:"supplier_notes"`
	Version       int       `json:"version" db:"version"`
	CreatedAt     time.Time `json:"created_at" db:"created_at"`
	UpdatedAt     time.Time `json:"updated_at" db:"updated_at"`
}

const productSelect = `
	SELECT id, sku, name, description, price_cents, currency, stock, cost_cents,
	       price_cents - cost_cents AS margin_cents, supplier_notes, version, created_at, updated_at
	FROM shop.products`

func getProduct(ctx context.Context, q querier, id string) (Product, error) {
	rows, err := q.Query(ctx, productSelect+` WHERE id = $1`, id)
	if err != nil {
		return Product{}, fmt.Errorf("get product %s: %w", id, err)
	}
	p, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Product])
	if errors.Is(err, pgx.ErrNoRows) {
		return Product{}, errNotFound("product", id)
	}
	if err != nil {
		return Product{}, fmt.Errorf("get product %s: %w", id, err)
	}
	return p, nil
}

// handleProductGet serves GET /products/{id}.
func (s *Shop) handleProductGet(w http.ResponseWriter, r *http.Request) error {
	p, err := getProduct(r.Context(), s.pool, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// handleProductList serves GET /products?ids=a,b,c&limit=: the products with
// those ids in the order asked (unknown ids are left out), or the whole
// catalogue by name when ids is absent.
func (s *Shop) handleProductList(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	var ids []string
	if raw := r.URL.Query().Get("ids"); raw != "" {
		for id := range strings.SplitSeq(raw, ",") {
			if id = strings.TrimSpace(id); id != "" {
				ids = append(ids, id)
			}
		}
		if len(ids) > maxLimit {
			return errParam("ids", "parameter_invalid", "At most %d ids at a time.", maxLimit)
		}
	}
	rows, err := s.pool.Query(r.Context(), productSelect+`
		WHERE $1::text[] IS NULL OR id = ANY($1)
		ORDER BY array_position($1, id), name, id
		LIMIT $2`, ids, limit+1)
	if err != nil {
		return fmt.Errorf("list products: %w", err)
	}
	products, err := pgx.CollectRows(rows, pgx.RowToStructByName[Product])
	if err != nil {
		return fmt.Errorf("list products: %w", err)
	}
	writeJSON(w, http.StatusOK, newList(products, limit))
	return nil
}

// Inventory is the stock of one product in its warehouse: Available is
// Stock less what open orders have reserved.
type Inventory struct {
	ProductID string     `json:"product_id" db:"product_id"`
	SKU       string     `json:"sku" db:"sku"`
	Stock     int        `json:"stock" db:"stock"`
	Reserved  int        `json:"reserved" db:"reserved"`
	Available int        `json:"available" db:"available"`
	InStock   bool       `json:"in_stock" db:"in_stock"`
	Warehouse string     `json:"warehouse" db:"warehouse"`
	RestockAt *time.Time `json:"restock_at" db:"restock_at"`
	UpdatedAt time.Time  `json:"updated_at" db:"updated_at"`
}

// handleInventoryGet serves GET /inventory/{product_id}.
func (s *Shop) handleInventoryGet(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("product_id")
	rows, err := s.pool.Query(r.Context(), `
		SELECT id AS product_id, sku, stock, reserved, greatest(stock - reserved, 0) AS available,
		       stock > reserved AS in_stock, warehouse, restock_at, updated_at
		FROM shop.products WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("get inventory of %s: %w", id, err)
	}
	inv, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Inventory])
	if errors.Is(err, pgx.ErrNoRows) {
		return errNotFound("product", id)
	}
	if err != nil {
		return fmt.Errorf("get inventory of %s: %w", id, err)
	}
	writeJSON(w, http.StatusOK, inv)
	return nil
}
