package demoshop_test

import (
	"net/http"
	"testing"

	"countersign/internal/demoshop"
)

var newAddress = jsonObject{
	"name": "Ada Byron", "line1": "12 St James's Square", "line2": "", "city": "London",
	"postal_code": "SW1Y 4JH", "country": "gb",
}

func TestChangeShippingAddress(t *testing.T) {
	t.Parallel()
	b := setup(t)
	order := b.order(t, nil)
	resp, err := b.send(t, http.MethodPatch, "/orders/"+order.ID, jsonObject{"shipping_address": newAddress}, "req-addr")
	if err != nil || resp.status != http.StatusOK {
		t.Fatalf("patch: %v %d %s", err, resp.status, resp.body)
	}
	got := decode[demoshop.Order](t, resp)
	want := demoshop.Address{Name: "Ada Byron", Line1: "12 St James's Square", City: "London", PostalCode: "SW1Y 4JH", Country: "GB"}
	if got.ShippingAddress != want || got.Version != order.Version+1 {
		t.Errorf("after change: address %+v version %d; want %+v version %d", got.ShippingAddress, got.Version, want, order.Version+1)
	}
	entries := b.ledger(t, "?request_id=req-addr")
	if len(entries) != 1 || entries[0].Kind != demoshop.KindOrderAddressChanged || entries[0].Object != order.ID {
		t.Errorf("ledger = %+v", entries)
	}
	same := decode[demoshop.Order](t, b.call(t, http.MethodPatch, "/orders/"+order.ID, jsonObject{"shipping_address": newAddress}, http.StatusOK))
	if same.Version != got.Version || len(b.ledger(t, "")) != 1 {
		t.Errorf("the same address again changed version to %d or recorded an effect", same.Version)
	}
}

func TestShippingAddressRefusedAfterFulfilment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, status := range []demoshop.FulfilmentStatus{
		demoshop.FulfilmentFulfilled, demoshop.FulfilmentShipped, demoshop.FulfilmentDelivered, demoshop.FulfilmentNotReceived,
	} {
		t.Run(string(status), func(t *testing.T) {
			order := b.order(t, func(f *demoshop.OrderFixture) { f.FulfilmentStatus = status })
			b.wantError(t, http.MethodPatch, "/orders/"+order.ID, jsonObject{"shipping_address": newAddress},
				http.StatusConflict, "order_already_fulfilled")
			after := decode[demoshop.Order](t, b.call(t, http.MethodGet, "/orders/"+order.ID, nil, http.StatusOK))
			if after.ShippingAddress != order.ShippingAddress || after.Version != order.Version {
				t.Errorf("refused change altered the order: %+v", after.ShippingAddress)
			}
		})
	}
	if got := b.ledger(t, ""); len(got) != 0 {
		t.Errorf("refused changes recorded %+v", got)
	}
}

func TestShippingAddressValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	order := b.order(t, nil)
	without := func(field string) jsonObject {
		a := jsonObject{}
		for k, v := range newAddress {
			if k != field {
				a[k] = v
			}
		}
		return jsonObject{"shipping_address": a}
	}
	tests := []struct {
		name string
		body any
		code string
	}{
		{"no address", jsonObject{}, "parameter_missing"},
		{"no city", without("city"), "parameter_missing"},
		{"no postal code", without("postal_code"), "parameter_missing"},
		{"bad country", jsonObject{"shipping_address": jsonObject{"name": "A", "line1": "B", "city": "C", "postal_code": "D", "country": "England"}}, "parameter_invalid"},
		{"unknown address field", jsonObject{"shipping_address": jsonObject{"name": "A", "street": "B"}}, "parameter_unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b.wantError(t, http.MethodPatch, "/orders/"+order.ID, tt.body, http.StatusBadRequest, tt.code)
		})
	}
	b.wantError(t, http.MethodPatch, "/orders/"+order.ID, jsonObject{"shipping_address": newAddress, "expected_version": 99},
		http.StatusConflict, "version_conflict")
}
