package demoshop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5"
)

// productPatch is the body of PATCH /products/{id}, as a catalogue editor
// sends it: any field may change.
type productPatch struct {
	Name            *string `json:"name"`
	Description     *string `json:"description"`
	PriceCents      *int64  `json:"price_cents"`
	Stock           *int    `json:"stock"`
	ExpectedVersion *int    `json:"expected_version"`
}

func (p productPatch) validate() error {
	switch {
	case p.Name == nil && p.Description == nil && p.PriceCents == nil && p.Stock == nil:
		return errParam("", "parameter_missing", "Provide at least one of name, description, price_cents, stock.")
	case p.Name != nil && strings.TrimSpace(*p.Name) == "":
		return errParam("name", "parameter_invalid", "name must not be empty.")
	case p.Name != nil && len(*p.Name) > 200:
		return errParam("name", "parameter_invalid", "name must be at most 200 characters.")
	case p.Description != nil && len(*p.Description) > 5000:
		return errParam("description", "parameter_invalid", "description must be at most 5000 characters.")
	case p.PriceCents != nil && *p.PriceCents < 0:
		return errParam("price_cents", "parameter_invalid_integer", "price_cents must not be negative.")
	case p.Stock != nil && *p.Stock < 0:
		return errParam("stock", "parameter_invalid_integer", "stock must not be negative.")
	}
	return nil
}

// apply returns the product with the patch applied and the fields that changed.
func (p productPatch) apply(cur Product) (Product, map[string]any) {
	next, changes := cur, map[string]any{}
	if p.Name != nil && *p.Name != cur.Name {
		next.Name = *p.Name
		changes["name"] = map[string]any{"from": cur.Name, "to": next.Name}
	}
	if p.Description != nil && *p.Description != cur.Description {
		next.Description = *p.Description
		changes["description"] = map[string]any{"from": cur.Description, "to": next.Description}
	}
	if p.PriceCents != nil && *p.PriceCents != cur.PriceCents {
		next.PriceCents = *p.PriceCents
		changes["price_cents"] = map[string]any{"from": cur.PriceCents, "to": next.PriceCents}
	}
	if p.Stock != nil && *p.Stock != cur.Stock {
		next.Stock = *p.Stock
		changes["stock"] = map[string]any{"from": cur.Stock, "to": next.Stock}
	}
	return next, changes
}

// handleProductUpdate serves PATCH /products/{id}: change name, description,
// price_cents and/or stock. Sending the values it already has changes
// nothing and records no effect.
func (s *Shop) handleProductUpdate(w http.ResponseWriter, r *http.Request) error {
	ctx, id := r.Context(), r.PathValue("id")
	var p productPatch
	if err := decodeBody(r, &p, false); err != nil {
		return err
	}
	if err := p.validate(); err != nil {
		return err
	}
	var out Product
	err := s.write(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM shop.products WHERE id = $1 FOR UPDATE`, id).Scan(&one); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return errNotFound("product", id)
			}
			return fmt.Errorf("lock product %s: %w", id, err)
		}
		cur, err := getProduct(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := checkVersion("product", p.ExpectedVersion, cur.Version); err != nil {
			return err
		}
		next, changes := p.apply(cur)
		if len(changes) == 0 {
			out = cur
			return nil
		}
		_, err = tx.Exec(ctx, `
			UPDATE shop.products
			SET name = $2, description = $3, price_cents = $4, stock = $5, version = version + 1, updated_at = $6
			WHERE id = $1`, id, next.Name, next.Description, next.PriceCents, next.Stock, s.now())
		if err != nil {
			return fmt.Errorf("update product %s: %w", id, err)
		}
		err = s.recordEffect(ctx, tx, KindProductUpdated, id, map[string]any{
			"changes":      changes,
			"from_version": cur.Version,
			"to_version":   cur.Version + 1,
		})
		if err != nil {
			return err
		}
		out, err = getProduct(ctx, tx, id)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
