package chaos

import (
	"bytes"
	"strings"
	"testing"

	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// TestReportCountsWhatIsLeftForAPersonPerSystem: per system, the report
// says how many unverified writes the consoles' sweep settled, how many
// reconciling on request settled, and how many are left for a person,
// with and without an effect in the system's ledger; and it sums, over
// the systems whose record proves a call not applied, those left without
// an effect: the figure that must be 0.
func TestReportCountsWhatIsLeftForAPersonPerSystem(t *testing.T) {
	ids := []string{"s1", "s2", "r1", "p1", "p2", "w1", "w2", "g1"}
	inv := func(id, system, state string) journalInvocation {
		return journalInvocation{ID: id, TaskID: "tsk", System: system, Action: "act", State: state, Key: "cs-" + id,
			Error: []byte(`{"code":"outcome_unknown"}`), Verification: []byte(`{"verified":true}`)}
	}
	j := journal{secondName: systemWarehouse,
		invs: []journalInvocation{inv("s1", systemShop, "completed"), inv("s2", systemShop, "failed"),
			inv("r1", systemShop, "completed"), inv("p1", systemShop, "unverified"), inv("p2", systemShop, "unverified"),
			inv("w1", systemWarehouse, "unverified"), inv("w2", systemWarehouse, "unverified"), inv("g1", "", "completed")}}
	for i, id := range []string{"s1", "s2"} {
		to := map[string]string{"s1": "completed", "s2": "failed"}[id]
		j.events = append(j.events, journalEvent{ID: int64(i + 1), Action: controlplane.EventInvocationReconciled, ActorKind: "system",
			InvocationID: &ids[i], Data: []byte(`{"by":"sweep","to":"` + to + `"}`)})
	}
	// Effects: the sweep's completed one, the reconciled one, the first
	// left for a person, the warehouse's first, and g1's.
	for _, k := range []string{"s1", "r1", "p1", "g1"} {
		j.ledger = append(j.ledger, ledgerEntry(k))
	}
	j.second = append(j.second, ledgerEntry("w1"))
	var c Counts
	evaluate(j, acknowledged{}, map[string]bool{"r1": true, "p1": true, "p2": true, "w1": true, "w2": true}, &c)
	shop, wh := c.Systems[systemShop], c.Systems[systemWarehouse]
	if shop == nil || !shop.Authoritative || shop.Swept != 2 || shop.SweptNotApplied != 1 || shop.Reconciled != 1 || shop.Left() != 2 || shop.WithoutEffect != 1 {
		t.Errorf("the shop's counts %+v, want its authoritative record, 2 swept (1 as not applied), 1 reconciled, 2 left of which 1 without an effect", shop)
	}
	if wh == nil || wh.Authoritative || wh.Reconciled != 0 || wh.Left() != 2 || wh.WithoutEffect != 1 {
		t.Errorf("the warehouse's counts %+v, want no authoritative record, 2 left of which 1 without an effect", wh)
	}
	var out bytes.Buffer
	res := Result{Seed: 7, Rounds: []RoundResult{{Round: 1, Counts: c}}}
	res.Totals = totals(res.Rounds)
	printTable(&out, res)
	for _, want := range []string{
		"system shop (its record proves a call not applied): 6 invocations, 3 completed; of 5 unverified writes 2 settled by the sweep (1 as not applied), 1 by reconciling on request, 2 left for a person: 1 with an effect, 1 without",
		"system warehouse (its record proves nothing absent): 2 invocations, 0 completed; of 2 unverified writes 0 settled by the sweep (0 as not applied), 0 by reconciling on request, 2 left for a person: 1 with an effect, 1 without",
		"left for a person without an effect in an authoritative record: 1 (shop 1)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report has no line\n%s\n%s", want, out.String())
		}
	}
}

// ledgerEntry is an effect under the key of invocation id.
func ledgerEntry(id string) demoshop.LedgerEntry {
	return demoshop.LedgerEntry{Kind: "changed", Object: "obj-" + id, RequestID: "cs-" + id}
}
