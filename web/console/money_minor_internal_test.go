package console

import (
	"net/url"
	"testing"

	"countersign/internal/adapter"
	"countersign/views"
)

// TestYenShowWithoutMinorUnits: the staff console reads an amount in its
// currency's own minor units. 4,210 yen are "4,210 JPY" on a card, "4210"
// in the edit form and read back as 4210, never as 42.10; dinars have
// three decimals; a yen amount with decimals is a field error naming the
// currency's example.
func TestYenShowWithoutMinorUnits(t *testing.T) {
	if got := argValueWords("amount_cents", float64(4210), "JPY"); got != "4,210 JPY" {
		t.Errorf("a card shows 4210 yen as %q, want 4,210 JPY", got)
	}
	if got := argValueWords("amount_cents", float64(1234), "KWD"); got != "1.234 KWD" {
		t.Errorf("a card shows 1234 fils as %q, want 1.234 KWD", got)
	}
	params := []adapter.Param{{Name: "amount_cents", Type: "integer"}}
	fields := editFields(params, map[string]any{"amount_cents": float64(4210)}, nil, "", "JPY")
	if len(fields) != 1 || fields[0].Value != "4210" || fields[0].Description != "Write the amount as money, like 3450." {
		t.Errorf("the edit form's yen field = %+v, want value 4210 and the example 3450", fields)
	}
	errs := views.FieldErrors{}
	got := argsFromForm(params, url.Values{"amount_cents": {"4210"}}, "", "JPY", errs)
	if got["amount_cents"] != int64(4210) || len(errs) != 0 {
		t.Errorf("4210 typed in yen reads back as %v (errors %v), want 4210", got, errs)
	}
	argsFromForm(params, url.Values{"amount_cents": {"42.10"}}, "", "JPY", errs)
	if errs["amount_cents"] != "write an amount like 3450" {
		t.Errorf("42.10 typed in yen gives %q, want the yen example", errs["amount_cents"])
	}
}
