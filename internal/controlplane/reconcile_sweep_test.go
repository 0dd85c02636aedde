package controlplane_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
)

// unverifiedRefund makes a refund that ends unverified under fault, then
// lifts the fault.
func (b *testBundle) unverifiedRefund(fault demoshop.FaultRule) controlplane.Invocation {
	b.t.Helper()
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	inv := b.approved(task, "issue_refund", refund(b.order(4).ID, 1000, "wrong_item"))
	fault.Route = "POST /refunds"
	if err := b.shop.SetFault(fault); err != nil {
		b.t.Fatal(err)
	}
	b.dispatchAll()
	b.shop.ClearFaults()
	return b.wantState(inv.ID, controlplane.Unverified)
}

// sweepEvents returns the data of inv's events of action.
func (b *testBundle) sweepEvents(invocationID string, action controlplane.EventAction) []map[string]any {
	b.t.Helper()
	rows, err := b.store.Pool().Query(b.ctx, `SELECT data FROM events WHERE invocation_id = $1 AND action = $2 ORDER BY id`, invocationID, string(action))
	if err != nil {
		b.t.Fatal(err)
	}
	defer rows.Close()
	var out []map[string]any
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			b.t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		out = append(out, m)
	}
	return out
}

// sweep runs one ReconcileDue pass of cp.
func (b *testBundle) sweep(cp *controlplane.Service) controlplane.ReconcileSwept {
	b.t.Helper()
	sw, err := cp.ReconcileDue(b.ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	return sw
}

// TestSweepSettlesNotAppliedByItself: a refund whose connection was reset
// before the shop applied it is unverified. Nobody asks: the sweep looks
// it up on its own, with a back-off, and while the shop's ledger may still
// receive it (the settle time since the call) it concludes nothing; after
// that, the ledger being the shop's authoritative record, no effect under
// the key settles it failed, not applied — recorded once, by the sweep,
// with its evidence, the request ledger saying refused so that a repeat
// of the key sends nothing, and nothing re-sent.
func TestSweepSettlesNotAppliedByItself(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := b.unverifiedRefund(demoshop.FaultRule{ResetRate: 1})
	if sw := b.sweep(b.cp); sw != (controlplane.ReconcileSwept{}) {
		t.Fatalf("looked at once: %+v; the first look waits ReconcileFirst", sw)
	}
	start := b.clock.Now()
	looks := 0
	for b.get(inv.ID).State == controlplane.Unverified && b.clock.Now().Sub(start) < 10*time.Minute {
		b.clock.Advance(5 * time.Second)
		sw := b.sweep(b.cp)
		looks += sw.Waiting + sw.Settled
		if sw.Settled == 1 && b.clock.Now().Sub(start) < shopadapter.DefaultSettleAfter {
			t.Fatalf("settled %s after the call, before the shop's settle time", b.clock.Now().Sub(start))
		}
	}
	got := b.wantState(inv.ID, controlplane.Failed)
	if got.Error == nil || got.Error.Code != adapter.CodeNotApplied {
		t.Errorf("failed with %+v, want %s", got.Error, adapter.CodeNotApplied)
	}
	if looks < 2 || looks > 4 {
		t.Errorf("%d looks in %s, want a back-off (15 s, then 30 s, 1 min …)", looks, b.clock.Now().Sub(start))
	}
	ev := b.sweepEvents(inv.ID, controlplane.EventInvocationReconciled)
	if len(ev) != 1 || ev[0][controlplane.DataBy] != controlplane.BySweep || ev[0]["to"] != "failed" ||
		ev[0]["code"] != adapter.CodeNotApplied || ev[0]["evidence"] == "" || ev[0]["attempt"] != float64(looks) {
		t.Errorf("reconciled events %v, want one by the sweep with its evidence and attempt %d", ev, looks)
	}
	if n := len(b.sweepEvents(inv.ID, controlplane.EventInvocationReconcileInconclusive)); n != 0 {
		t.Errorf("%d inconclusive events: a look that will be made again records none", n)
	}
	if state, _, _, _, _, err := b.store.AdapterRequest(b.ctx, "shop", inv.IdempotencyKey); err != nil || state != "refused" {
		t.Errorf("the request ledger says %q (%v), want refused", state, err)
	}
	b.dispatchAll()
	if n := len(b.effects(inv.IdempotencyKey)); n != 0 {
		t.Errorf("%d effects: something re-sent the request", n)
	}
	if sw := b.sweep(b.cp); sw != (controlplane.ReconcileSwept{}) {
		t.Errorf("a settled request looked up again: %+v", sw)
	}
}

// TestSweepSettlesAFoundEffectCompleted: the shop committed the refund
// and dropped the answer; the sweep's first look finds the effect, reads
// it back and completes it.
func TestSweepSettlesAFoundEffectCompleted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := b.unverifiedRefund(demoshop.FaultRule{DropAfterCommit: 1})
	b.clock.Advance(controlplane.DefaultConfig.ReconcileFirst)
	if sw := b.sweep(b.cp); sw.Settled != 1 {
		t.Fatalf("first look: %+v, want it settled", sw)
	}
	got := b.wantState(inv.ID, controlplane.Completed)
	if got.Verification == nil || !got.Verification.Verified || got.Result == nil || got.Result.Reference == "" {
		t.Errorf("completed without its read-back: verification %+v, result %+v", got.Verification, got.Result)
	}
	ev := b.sweepEvents(inv.ID, controlplane.EventInvocationReconciled)
	if len(ev) != 1 || ev[0][controlplane.DataBy] != controlplane.BySweep || ev[0]["to"] != "completed" || ev[0]["evidence"] == "" {
		t.Errorf("reconciled events %v, want one by the sweep with the read-back's evidence", ev)
	}
	if n := len(b.effects(inv.IdempotencyKey)); n != 1 {
		t.Errorf("%d effects, want the one committed", n)
	}
}

// TestSweepIsBoundedAndHandsOver: the shop cannot be read while the sweep
// looks (it is down), so no look settles a lost refund: the sweep looks
// with a growing back-off, at most ReconcileAttempts times within
// ReconcileWithin, then leaves it unverified for a person with one event
// saying so and why.
func TestSweepIsBoundedAndHandsOver(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := b.unverifiedRefund(demoshop.FaultRule{ResetRate: 1})
	down := adapter.NewRegistry(shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: "http://127.0.0.1:1", Token: b.shop.Token(),
		Ledger: adapter.NewLedger(b.store, b.clock.Now), Now: b.clock.Now}))
	cp := controlplane.New(b.store, down, controlplane.Config{CallTimeout: 5 * time.Second, LeaseMargin: time.Second}, b.clock.Now, nil)
	cfg := controlplane.DefaultConfig
	var lookedAt []time.Time
	cp.SetHooks(controlplane.Hooks{SweepLookup: func(string) { lookedAt = append(lookedAt, b.clock.Now()) }})
	start := b.clock.Now()
	for b.clock.Now().Sub(start) < cfg.ReconcileWithin+time.Hour {
		b.clock.Advance(15 * time.Second)
		b.sweep(cp)
	}
	b.wantState(inv.ID, controlplane.Unverified)
	if len(lookedAt) != cfg.ReconcileAttempts {
		t.Fatalf("%d looks, want %d", len(lookedAt), cfg.ReconcileAttempts)
	}
	if last := lookedAt[len(lookedAt)-1]; last.Sub(lookedAt[0]) > cfg.ReconcileWithin {
		t.Errorf("the last look %s after the first, past ReconcileWithin", last.Sub(lookedAt[0]))
	}
	if gap := lookedAt[len(lookedAt)-1].Sub(lookedAt[len(lookedAt)-2]); gap < 10*time.Minute {
		t.Errorf("the last two looks %s apart, want the back-off grown to ten minutes", gap)
	}
	for i := 2; i < len(lookedAt); i++ {
		gap, before := lookedAt[i].Sub(lookedAt[i-1]), lookedAt[i-1].Sub(lookedAt[i-2])
		if gap < before || gap > 10*time.Minute+15*time.Second {
			t.Errorf("look %d came %s after the one before (that one %s after its own): want a back-off that grows to ten minutes", i+1, gap, before)
		}
	}
	ev := b.sweepEvents(inv.ID, controlplane.EventInvocationReconcileInconclusive)
	if len(ev) != 1 || ev[0][controlplane.DataBy] != controlplane.BySweep || ev[0]["handed_to_person"] != true ||
		ev[0]["attempt"] != float64(cfg.ReconcileAttempts) || ev[0]["lookup_error"] == "" {
		t.Errorf("inconclusive events %v, want one by the sweep's last look, handing it to a person and saying why", ev)
	}
	// A person may still reconcile it, once the shop can be read.
	if rec, err := b.cp.Reconcile(b.ctx, b.agent, inv.ID); err != nil || rec.Invocation.State != controlplane.Failed {
		t.Errorf("a person's reconcile after the sweep: %s, %v; want failed, not applied", rec.Invocation.State, err)
	}
}

// TestSweepSettlesAnAnswerTheShopRolledBack: the shop answered "done" and
// rolled the refund back. Its ledger is the record, not its answer: past
// the settle time the sweep settles it failed, not applied.
func TestSweepSettlesAnAnswerTheShopRolledBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := b.unverifiedRefund(demoshop.FaultRule{IgnoreWrites: 1})
	start := b.clock.Now()
	for b.get(inv.ID).State == controlplane.Unverified && b.clock.Now().Sub(start) < 10*time.Minute {
		b.clock.Advance(5 * time.Second)
		b.sweep(b.cp)
	}
	got := b.wantState(inv.ID, controlplane.Failed)
	if got.Error == nil || got.Error.Code != adapter.CodeNotApplied {
		t.Errorf("failed with %+v, want %s", got.Error, adapter.CodeNotApplied)
	}
	if got.Verification == nil || got.Verification.Verified {
		t.Errorf("verification %+v, want the read-back that found nothing", got.Verification)
	}
	if n := len(b.effects(inv.IdempotencyKey)); n != 0 {
		t.Errorf("%d effects", n)
	}
}

// TestTwoSweepersNeverLookAtOnce: while one console instance looks a
// request up, another's sweep finds it claimed and leaves it; the request
// is settled once, with one event.
func TestTwoSweepersNeverLookAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := b.unverifiedRefund(demoshop.FaultRule{DropAfterCommit: 1})
	other := controlplane.New(b.store, b.reg, controlplane.Config{CallTimeout: 5 * time.Second, LeaseMargin: time.Second}, b.clock.Now, nil)
	entered, release := make(chan struct{}), make(chan struct{})
	b.cp.SetHooks(controlplane.Hooks{SweepLookup: func(string) { close(entered); <-release }})
	b.clock.Advance(controlplane.DefaultConfig.ReconcileFirst)
	first := make(chan controlplane.ReconcileSwept)
	go func() {
		sw, err := b.cp.ReconcileDue(b.ctx)
		if err != nil {
			t.Error(err)
		}
		first <- sw
	}()
	select {
	case <-entered:
	case sw := <-first:
		t.Fatalf("the first instance did not look: %+v", sw)
	}
	if sw := b.sweep(other); sw != (controlplane.ReconcileSwept{}) {
		t.Errorf("the second instance looked at a request the first holds: %+v", sw)
	}
	close(release)
	if sw := <-first; sw.Settled != 1 {
		t.Errorf("the first instance: %+v, want it settled", sw)
	}
	b.wantState(inv.ID, controlplane.Completed)
	if n := len(b.sweepEvents(inv.ID, controlplane.EventInvocationReconciled)); n != 1 {
		t.Errorf("%d reconciled events, want 1", n)
	}
}

// TestSweepersRacingSettleEachOnce: two instances sweep the same unverified
// requests at once; each request is looked up by one and settled once.
func TestSweepersRacingSettleEachOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var invs []controlplane.Invocation
	for range 6 {
		invs = append(invs, b.unverifiedRefund(demoshop.FaultRule{DropAfterCommit: 1}))
	}
	var mu sync.Mutex
	looked := map[string]int{}
	count := func(id string) { mu.Lock(); looked[id]++; mu.Unlock() }
	b.cp.SetHooks(controlplane.Hooks{SweepLookup: count})
	other := controlplane.New(b.store, b.reg, controlplane.Config{CallTimeout: 5 * time.Second, LeaseMargin: time.Second}, b.clock.Now, nil)
	other.SetHooks(controlplane.Hooks{SweepLookup: count})
	b.clock.Advance(controlplane.DefaultConfig.ReconcileFirst)
	var wg sync.WaitGroup
	settled := make(chan int, 2)
	for _, cp := range []*controlplane.Service{b.cp, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sw, err := cp.ReconcileDue(b.ctx)
			if err != nil {
				t.Error(err)
			}
			settled <- sw.Settled
		}()
	}
	wg.Wait()
	if n := <-settled + <-settled; n != len(invs) {
		t.Errorf("%d settled, want %d", n, len(invs))
	}
	for _, inv := range invs {
		b.wantState(inv.ID, controlplane.Completed)
		if looked[inv.ID] != 1 {
			t.Errorf("%s looked up %d times, want once", inv.ID, looked[inv.ID])
		}
		if n := len(b.sweepEvents(inv.ID, controlplane.EventInvocationReconciled)); n != 1 {
			t.Errorf("%s: %d reconciled events, want 1", inv.ID, n)
		}
	}
}

// TestACrashedSweepersClaimRunsOut: an instance that claimed a look and
// died holds it only until its lease runs out; then another settles it.
func TestACrashedSweepersClaimRunsOut(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := b.unverifiedRefund(demoshop.FaultRule{DropAfterCommit: 1})
	crashed, cancel := context.WithCancel(b.ctx)
	b.cp.SetHooks(controlplane.Hooks{SweepLookup: func(string) { cancel() }})
	b.clock.Advance(controlplane.DefaultConfig.ReconcileFirst)
	if _, err := b.cp.ReconcileDue(crashed); !errors.Is(err, context.Canceled) {
		t.Fatalf("the crashed look: %v, want it cut off", err)
	}
	other := controlplane.New(b.store, b.reg, controlplane.Config{CallTimeout: 5 * time.Second, LeaseMargin: time.Second}, b.clock.Now, nil)
	if sw := b.sweep(other); sw != (controlplane.ReconcileSwept{}) {
		t.Fatalf("looked while the crashed claim holds: %+v", sw)
	}
	b.clock.Advance(2*5*time.Second + time.Second)
	if sw := b.sweep(other); sw.Settled != 1 {
		t.Fatalf("after the crashed claim ran out: %+v, want it settled", sw)
	}
	b.wantState(inv.ID, controlplane.Completed)
}

// TestSweepClosesACallNeverBegun: a worker started a send and stalled
// before its adapter claimed the key in the request ledger; its lease ran
// out and the write became unverified. The ledger has no call under the
// key, so the request never left: the sweep settles it failed, not
// applied, and closes the key in the ledger, so that the stalled worker,
// going on, sends nothing.
func TestSweepClosesACallNeverBegun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"update_product_description"}, 10, 5, 1000)
	inv := b.edits(task, 1)[0]
	cp, gate := b.gatedService(false)
	done := make(chan error, 1)
	go func() {
		_, err := cp.Dispatch(b.ctx, inv.ID)
		done <- err
	}()
	<-gate.arrived // the send started; the adapter has not claimed the key
	b.clock.Advance(gatedLease + time.Second)
	if sw, err := b.cp.Sweep(b.ctx); err != nil || sw.Unverified != 1 {
		t.Fatalf("sweep: %+v, %v; want 1 unverified", sw, err)
	}
	b.clock.Advance(controlplane.DefaultConfig.ReconcileFirst)
	if sw := b.sweep(b.cp); sw.Settled != 1 {
		t.Fatalf("the sweep's look: %+v, want it settled", sw)
	}
	got := b.wantState(inv.ID, controlplane.Failed)
	if got.Error == nil || got.Error.Code != adapter.CodeNotApplied {
		t.Errorf("failed with %+v, want %s", got.Error, adapter.CodeNotApplied)
	}
	if state, _, _, _, found, err := b.store.AdapterRequest(b.ctx, "shop", inv.IdempotencyKey); err != nil || !found || state != "refused" {
		t.Errorf("the request ledger: %q found=%v (%v), want the key closed as refused", state, found, err)
	}
	close(gate.open)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(b.effects(inv.IdempotencyKey)); n != 0 {
		t.Errorf("the stalled worker sent it: %d effects", n)
	}
	b.wantState(inv.ID, controlplane.Failed)
}
