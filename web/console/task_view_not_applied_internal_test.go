package console

import (
	"strings"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
)

// TestInspectSaysWhenAnAuthoritativeRecordProvesNotApplied: where the
// adapter's record is authoritative and holds no change under the key
// long enough after the call, the inspect panel says that is proof and
// that Reconcile will mark it failed, not applied — not that a missing
// record proves nothing and the request stays for a person.
func TestInspectSaysWhenAnAuthoritativeRecordProvesNotApplied(t *testing.T) {
	in := controlplane.Inspection{Asked: true, Invocation: controlplane.Invocation{State: controlplane.Unverified, System: "shop"},
		Lookup: adapter.LookupResult{Found: true, LedgerState: "unknown", Effects: []adapter.Effect{},
			NotApplied: &adapter.Error{Code: adapter.CodeNotApplied, Outcome: adapter.Refused,
				Message: "Harbour & Pine has no effect under this call's key in its authoritative record, 1m5s after the call was begun: it was not applied."}}}
	evidence, outlook := evidenceWords(in)
	if !strings.Contains(evidence, "its record is authoritative: Harbour & Pine has no effect") || strings.Contains(evidence, "not proof") {
		t.Errorf("evidence %q, want the authoritative record's proof", evidence)
	}
	if outlook != "Reconcile will mark it failed, not applied: nothing changed, and nothing will be re-sent." {
		t.Errorf("outlook %q", outlook)
	}
}

// TestInspectSaysWhenNoCallWasBegun: a request whose permit ran out before
// its adapter claimed the key has no call in the request ledger: the
// panel says Reconcile will mark it failed, not applied, and close the
// key; an adapter that keeps no request ledger proves nothing by it.
func TestInspectSaysWhenNoCallWasBegun(t *testing.T) {
	in := controlplane.Inspection{Asked: true, Invocation: controlplane.Invocation{State: controlplane.Unverified, System: "shop"},
		Lookup: adapter.LookupResult{Kept: true, Effects: []adapter.Effect{}}}
	evidence, outlook := evidenceWords(in)
	if !strings.HasPrefix(outlook, "Reconcile will mark it failed, not applied: no call under this key ever left") {
		t.Errorf("outlook %q", outlook)
	}
	if !strings.Contains(evidence, "this one never left") || strings.Contains(evidence, "not proof") {
		t.Errorf("evidence %q, want the request record's proof", evidence)
	}
	in.Lookup.Kept = false
	if _, outlook := evidenceWords(in); !strings.HasPrefix(outlook, "Reconcile will leave it") {
		t.Errorf("an adapter without a request ledger: outlook %q", outlook)
	}
}
