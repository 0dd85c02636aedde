package controlplane_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/shopadapter"
	"countersign/store"
)

// holdShop is the demo shop's adapter that holds the Execute of one
// idempotency key until release is closed, announcing it on held; every
// other call goes straight through.
type holdShop struct {
	adapter.System
	key     string
	held    chan struct{}
	release chan struct{}
	once    sync.Once
}

func (h *holdShop) Execute(ctx context.Context, p adapter.Principal, call adapter.Call) (adapter.Result, error) {
	if call.IdempotencyKey == h.key {
		h.once.Do(func() { close(h.held) })
		select {
		case <-h.release:
		case <-ctx.Done():
			return adapter.Result{}, ctx.Err()
		}
	}
	return h.System.Execute(ctx, p, call)
}

// deafStore hears no NOTIFY on the dispatch channel, so a dispatcher over
// it is woken only by its own process (or its interval).
type deafStore struct{ *store.Store }

func (d deafStore) Listen(ctx context.Context, channel string, fn func(string), status func(error, time.Duration)) {
	if channel == store.DispatchChannel {
		<-ctx.Done()
		return
	}
	d.Store.Listen(ctx, channel, fn, status)
}

// taskEvents follows the bundle's task events until the test ends: each
// new event pokes the returned channel. It returns once the LISTEN is in
// force.
func (b *testBundle) taskEvents() <-chan struct{} {
	b.t.Helper()
	ctx, cancel := context.WithCancel(b.ctx)
	b.t.Cleanup(cancel) // before the pool closes: the LISTEN holds a connection
	out := make(chan struct{}, 1)
	listening := make(chan struct{})
	var once sync.Once
	go b.cp.ListenTaskEvents(ctx, func(string) {
		select {
		case out <- struct{}{}:
		default:
		}
	}, func(err error, _ time.Duration) {
		if err == nil {
			once.Do(func() { close(listening) })
		}
	})
	select {
	case <-listening:
	case <-time.After(30 * time.Second):
		b.t.Fatal("the task events LISTEN never started")
	}
	return out
}

// untilState waits, event by event, until the invocation is in state want;
// 30 seconds without it fail the test (the dispatchers here tick hourly,
// so only what the test is about can get it there).
func (b *testBundle) untilState(cp *controlplane.Service, events <-chan struct{}, id string, want controlplane.State) {
	b.t.Helper()
	give := time.After(30 * time.Second)
	for {
		inv, err := cp.Invocation(b.ctx, id)
		if err != nil {
			b.t.Fatal(err)
		}
		if inv.State == want {
			return
		}
		select {
		case <-events:
		case <-give:
			b.t.Fatalf("invocation %s is still %s, want %s", id, inv.State, want)
		}
	}
}

// runDispatcher runs cp's dispatcher with an hourly interval (so no tick
// helps) until the test ends; idle receives a value each time a worker has
// claimed all it could.
func (b *testBundle) runDispatcher(cp *controlplane.Service) (idle <-chan struct{}) {
	b.t.Helper()
	idle, _ = b.startDispatcher(cp, controlplane.Hooks{})
	return idle
}

// startDispatcher is runDispatcher with hooks h set on cp besides Idle
// (which it sets itself); stop ends the dispatcher and returns once it has
// (and with it the sends it had in flight). The test's end stops it too.
func (b *testBundle) startDispatcher(cp *controlplane.Service, h controlplane.Hooks) (idle <-chan struct{}, stop func()) {
	b.t.Helper()
	ch := make(chan struct{}, 64)
	h.Idle = func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	cp.SetHooks(h)
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan struct{})
	go func() { defer close(done); cp.RunDispatcher(ctx, time.Hour) }()
	stop = func() { cancel(); <-done }
	b.t.Cleanup(stop)
	return ch, stop
}

// instance is another console instance over the bundle's database and
// shop, with workers dispatch workers.
func (b *testBundle) instance(workers int) *controlplane.Service {
	return controlplane.New(b.store, b.reg, controlplane.Config{CallTimeout: time.Minute, LeaseMargin: time.Second, Workers: workers}, b.clock.Now, nil)
}

// untilIdle waits for the dispatcher's idle signal; 30 seconds without it
// fail the test.
func (b *testBundle) untilIdle(idle <-chan struct{}) {
	b.t.Helper()
	select {
	case <-idle:
	case <-time.After(30 * time.Second):
		b.t.Fatal("the dispatcher never finished its scan")
	}
}

// untilSettled waits, event by event, until no invocation of the task is
// approved or dispatching (nothing more can happen to them); 30 seconds
// without it fail the test. It returns the task's invocations.
func (b *testBundle) untilSettled(events <-chan struct{}, taskID string) []controlplane.Invocation {
	b.t.Helper()
	give := time.After(30 * time.Second)
	for {
		invs, err := b.cp.Invocations(b.ctx, taskID)
		if err != nil {
			b.t.Fatal(err)
		}
		open := 0
		for _, inv := range invs {
			if inv.State == controlplane.Approved || inv.State == controlplane.Dispatching {
				open++
			}
		}
		if open == 0 {
			return invs
		}
		select {
		case <-events:
		case <-give:
			b.t.Fatalf("%d invocations of task %s are still approved or dispatching", open, taskID)
		}
	}
}

// TestDispatcherKeepsClaimingWhileASendIsSlow holds one write at the shop
// and proposes another: a free worker claims and completes the second while
// the first is still held (a dispatcher that waited for its slowest send
// before claiming more would sit until the first came back, and its
// interval here is an hour).
func TestDispatcherKeepsClaimingWhileASendIsSlow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	events := b.taskEvents()
	task := b.task([]string{"update_product_description"}, 10, 5, 1000)
	slow := b.edits(task, 1)[0]
	hold := &holdShop{System: shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: b.shopURL, Token: b.shop.Token(), Ledger: adapter.NewLedger(b.store, b.clock.Now), Now: b.clock.Now}),
		key: slow.IdempotencyKey, held: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-hold.release:
		default:
			close(hold.release)
		}
	})
	cp := controlplane.New(b.store, adapter.NewRegistry(hold),
		controlplane.Config{CallTimeout: time.Minute, LeaseMargin: time.Second, Workers: 4}, b.clock.Now, nil)
	b.runDispatcher(cp)
	select {
	case <-hold.held:
	case <-time.After(30 * time.Second):
		t.Fatal("the first write never reached the shop")
	}

	// Proposed through another instance (no dispatcher of its own): the
	// running dispatcher claims it on that instance's NOTIFY.
	other := b.task([]string{"update_product_description"}, 10, 5, 1000)
	fast := b.propose(other, "update_product_description", map[string]any{"product_id": b.product().ID, "description": "Second take"}, "")
	if fast.State != controlplane.Approved {
		t.Fatalf("propose: %s", fast.State)
	}
	b.untilState(cp, events, fast.ID, controlplane.Completed)
	if got := b.get(slow.ID).State; got != controlplane.Dispatching {
		t.Fatalf("the held write is %s while held, want dispatching", got)
	}
	if n := len(b.effects(slow.IdempotencyKey)); n != 0 {
		t.Fatalf("the held write has %d effects at the shop before it was let go", n)
	}

	close(hold.release)
	b.untilState(cp, events, slow.ID, controlplane.Completed)
	for _, inv := range []controlplane.Invocation{slow, fast} {
		if n := len(b.effects(inv.IdempotencyKey)); n != 1 {
			t.Errorf("%s: %d effects at the shop, want exactly 1", inv.ID, n)
		}
	}
}

// TestProposalDispatchesWithoutATickOrANotify runs a dispatcher that hears
// no NOTIFY and ticks hourly: an automatic proposal made through the same
// control plane is sent at once, because its own transaction granted its
// permit and it leaves on one of the process's workers right after the
// commit (a direct send); an agent's approval wakes its own process's
// dispatcher after its commit.
func TestProposalDispatchesWithoutATickOrANotify(t *testing.T) {
	t.Parallel()
	b := setup(t)
	events := b.taskEvents()
	b.setStage("update_product_description", controlplane.StageAutonomous)
	cp := controlplane.New(deafStore{b.store}, b.reg,
		controlplane.Config{CallTimeout: time.Minute, LeaseMargin: time.Second, Workers: 2}, b.clock.Now, nil)
	idle := b.runDispatcher(cp)
	select {
	case <-idle: // the start-up scan found nothing
	case <-time.After(30 * time.Second):
		t.Fatal("the dispatcher's start-up scan never finished")
	}

	task := b.task([]string{"update_product_description"}, 10, 5, 1000)
	raw := fmt.Sprintf(`{"product_id":%q,"description":"Now"}`, b.product().ID)
	inv, err := cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: "update_product_description", Args: []byte(raw), Actor: b.assistant})
	if err != nil || inv.State != controlplane.Dispatching {
		t.Fatalf("propose: %v (%s), want dispatching (sent directly)", err, inv.State)
	}
	b.untilState(cp, events, inv.ID, controlplane.Completed)
	if n := len(b.effects(inv.IdempotencyKey)); n != 1 {
		t.Errorf("%d effects at the shop, want exactly 1", n)
	}

	// An agent's approval kicks it the same way.
	b.setStage("update_product_description", controlplane.StagePropose)
	raw = fmt.Sprintf(`{"product_id":%q,"description":"Later"}`, b.product().ID)
	queued, err := cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: "update_product_description", Args: []byte(raw), Actor: b.assistant})
	if err != nil || queued.State != controlplane.AwaitingApproval {
		t.Fatalf("propose: %v (%s)", err, queued.State)
	}
	if _, err := staffApprove(b.ctx, cp, b.agent, queued.ID, queued.Version); err != nil {
		t.Fatal(err)
	}
	b.untilState(cp, events, queued.ID, controlplane.Completed)
}

// TestDispatchersOfTwoInstancesSendEachWriteOnce runs two console
// instances' dispatchers (eight workers each, woken by each other's
// NOTIFY) over 60 automatic writes in three tasks with an in-flight limit
// of 2: every write completes, each reaches the shop exactly once, and no
// task ever has more than 2 writes at the shop at once.
func TestDispatchersOfTwoInstancesSendEachWriteOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	events := b.taskEvents()
	var invs []controlplane.Invocation
	for range 3 {
		invs = append(invs, b.edits(b.task([]string{"update_product_description"}, 100, 2, 1000), 20)...)
	}
	for range 2 {
		cp := controlplane.New(b.store, b.reg, controlplane.Config{CallTimeout: time.Minute, LeaseMargin: time.Second, Workers: 8}, b.clock.Now, nil)
		b.runDispatcher(cp)
	}
	for _, inv := range invs {
		b.untilState(b.cp, events, inv.ID, controlplane.Completed)
	}
	for _, inv := range invs {
		if n := len(b.effects(inv.IdempotencyKey)); n != 1 {
			t.Errorf("%s: %d effects at the shop, want exactly 1", inv.ID, n)
		}
	}
	if n := len(b.effects("")); n != len(invs) {
		t.Errorf("%d effects at the shop, want %d", n, len(invs))
	}
	if m := b.maxInflight.Load(); m > 6 {
		t.Errorf("%d writes at the shop at once, more than 3 tasks × 2 allow", m)
	}
}
