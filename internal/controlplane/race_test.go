package controlplane_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// TestExactlyOnceUnderRace races 200 goroutines approving, confirming and
// dispatching one invocation (Dispatch, through this console instance and
// another, until its outcome is recorded) while both instances run their
// dispatchers (this one woken by the approval's commit, the other by its
// NOTIFY): exactly one approval wins, exactly one request reaches the shop
// and exactly one effect is made there.
func TestExactlyOnceUnderRace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	events := b.taskEvents()
	task := b.task([]string{"issue_refund"}, 10, 5, 1000)
	inv := b.propose(task, "issue_refund", refund(b.order(2).ID, 4200, "damaged"), "")
	// Slow the shop so the racers overlap with the request in flight.
	if err := b.shop.SetFault(demoshop.FaultRule{Route: "POST /refunds", LatencyMS: 50}); err != nil {
		t.Fatal(err)
	}
	other := b.instance(4)
	b.untilIdle(b.runDispatcher(b.cp))
	b.untilIdle(b.runDispatcher(other))

	var approvals, sent atomic.Int64
	// dispatch calls Dispatch until the invocation's outcome is recorded:
	// so the calls race each other and the dispatchers before, while and
	// after it is sent.
	dispatch := func(cp *controlplane.Service) {
		give := time.Now().Add(30 * time.Second)
		for {
			ok, err := cp.Dispatch(b.ctx, inv.ID)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				sent.Add(1)
			}
			now, err := cp.Invocation(b.ctx, inv.ID)
			if err != nil {
				t.Error(err)
				return
			}
			switch now.State {
			case controlplane.AwaitingApproval, controlplane.Approved, controlplane.Dispatching:
			default:
				return
			}
			if time.Now().After(give) {
				t.Errorf("the invocation is still %s after 30 seconds of racing", now.State)
				return
			}
		}
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			switch i % 4 {
			case 0:
				if _, err := staffApprove(b.ctx, b.cp, b.agent, inv.ID, 0); err == nil {
					approvals.Add(1)
				}
			case 1:
				_, _ = customerConfirm(b.ctx, b.cp, controlplane.CustomerProvedOn(b.customer.Email, "code", inv.ID), inv.ID)
			case 2:
				dispatch(b.cp)
			case 3:
				dispatch(other)
			}
		}()
	}
	writesBefore := len(b.writes)
	close(start)
	wg.Wait()
	b.untilState(b.cp, events, inv.ID, controlplane.Completed)

	if approvals.Load() != 1 {
		t.Errorf("%d approvals succeeded, want 1", approvals.Load())
	}
	b.wantState(inv.ID, controlplane.Completed)
	if n := len(b.effects(inv.IdempotencyKey)); n != 1 {
		t.Errorf("shop ledger holds %d effects for the invocation, want exactly 1", n)
	}
	if n := len(b.effects("")); n != 1 {
		t.Errorf("shop ledger holds %d effects in all, want 1", n)
	}
	writes := len(b.writes) - writesBefore
	if writes != 1 {
		t.Errorf("%d write requests reached the shop, want exactly 1", writes)
	}
	if sent.Load() > 1 {
		t.Errorf("%d Dispatch calls sent the invocation, want at most 1", sent.Load())
	}
	t.Logf("race: 200 goroutines, approvals won=%d, Dispatch calls that sent=%d, write requests at the shop=%d, shop effects=%d",
		approvals.Load(), sent.Load(), writes, len(b.effects("")))
}

// TestBudgetAndInflightUnderRace proposes 300 writes at once against a
// budget of 6 and an in-flight limit of 2, through four console instances
// whose dispatchers (two workers each) run meanwhile: each proposal's
// instance sends it directly when its permit can be granted at once, the
// dispatchers claim the rest. Never more than 6 writes, never more than 2
// in flight at the shop.
func TestBudgetAndInflightUnderRace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	events := b.taskEvents()
	b.setStage("update_product_description", controlplane.StageAutonomous)
	task := b.task([]string{"update_product_description"}, 6, 2, 1000)
	products := b.products(300) // one each: an edit changes its product's version
	if err := b.shop.SetFault(demoshop.FaultRule{Route: "PATCH /products/{id}", LatencyMS: 40}); err != nil {
		t.Fatal(err)
	}
	var instances []*controlplane.Service
	for range 4 {
		cp := b.instance(2)
		b.untilIdle(b.runDispatcher(cp))
		instances = append(instances, cp)
	}

	var wg sync.WaitGroup
	start := make(chan struct{})
	var proposed atomic.Int64
	for i := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			raw, _ := json.Marshal(map[string]any{"product_id": products[i].ID, "description": fmt.Sprintf("Edition %d", i)})
			if _, err := instances[i%len(instances)].Propose(b.ctx, controlplane.Proposal{TaskID: task.ID,
				Action: "update_product_description", Args: raw, Actor: b.assistant}); err == nil {
				proposed.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	// What the limits deferred goes as sends finish (their NOTIFY wakes
	// the dispatchers), until nothing is left approved or in flight.
	invs := b.untilSettled(events, task.ID)

	counts := map[controlplane.State]int{}
	for _, inv := range invs {
		counts[inv.State]++
	}
	effects := len(b.effects(""))
	after, _ := b.cp.Task(b.ctx, task.ID)
	t.Logf("budget race: %d proposals, states %v, shop effects %d, max in flight %d, writes used %d",
		proposed.Load(), counts, effects, b.maxInflight.Load(), after.WritesUsed)
	if effects > 6 || counts[controlplane.Completed] > 6 {
		t.Errorf("%d effects and %d completed, budget is 6", effects, counts[controlplane.Completed])
	}
	if effects != 6 || after.WritesUsed != 6 {
		t.Errorf("effects = %d, writes used = %d; want the whole budget of 6 used", effects, after.WritesUsed)
	}
	if m := b.maxInflight.Load(); m > 2 {
		t.Errorf("%d writes in flight at once at the shop, limit is 2", m)
	}
	if counts[controlplane.Approved]+counts[controlplane.Dispatching] != 0 {
		t.Errorf("work left behind: %v", counts)
	}
	if counts[controlplane.NotDispatched] != int(proposed.Load())-6 {
		t.Errorf("not dispatched = %d, want %d", counts[controlplane.NotDispatched], proposed.Load()-6)
	}
}

// TestPauseRacingDispatches pauses a task while the dispatchers of four
// console instances work through 100 approved invocations: no permit is
// granted and no send starts after the pause commits (by event order);
// work that started sending completes, the rest is not dispatched.
func TestPauseRacingDispatches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	notified := b.taskEvents()
	b.setStage("update_product_description", controlplane.StageAutonomous)
	task := b.task([]string{"update_product_description"}, 200, 3, 10000)
	products := b.products(100)
	for i := range 100 {
		b.propose(task, "update_product_description", map[string]any{"product_id": products[i].ID, "description": fmt.Sprintf("Take %d", i)}, "")
	}
	if err := b.shop.SetFault(demoshop.FaultRule{Route: "PATCH /products/{id}", LatencyMS: 15}); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		b.runDispatcher(b.instance(4))
	}
	for range 5 { // pause once writes are reaching the shop
		<-b.writes
	}
	paused, err := b.cp.ChangeTask(b.ctx, b.assistant, task.ID, controlplane.TaskPause, 0)
	if err != nil {
		t.Fatal(err)
	}
	b.untilSettled(notified, task.ID)

	events, err := b.cp.Timeline(b.ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var pauseID int64
	granted, after, started := 0, 0, 0
	for _, e := range events {
		if e.Action == "task.paused" {
			pauseID = e.ID
		}
	}
	for _, e := range events {
		if e.Action == "permit.granted" || e.Action == "dispatch.started" {
			if e.ID > pauseID {
				after++
			}
		}
		switch e.Action {
		case "permit.granted":
			granted++
		case "dispatch.started":
			started++
		}
	}
	invs, _ := b.cp.Invocations(b.ctx, task.ID)
	counts := map[controlplane.State]int{}
	for _, inv := range invs {
		counts[inv.State]++
	}
	t.Logf("pause race: %d permits before the pause, %d after; states %v", granted-after, after, counts)
	if pauseID == 0 || paused.State != controlplane.TaskPaused {
		t.Fatalf("no pause event")
	}
	if after != 0 {
		t.Errorf("%d permits granted or sends started after the pause committed", after)
	}
	// A permit granted before the pause whose send had not started when it
	// committed is not dispatched too (the send step checks the task).
	if started < 5 || started > granted || counts[controlplane.Completed] != started {
		t.Errorf("work that started sending: %d permits, %d started, %d completed", granted, started, counts[controlplane.Completed])
	}
	if counts[controlplane.NotDispatched] != 100-started || counts[controlplane.Approved] != 0 {
		t.Errorf("after the pause: %v, want %d not dispatched and none approved", counts, 100-started)
	}
	for _, inv := range invs {
		if inv.State == controlplane.NotDispatched && inv.NotDispatchedReason != controlplane.ReasonTaskPaused {
			t.Errorf("%s not dispatched for %s, want task_paused", inv.ID, inv.NotDispatchedReason)
		}
	}
}
