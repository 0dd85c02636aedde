package controlplane_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/shopadapter"
	"countersign/store/dbtest"
)

// TestStopAfterPermitSendsNothing grants a permit, then lets a pause, a
// cancel or the global stop commit before the worker's send step: the
// request never reaches the shop, and the invocation is not dispatched
// with the stop's reason, said so in its event.
func TestStopAfterPermitSendsNothing(t *testing.T) {
	t.Parallel()
	admin := controlplane.UserActor(99, "admin", "Root")
	for _, tc := range []struct {
		name   string
		stop   func(b *testBundle, task controlplane.Task) error
		reason controlplane.NotDispatchedReason
	}{
		{"pause", func(b *testBundle, task controlplane.Task) error {
			_, err := b.cp.ChangeTask(b.ctx, b.assistant, task.ID, controlplane.TaskPause, 0)
			return err
		}, controlplane.ReasonTaskPaused},
		{"cancel", func(b *testBundle, task controlplane.Task) error {
			_, err := b.cp.ChangeTask(b.ctx, b.agent, task.ID, controlplane.TaskCancel, 0)
			return err
		}, controlplane.ReasonTaskCancelled},
		{"global stop", func(b *testBundle, _ controlplane.Task) error {
			return b.cp.SetGlobalStop(b.ctx, admin, true)
		}, controlplane.ReasonGlobalStop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			task := b.task([]string{"update_product_description"}, 10, 5, 1000)
			inv := b.edits(task, 1)[0]
			cp, gate := b.gatedService(true)
			cp.SetHooks(controlplane.Hooks{BeforeStart: func(id string) {
				b.wantState(id, controlplane.Dispatching) // the permit was granted
				if err := tc.stop(b, task); err != nil {
					t.Error(err)
				}
			}})
			if sent, err := cp.Dispatch(b.ctx, inv.ID); err != nil || sent {
				t.Errorf("Dispatch = %v, %v; want not sent", sent, err)
			}
			if calls, effects := gate.callsFor(inv.IdempotencyKey), len(b.effects(inv.IdempotencyKey)); calls != 0 || effects != 0 {
				t.Errorf("sent after the %s committed: %d calls, %d effects", tc.name, calls, effects)
			}
			if got := b.wantState(inv.ID, controlplane.NotDispatched); got.NotDispatchedReason != tc.reason {
				t.Errorf("reason %s, want %s", got.NotDispatchedReason, tc.reason)
			}
			events, err := b.cp.Timeline(b.ctx, task.ID)
			if err != nil {
				t.Fatal(err)
			}
			said := 0
			for _, e := range events {
				if e.Action == "dispatch.started" {
					t.Errorf("dispatch.started recorded for a request that never left")
				}
				if e.Action == "invocation.not_dispatched" && e.InvocationID == inv.ID && e.Data["reason"] == string(tc.reason) {
					said++
				}
			}
			if said != 1 {
				t.Errorf("%d invocation.not_dispatched events with reason %s, want 1", said, tc.reason)
			}
			// Nothing sends it later, not even a dispatcher's scan: the row
			// is final.
			idle, stop := b.startDispatcher(cp, controlplane.Hooks{})
			b.untilIdle(idle)
			stop()
			if n := gate.callsFor(inv.IdempotencyKey); n != 0 {
				t.Errorf("sent later: %d calls", n)
			}
		})
	}
}

// recordingShop is the demo shop's adapter that records each Execute as it
// starts, with whether the pause had already returned by then.
type recordingShop struct {
	adapter.System
	paused *atomic.Bool
	mu     sync.Mutex
	starts map[string]bool // idempotency key → started after Pause returned
	calls  map[string]int
}

func (r *recordingShop) Execute(ctx context.Context, p adapter.Principal, call adapter.Call) (adapter.Result, error) {
	after := r.paused.Load()
	r.mu.Lock()
	r.starts[call.IdempotencyKey] = after
	r.calls[call.IdempotencyKey]++
	r.mu.Unlock()
	return r.System.Execute(ctx, p, call)
}

// TestPauseRacingSendSteps pauses a task while a dispatcher's 16 workers
// grant permits and send 60 writes. A request whose send had not started
// when the pause committed never leaves: every request that reached the
// shop has its dispatch.started before task.paused (the only ones that may
// start sending after Pause returns are those already started before it);
// each write that got a permit but had not started is not dispatched as
// paused; nothing is sent twice.
func TestPauseRacingSendSteps(t *testing.T) {
	t.Parallel()
	b := setup(t)
	notified := b.taskEvents()
	task := b.task([]string{"update_product_description"}, 200, 60, 10000)
	invs := b.edits(task, 60)
	var paused atomic.Bool
	rec := &recordingShop{paused: &paused, starts: map[string]bool{}, calls: map[string]int{},
		System: shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: b.shopURL, Token: b.shop.Token(), Ledger: adapter.NewLedger(b.store, b.clock.Now), Now: b.clock.Now})}
	cp := controlplane.New(b.store, adapter.NewRegistry(rec),
		controlplane.Config{CallTimeout: time.Minute, LeaseMargin: time.Second, Workers: 16}, b.clock.Now, nil)

	_, stop := b.startDispatcher(cp, controlplane.Hooks{})
	for range 8 { // pause once writes are reaching the shop
		<-b.writes
	}
	if _, err := b.cp.ChangeTask(b.ctx, b.assistant, task.ID, controlplane.TaskPause, 0); err != nil {
		t.Fatal(err)
	}
	paused.Store(true)
	b.untilSettled(notified, task.ID)
	stop() // its sends are over: rec is read below without its lock

	events, err := b.cp.Timeline(b.ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var pauseID int64
	started := map[string]int64{} // invocation → dispatch.started event id
	for _, e := range events {
		switch e.Action {
		case "task.paused":
			pauseID = e.ID
		case "dispatch.started":
			started[e.InvocationID] = e.ID
		}
	}
	halted, lateStarts := 0, 0
	for _, inv := range invs {
		got := b.get(inv.ID)
		calls := rec.calls[inv.IdempotencyKey]
		id, wasStarted := started[inv.ID]
		if rec.starts[inv.IdempotencyKey] {
			lateStarts++
		}
		switch {
		case calls > 1:
			t.Errorf("%s sent %d times", inv.ID, calls)
		case calls == 1 && (!wasStarted || id > pauseID):
			t.Errorf("%s reached the shop but its send started after the pause committed (started %d, paused %d)", inv.ID, id, pauseID)
		case calls == 0 && wasStarted:
			t.Errorf("%s started but never reached the shop", inv.ID)
		case calls == 0 && (got.State != controlplane.NotDispatched || got.NotDispatchedReason != controlplane.ReasonTaskPaused):
			t.Errorf("%s never left but is %s (%s), want not dispatched as task_paused", inv.ID, got.State, got.NotDispatchedReason)
		case calls == 1 && got.State != controlplane.Completed:
			t.Errorf("%s was sent but is %s", inv.ID, got.State)
		}
		if got.State == controlplane.NotDispatched && calls == 0 {
			halted++
		}
	}
	granted, _ := dbtest.CountEvents(b.ctx, b.store.Pool(), "permit.granted", &task.ID)
	t.Logf("%d permits, %d sent (%d of them started before the pause and reached the shop after Pause returned), %d not dispatched",
		granted, len(started), lateStarts, halted)
	if len(started) < 8 || len(started)+halted != len(invs) {
		t.Errorf("%d sent and %d not dispatched of %d", len(started), halted, len(invs))
	}
}
