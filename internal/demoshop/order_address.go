package demoshop

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5"
)

// orderPatch is the body of PATCH /orders/{id}, as an order page sends it.
type orderPatch struct {
	ShippingAddress *Address `json:"shipping_address"`
	ExpectedVersion *int     `json:"expected_version"`
}

// normalize trims the address and checks it the way a checkout form does.
func (a Address) normalize() (Address, error) {
	a = Address{
		Name:       strings.TrimSpace(a.Name),
		Line1:      strings.TrimSpace(a.Line1),
		Line2:      strings.TrimSpace(a.Line2),
		City:       strings.TrimSpace(a.City),
		PostalCode: strings.TrimSpace(a.PostalCode),
		Country:    strings.ToUpper(strings.TrimSpace(a.Country)),
	}
	fields := []struct{ name, value string }{
		{"name", a.Name}, {"line1", a.Line1}, {"city", a.City}, {"postal_code", a.PostalCode},
	}
	for _, f := range fields {
		if f.value == "" {
			return Address{}, errMissing("shipping_address[" + f.name + "]")
		}
	}
	for _, f := range append(fields, struct{ name, value string }{"line2", a.Line2}) {
		if len(f.value) > 200 {
			return Address{}, errParam("shipping_address["+f.name+"]", "parameter_invalid",
				"shipping_address[%s] must be at most 200 characters.", f.name)
		}
	}
	if len(a.Country) != 2 || strings.Trim(a.Country, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return Address{}, errParam("shipping_address[country]", "parameter_invalid",
			"shipping_address[country] must be a two-letter country code such as \"US\".")
	}
	return a, nil
}

// handleOrderUpdate serves PATCH /orders/{id}: replace the shipping address
// of an order that has not left the warehouse; 409 order_already_fulfilled
// once it is fulfilled, shipped or delivered. An identical address changes
// nothing and records no effect.
func (s *Shop) handleOrderUpdate(w http.ResponseWriter, r *http.Request) error {
	ctx, id := r.Context(), r.PathValue("id")
	var p orderPatch
	if err := decodeBody(r, &p, false); err != nil {
		return err
	}
	if p.ShippingAddress == nil {
		return errMissing("shipping_address")
	}
	addr, err := p.ShippingAddress.normalize()
	if err != nil {
		return err
	}
	var out Order
	err = s.write(ctx, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := lockOrder(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := checkVersion("order", p.ExpectedVersion, cur.Version); err != nil {
			return err
		}
		if cur.FulfilmentStatus != FulfilmentPending {
			return errConflict("order_already_fulfilled", map[string]any{"fulfilment_status": cur.FulfilmentStatus},
				"Order %s is already %s; its shipping address can no longer be changed.",
				id, strings.ReplaceAll(string(cur.FulfilmentStatus), "_", " "))
		}
		if addr == cur.ShippingAddress {
			out = cur
			return nil
		}
		now := s.now()
		_, err = tx.Exec(ctx, `
			UPDATE shop.orders
			SET ship_name = $2, ship_line1 = $3, ship_line2 = $4, ship_city = $5, ship_postal_code = $6,
			    ship_country = $7, version = version + 1, updated_at = $8
			WHERE id = $1`,
			id, addr.Name, addr.Line1, addr.Line2, addr.City, addr.PostalCode, addr.Country, now)
		if err != nil {
			return fmt.Errorf("change address of order %s: %w", id, err)
		}
		err = s.recordEffect(ctx, tx, KindOrderAddressChanged, id, map[string]any{
			"from":         cur.ShippingAddress,
			"to":           addr,
			"from_version": cur.Version,
			"to_version":   cur.Version + 1,
		})
		if err != nil {
			return err
		}
		out, err = getOrder(ctx, tx, id)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
