package conformance_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/adapter/conformance"
)

// refunds is a system with one write action, refund, whose reason the
// English quote shows; french says what its French translation says of
// each reason.
type refunds struct {
	adapter.System // the methods the check does not call
	french         map[string]string
}

var refundSpec = adapter.ActionSpec{Name: "refund", Params: []adapter.Param{
	{Name: "reason", Type: "string", Required: true, Enum: []string{"damaged", "wrong_item"}}}}

func (r refunds) Actions() []adapter.ActionSpec { return []adapter.ActionSpec{refundSpec} }

func (r refunds) DryRun(_ context.Context, _ adapter.Principal, _ string, raw json.RawMessage) (adapter.Quote, error) {
	args, err := refundSpec.Validate(raw)
	if err != nil {
		return adapter.Quote{}, err
	}
	reason := args["reason"].(string)
	return adapter.Quote{Title: "Refund", Locale: "en", Target: adapter.Target{ID: "ord_1", Display: "Order 1"},
		Lines: []adapter.QuoteLine{{Label: "Reason", To: strings.ReplaceAll(reason, "_", " ")}},
		Translations: map[string]adapter.QuoteWords{"fr": {Title: "Remboursement",
			Lines: []adapter.QuoteLineWords{{Label: "Motif", To: r.french[reason]}}}}}, nil
}

// TestEveryArgumentShowsInEveryLanguage: an argument the written quote
// shows but a translation does not (both reasons read "Autre" in French)
// is reported for that language, since a customer reading French would
// approve it unseen; a translation that shows it passes.
func TestEveryArgumentShowsInEveryLanguage(t *testing.T) {
	t.Parallel()
	fix := conformance.Fixture{Principal: adapter.Principal{CustomerRef: "a@example.com"},
		Every: []conformance.Varied{{Call: conformance.Call{Action: "refund", Args: map[string]any{"reason": "damaged"}}}}}
	hidden := conformance.UnshownArguments(t, refunds{french: map[string]string{"damaged": "Autre", "wrong_item": "Autre"}}, fix)
	if len(hidden) != 1 || !strings.Contains(hidden[0], "args.reason") || !strings.Contains(hidden[0], " in fr") {
		t.Errorf("a reason the French quote does not show gave %q, want one problem naming args.reason in fr", hidden)
	}
	shown := conformance.UnshownArguments(t, refunds{french: map[string]string{"damaged": "Endommagé", "wrong_item": "Mauvais article"}}, fix)
	if len(shown) != 0 {
		t.Errorf("a reason every language shows gave %q, want none", shown)
	}
}
