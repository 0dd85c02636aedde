package console

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestArgFieldsMemoIsInvisible: the memo answers what decoding would, per
// currency, and a caller changing its fields changes nobody else's.
func TestArgFieldsMemoIsInvisible(t *testing.T) {
	raw := json.RawMessage(`{"amount_cents": 1250, "reason_code": "damaged_item", "address": {"city": "Lyon"}}`)
	want := decodeArgFields(raw, "USD")
	first := argFields(raw, "USD")
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("first read %v, want %v", first, want)
	}
	first[0].Value = "changed by a caller"
	if again := argFields(raw, "USD"); !reflect.DeepEqual(again, want) {
		t.Errorf("the memo gave %v after a caller changed its copy, want %v", again, want)
	}
	if eur := argFields(raw, "EUR"); reflect.DeepEqual(eur, want) {
		t.Errorf("the same arguments in euros read as in dollars: %v", eur)
	}
}
