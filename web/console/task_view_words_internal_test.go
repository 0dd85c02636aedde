package console

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/locale/pseudotest"
	"countersign/web/layout"
)

// inspections are the cases inspectView and evidenceWords tell apart, by
// name: never asked, a lookup that failed, each ledger state with no
// effect, effects matching the quote, of another amount or currency and
// without an amount, and each outlook Reconcile can have.
func inspections() map[string]controlplane.Inspection {
	at := time.Date(2026, 5, 1, 9, 30, 15, 0, time.UTC)
	cents := func(n int64) *int64 { return &n }
	inv := func(st controlplane.State) controlplane.Invocation {
		return controlplane.Invocation{ID: "inv_1", System: "shop", Action: "issue_refund", State: st,
			IdempotencyKey: "key_1", ArgsHash: []byte{0xca, 0xfe}, CreatedAt: at,
			Quote: adapter.Quote{Title: "Refund $12.50", AmountCents: cents(1250), Currency: "USD"}}
	}
	refund := adapter.Effect{Kind: "refund.created", Object: "order 7", At: at, AmountCents: cents(1250)}
	other := adapter.Effect{Kind: "refund.created", Object: "order 7", At: at, AmountCents: cents(900)}
	euros := adapter.Effect{Kind: "refund.created", Object: "order 7", At: at, AmountCents: cents(1250), Currency: "EUR"}
	note := adapter.Effect{Kind: "note.added", Object: "order 7", At: at}
	refusal := &adapter.Error{Code: "too_late", Message: "The order has shipped.", Outcome: adapter.Refused}
	out := map[string]controlplane.Inspection{
		"not asked":          {Invocation: inv(controlplane.NotDispatched)},
		"not asked, unnamed": {Invocation: controlplane.Invocation{ID: "inv_2", State: controlplane.NotDispatched}},
		"lookup failed":      {Invocation: inv(controlplane.Unverified), Asked: true, LookupErr: errors.New("connection refused")},
		"not found":          {Invocation: inv(controlplane.Unverified), Asked: true},
		"settled, not found": {Invocation: inv(controlplane.Completed), Asked: true},
		"matching": {Invocation: inv(controlplane.Unverified), Asked: true,
			Lookup: adapter.LookupResult{Found: true, LedgerState: "applied", Effects: []adapter.Effect{refund}, Result: &adapter.Result{Reference: "re_1"}}},
		"other amount and a note": {Invocation: inv(controlplane.Unverified), Asked: true,
			Lookup: adapter.LookupResult{Found: true, LedgerState: "sending", Effects: []adapter.Effect{other, note}}},
		"other currency": {Invocation: inv(controlplane.Unverified), Asked: true,
			Lookup: adapter.LookupResult{Found: true, LedgerState: "unknown", Effects: []adapter.Effect{euros}}},
		"no quoted amount": {Invocation: controlplane.Invocation{ID: "inv_3", System: "shop", State: controlplane.Unverified}, Asked: true,
			Lookup: adapter.LookupResult{Found: true, LedgerState: "applied", Effects: []adapter.Effect{refund}}},
		"refused cleanly": {Invocation: inv(controlplane.Unverified), Asked: true,
			Lookup: adapter.LookupResult{Found: true, LedgerState: "refused", Error: refusal}},
		"refused, unknown outcome": {Invocation: inv(controlplane.Unverified), Asked: true,
			Lookup: adapter.LookupResult{Found: true, LedgerState: "refused", Error: &adapter.Error{Message: "Timed out.", Outcome: adapter.Unknown}}},
	}
	for _, st := range []controlplane.State{controlplane.Completed, controlplane.Failed, controlplane.Reversed, controlplane.Expired} {
		out["settled "+string(st)] = controlplane.Inspection{Invocation: inv(st), Asked: true,
			Lookup: adapter.LookupResult{Found: true, LedgerState: "applied", Effects: []adapter.Effect{refund}}}
	}
	return out
}

// inspectSentences are the texts inspectView writes of each inspection,
// by case and part: the evidence, the outlook, each effect line, and each
// technical detail's label and value.
func inspectSentences() map[string]string {
	out := map[string]string{}
	for name, in := range inspections() {
		v := inspectView(in, actionWords)
		out[name+": evidence"] = v.Evidence
		out[name+": outlook"] = v.Outlook
		for i, e := range v.Effects {
			out[name+": effect "+strconv.Itoa(i)] = e
		}
		for _, f := range v.Tech {
			out[name+": tech "+f.Key] = f.Label + " = " + f.Value
		}
	}
	return out
}

// TestTheInspectSentencesReadAsBefore: from the catalogue, what the task
// page says of one original call (the system's evidence, what Reconcile
// will do, the effects recorded, the technical details' labels) reads
// exactly as the code wrote it before (testdata/inspect_sentences.json
// was written by the code before the conversion).
func TestTheInspectSentencesReadAsBefore(t *testing.T) {
	raw, err := os.ReadFile("testdata/inspect_sentences.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	got := inspectSentences()
	if len(got) != len(want) {
		t.Errorf("%d cases, want %d", len(got), len(want))
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %q, want %q", name, got[name], w)
		}
	}
}

// TestTheInspectSentencesComeFromTheCatalogue: each of those sentences is
// one console.timeline.* message as a whole (the system's words, amounts
// and objects its parameters), and each technical label is one, so an
// installation's override shows whole.
func TestTheInspectSentencesComeFromTheCatalogue(t *testing.T) {
	pseudotest.InstallMarkedConsole(t)
	for name, in := range inspections() {
		v := inspectView(in, actionWords)
		texts := append([]string{v.Evidence, v.Outlook}, v.Effects...)
		for _, f := range v.Tech {
			texts = append(texts, f.Label)
		}
		for _, s := range texts {
			if !oneMessage(s) {
				t.Errorf("%s: %q is not one catalogue message", name, s)
			}
		}
	}
}

// TestTheTaskPagesOtherWordsComeFromTheCatalogue: a request named by its
// action and object, and an argument's yes or no or arguments that are
// not an object, are catalogue messages as a whole, and read in English
// as they did.
func TestTheTaskPagesOtherWordsComeFromTheCatalogue(t *testing.T) {
	texts := func() []string {
		out := []string{requestWords("Issue refund", "Walnut lamp", "ord_1"), requestWords("Issue refund", "", "ord_1")}
		for _, f := range decodeArgFields(json.RawMessage(`{"notify":true,"restock":false}`), "USD") {
			out = append(out, f.Value)
		}
		for _, f := range decodeArgFields(json.RawMessage(`[1,2]`), "USD") {
			out = append(out, f.Label)
		}
		return out
	}
	want := []string{"Issue refund: Walnut lamp", "Issue refund: ord_1", "Yes", "No", "Arguments"}
	if got := texts(); !slices.Equal(got, want) {
		t.Errorf("in English: %q, want %q", got, want)
	}
	pseudotest.InstallMarkedConsole(t)
	for _, s := range texts() {
		if !oneMessage(s) {
			t.Errorf("%q is not one catalogue message", s)
		}
	}
}

// TestAStateInASentenceIsTheInstallationsWord: where a sentence names a
// request's state ("This request is completed; …", "reconciled it to
// completed"), the state is its own console.timeline.state.* message, not
// the state's label lowercased in code, so an installation's word shows
// as it wrote it.
func TestAStateInASentenceIsTheInstallationsWord(t *testing.T) {
	for _, st := range controlplane.States {
		if got, want := stateWords(st), strings.ToLower(layout.StateLabel(st)); got != want {
			t.Errorf("%s in a sentence reads %q in English, want %q as before", st, got, want)
		}
	}
	override := `{"console.timeline.state.completed": "Erledigt", "console.timeline.state.failed": "Gescheitert"}`
	c, err := locale.Load(locale.WithFiles(fstest.MapFS{"console.en.json": {Data: []byte(override)}}))
	if err != nil {
		t.Fatal(err)
	}
	locale.Install(c)
	t.Cleanup(func() { locale.Install(nil) })
	outlook := inspectView(inspections()["settled completed"], actionWords).Outlook
	if !strings.Contains(outlook, "Erledigt") {
		t.Errorf("the outlook does not use the installation's word for the state: %q", outlook)
	}
	e := controlplane.Event{Action: controlplane.EventInvocationReconciled, Data: map[string]any{"to": "failed"}}
	if got := eventSentence(e, "it"); !strings.Contains(got, "Gescheitert") {
		t.Errorf("the reconciled sentence does not use the installation's word for the state: %q", got)
	}
}
