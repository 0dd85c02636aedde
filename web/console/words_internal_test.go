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

// TestRouteWordsNameNoStage: every reason the policy gives reads as a
// sentence without a stage number.
func TestRouteWordsNameNoStage(t *testing.T) {
	for reason, want := range map[string]string{
		"stage 3: an agent approves":                              "Its policy has an agent approve every request of this kind.",
		"the amount is above the approval threshold of $50.00":    "The amount is above the approval threshold of $50.00.",
		"a reversal needs its own approval":                       "A reversal needs its own approval.",
		"stage 5 needs a policy owner, and this policy has none":  "Automatic approval needs a policy owner, and this policy has none.",
		"stage 5: within the policy's limits":                     "Within the policy's limits.",
		"stage 5 pays out automatically only up to a ceiling, ok": "Automatic approval pays out only up to a ceiling, ok.",
		"": "",
	} {
		if got := routeWords(reason); got != want {
			t.Errorf("routeWords(%q) = %q, want %q", reason, got, want)
		}
	}
}
