package demoshop_test

import (
	"context"
	"net/http"
	"testing"

	"countersign/internal/demoshop"
)

func (b *testBundle) product(t *testing.T) demoshop.Product {
	t.Helper()
	p, err := b.shop.CreateProduct(context.Background(), demoshop.ProductFixture{
		Name: "Kettle", Description: "Steel kettle.", PriceCents: 3000, Stock: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProductPatchChangesEveryField(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.product(t)
	got := decode[demoshop.Product](t, b.call(t, http.MethodPatch, "/products/"+p.ID, jsonObject{
		"name": "Gooseneck kettle", "description": "Pour-over kettle.", "price_cents": 100, "stock": 0,
	}, http.StatusOK))
	if got.Name != "Gooseneck kettle" || got.Description != "Pour-over kettle." || got.PriceCents != 100 || got.Stock != 0 ||
		got.Version != p.Version+1 {
		t.Errorf("after patch: %+v", got)
	}
	entries := b.ledger(t, "?object="+p.ID)
	if len(entries) != 1 || entries[0].Kind != demoshop.KindProductUpdated {
		t.Fatalf("ledger = %+v", entries)
	}
	changes, _ := ledgerData(t, entries[0])["changes"].(map[string]any)
	if len(changes) != 4 {
		t.Errorf("recorded changes = %v, want 4 fields", changes)
	}
}

func TestProductPatchDescriptionOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.product(t)
	got := decode[demoshop.Product](t, b.call(t, http.MethodPatch, "/products/"+p.ID,
		jsonObject{"description": "Now with a thermometer."}, http.StatusOK))
	if got.Description != "Now with a thermometer." || got.PriceCents != p.PriceCents || got.Stock != p.Stock || got.Name != p.Name {
		t.Errorf("after description patch: %+v", got)
	}
	same := decode[demoshop.Product](t, b.call(t, http.MethodPatch, "/products/"+p.ID,
		jsonObject{"description": "Now with a thermometer."}, http.StatusOK))
	if same.Version != got.Version || len(b.ledger(t, "")) != 1 {
		t.Errorf("an unchanged description bumped the version to %d or recorded an effect", same.Version)
	}
}

func TestProductPatchValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.product(t)
	tests := []struct {
		name string
		body jsonObject
		code string
	}{
		{"nothing", jsonObject{}, "parameter_missing"},
		{"negative stock", jsonObject{"stock": -1}, "parameter_invalid_integer"},
		{"negative price", jsonObject{"price_cents": -5}, "parameter_invalid_integer"},
		{"blank name", jsonObject{"name": "  "}, "parameter_invalid"},
		{"cost", jsonObject{"cost_cents": 1}, "parameter_unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b.wantError(t, http.MethodPatch, "/products/"+p.ID, tt.body, http.StatusBadRequest, tt.code)
		})
	}
	b.wantError(t, http.MethodPatch, "/products/prod_missing", jsonObject{"stock": 1}, http.StatusNotFound, "resource_missing")
	b.wantError(t, http.MethodPatch, "/products/"+p.ID, jsonObject{"stock": 1, "expected_version": 2}, http.StatusConflict, "version_conflict")
}
