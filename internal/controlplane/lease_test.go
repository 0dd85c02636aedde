package controlplane_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/shopadapter"
	"countersign/store/dbtest"
)

// gatedShop is the demo shop's adapter with a gate in front of Execute:
// each call is counted by idempotency key, announced on arrived, and waits
// for open (or its context) before it goes on to the shop.
type gatedShop struct {
	adapter.System
	arrived chan string
	open    chan struct{}
	mu      sync.Mutex
	calls   map[string]int
}

func (g *gatedShop) Execute(ctx context.Context, p adapter.Principal, call adapter.Call) (adapter.Result, error) {
	g.mu.Lock()
	g.calls[call.IdempotencyKey]++
	g.mu.Unlock()
	g.arrived <- call.IdempotencyKey
	select {
	case <-g.open:
	case <-ctx.Done():
		return adapter.Result{}, ctx.Err()
	}
	return g.System.Execute(ctx, p, call)
}

// callsFor is how many times Execute was called with key.
func (g *gatedShop) callsFor(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[key]
}

// gatedLease is the dispatch lease of gatedService's control plane:
// two calls of a minute plus a second of margin.
const gatedLease = 2*time.Minute + time.Second

// gatedService is a second control plane over the bundle's database and
// shop with one worker, whose shop adapter sits behind a gate (open or
// closed to begin with).
func (b *testBundle) gatedService(open bool) (*controlplane.Service, *gatedShop) {
	b.t.Helper()
	ledger := adapter.NewLedger(b.store, b.clock.Now)
	g := &gatedShop{System: shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: b.shopURL, Token: b.shop.Token(), Ledger: ledger, Now: b.clock.Now}),
		arrived: make(chan string, 64), open: make(chan struct{}), calls: map[string]int{}}
	if open {
		close(g.open)
	}
	cp := controlplane.New(b.store, adapter.NewRegistry(g),
		controlplane.Config{CallTimeout: time.Minute, LeaseMargin: time.Second, Workers: 1}, b.clock.Now, nil)
	return cp, g
}

// edits proposes n automatic product description edits, approved at once.
func (b *testBundle) edits(task controlplane.Task, n int) []controlplane.Invocation {
	b.t.Helper()
	b.setStage("update_product_description", controlplane.StageAutonomous)
	var out []controlplane.Invocation
	for i, p := range b.products(n) {
		inv := b.propose(task, "update_product_description", map[string]any{"product_id": p.ID, "description": fmt.Sprintf("Take %d", i)}, "")
		if inv.State != controlplane.Approved {
			b.t.Fatalf("%s is %s, want approved", inv.ID, inv.State)
		}
		out = append(out, inv)
	}
	return out
}

// TestQueuedWriteWaitsForAWorkerBeforeItsPermit runs a dispatcher with one
// worker and holds its only send slot at the shop (a write sent directly
// by the proposing instance) while two more approved writes wait: the
// dispatcher waits for the slot before it asks for a permit, so nothing
// else leaves meanwhile (at most Config.Workers sends at once). It lets the
// lease run out and sweeps: the waiting writes have no permit yet, so the
// sweep finds only the one at the shop (whose definite outcome later
// completes it), and no invocation the sweep made unverified before its
// request left is ever sent. Each waiting write is then sent exactly once,
// under its own lease.
func TestQueuedWriteWaitsForAWorkerBeforeItsPermit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	events := b.taskEvents()
	b.setStage("update_product_description", controlplane.StageAutonomous)
	task := b.task([]string{"update_product_description"}, 10, 5, 1000)
	cp, gate := b.gatedService(false)
	waiting := make(chan struct{}, 8)
	idle, _ := b.startDispatcher(cp, controlplane.Hooks{SlotWait: func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	}})
	b.untilIdle(idle)

	var invs []controlplane.Invocation
	for i, p := range b.products(3) {
		raw, _ := json.Marshal(map[string]any{"product_id": p.ID, "description": fmt.Sprintf("Take %d", i)})
		inv, err := cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: "update_product_description", Args: raw, Actor: b.assistant})
		if err != nil {
			t.Fatal(err)
		}
		want := controlplane.Approved // waits for the dispatcher
		if i == 0 {
			want = controlplane.Dispatching // sent directly, on the free slot
		}
		if inv.State != want {
			t.Fatalf("proposal %d is %s, want %s", i, inv.State, want)
		}
		invs = append(invs, inv)
		if i == 0 {
			<-gate.arrived // the only slot is at the shop
		}
	}
	select {
	case <-waiting: // and the dispatcher waits for it
	case <-time.After(30 * time.Second):
		t.Fatal("the dispatcher never waited for its only send slot")
	}
	for _, inv := range invs[1:] {
		if n := gate.callsFor(inv.IdempotencyKey); n != 0 {
			t.Errorf("%s reached the shop while the only send slot was taken", inv.ID)
		}
	}
	atShop := invs[0].IdempotencyKey
	b.clock.Advance(gatedLease + time.Second)
	if _, err := cp.Sweep(b.ctx); err != nil {
		t.Fatal(err)
	}
	swept := map[string]int{} // invocation → Execute calls before the sweep
	var atShopID string
	for _, inv := range invs {
		if inv.IdempotencyKey == atShop {
			atShopID = inv.ID
		}
		if b.get(inv.ID).State == controlplane.Unverified {
			swept[inv.ID] = gate.callsFor(inv.IdempotencyKey)
		}
	}
	close(gate.open)
	b.untilSettled(events, task.ID)

	for _, inv := range invs {
		calls, effects := gate.callsFor(inv.IdempotencyKey), len(b.effects(inv.IdempotencyKey))
		got := b.get(inv.ID)
		before, wasSwept := swept[inv.ID]
		t.Logf("%s: swept=%v (calls before the sweep %d), calls=%d, effects=%d, now %s", inv.ID, wasSwept, before, calls, effects, got.State)
		if wasSwept && before == 0 {
			if calls != 0 || effects != 0 || got.State != controlplane.Unverified {
				t.Errorf("%s was made unverified by the sweep before it left, then sent anyway: %d calls, %d effects, now %s",
					inv.ID, calls, effects, got.State)
			}
			continue
		}
		if calls != 1 || effects != 1 || got.State != controlplane.Completed {
			t.Errorf("%s: %d calls, %d effects, %s; want sent exactly once and completed", inv.ID, calls, effects, got.State)
		}
	}
	if len(swept) != 1 || swept[atShopID] != 1 {
		t.Errorf("the sweep made %d invocations unverified (%v), want only %s, the one at the shop: a queued write held a lease",
			len(swept), swept, atShopID)
	}
}

// TestPermitWhoseLeaseRanOutIsNeverSent stops a worker between its permit
// and the send until its lease has run out, through Dispatch (the single
// invocation path): whether or not the sweep got there first, the worker
// sends nothing, says so in the audit, and the invocation ends unverified;
// nothing sends it later.
func TestPermitWhoseLeaseRanOutIsNeverSent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		sweepFirst bool
	}{
		{"swept before the worker went on", true},
		{"lease over, not yet swept", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			task := b.task([]string{"update_product_description"}, 10, 5, 1000)
			inv := b.edits(task, 1)[0]
			cp, gate := b.gatedService(true)
			atStart, goOn := make(chan string, 1), make(chan struct{})
			cp.SetHooks(controlplane.Hooks{BeforeStart: func(id string) {
				atStart <- id
				<-goOn
			}})
			type answer struct {
				sent bool
				err  error
			}
			done := make(chan answer, 1)
			go func() {
				sent, err := cp.Dispatch(b.ctx, inv.ID)
				done <- answer{sent, err}
			}()
			<-atStart
			b.wantState(inv.ID, controlplane.Dispatching)
			b.clock.Advance(gatedLease + time.Second)
			if tc.sweepFirst {
				if sw, err := cp.Sweep(b.ctx); err != nil || sw.Unverified != 1 {
					t.Fatalf("sweep: %+v, %v; want 1 unverified", sw, err)
				}
			}
			close(goOn)
			if a := <-done; a.err != nil || a.sent {
				t.Errorf("Dispatch = %v, %v; want not sent", a.sent, a.err)
			}
			if !tc.sweepFirst {
				b.wantState(inv.ID, controlplane.Dispatching)
				if sw, err := cp.Sweep(b.ctx); err != nil || sw.Unverified != 1 {
					t.Fatalf("sweep: %+v, %v; want 1 unverified", sw, err)
				}
			}
			b.wantState(inv.ID, controlplane.Unverified)
			// Nor does a dispatcher's scan.
			idle, stop := b.startDispatcher(cp, controlplane.Hooks{})
			b.untilIdle(idle)
			stop()
			if sent, err := cp.Dispatch(b.ctx, inv.ID); err != nil || sent {
				t.Errorf("Dispatch again = %v, %v", sent, err)
			}
			b.wantState(inv.ID, controlplane.Unverified)
			if calls, effects := gate.callsFor(inv.IdempotencyKey), len(b.effects(inv.IdempotencyKey)); calls != 0 || effects != 0 {
				t.Errorf("a permit whose lease ran out was sent: %d calls, %d effects", calls, effects)
			}
			if n, _ := dbtest.CountEvents(b.ctx, b.store.Pool(), "dispatch.withheld", &task.ID); n != 1 {
				t.Errorf("withheld send recorded %d times, want 1", n)
			}
		})
	}
}

// TestOnlyTheLeaseHolderSendsOrRecords gives an invocation's lease to
// another token behind the worker's back: before the send, the worker sends
// nothing; during it, the worker records no outcome (the row stays
// dispatching for the sweeper).
func TestOnlyTheLeaseHolderSendsOrRecords(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"update_product_description"}, 10, 5, 1000)
	invs := b.edits(task, 2)
	steal := func(id string) {
		if _, err := b.store.Pool().Exec(b.ctx, `UPDATE invocations SET lease_token = 'lease_someone_else' WHERE id = $1`, id); err != nil {
			t.Error(err)
		}
	}

	before, gate := b.gatedService(true)
	before.SetHooks(controlplane.Hooks{BeforeStart: steal})
	if sent, err := before.Dispatch(b.ctx, invs[0].ID); err != nil || sent {
		t.Errorf("Dispatch under a stolen lease = %v, %v; want not sent", sent, err)
	}
	b.wantState(invs[0].ID, controlplane.Dispatching)
	if n := gate.callsFor(invs[0].IdempotencyKey); n != 0 {
		t.Errorf("sent under a stolen lease: %d calls", n)
	}

	during, gate := b.gatedService(false)
	done := make(chan error, 1)
	go func() {
		_, err := during.Dispatch(b.ctx, invs[1].ID)
		done <- err
	}()
	<-gate.arrived // the request is at the shop's door
	steal(invs[1].ID)
	close(gate.open)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := b.wantState(invs[1].ID, controlplane.Dispatching); got.Result != nil {
		t.Errorf("an outcome was recorded for a lease the worker no longer holds: %+v", got.Result)
	}
	if n := len(b.effects(invs[1].IdempotencyKey)); n != 1 {
		t.Errorf("%d effects, want the one call", n)
	}
}
