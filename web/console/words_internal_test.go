package console

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"countersign/internal/controlplane"
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

// TestRowFallbackSaysEachStatesTruth: a row with nothing more particular
// says where its request stands: a proposal being dry-run is not
// "approved", a reversal is not "verified", and no state claims a step it
// has not reached.
func TestRowFallbackSaysEachStatesTruth(t *testing.T) {
	want := map[controlplane.State]string{
		controlplane.Proposed:  "Checking it with the system.",
		controlplane.Approved:  "Approved; not sent yet.",
		controlplane.Reversed:  "Reversed; its reference was not recorded.",
		controlplane.Completed: "Verified; its reference was not recorded.",
	}
	for st, w := range want {
		if got := rowFallback(st); got != w {
			t.Errorf("%s: %q, want %q", st, got, w)
		}
	}
	for _, st := range controlplane.States {
		got := rowFallback(st)
		if got == "Not recorded." {
			t.Errorf("%s has no words of its own", st)
		}
		if strings.HasPrefix(got, "Approved") && st != controlplane.Approved || strings.HasPrefix(got, "Verified") && st != controlplane.Completed {
			t.Errorf("%s reads %q, a step it has not reached", st, got)
		}
	}
}
