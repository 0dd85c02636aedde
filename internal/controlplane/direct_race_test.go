package controlplane_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// settleAll waits until none of task's invocations is approved or
// dispatching any more, and returns how many there are in each state.
func (b *testBundle) settleAll(cp *controlplane.Service, taskID string) map[controlplane.State]int {
	b.t.Helper()
	give := time.After(60 * time.Second)
	for {
		invs, err := cp.Invocations(b.ctx, taskID)
		if err != nil {
			b.t.Fatal(err)
		}
		counts := map[controlplane.State]int{}
		for _, inv := range invs {
			counts[inv.State]++
		}
		if counts[controlplane.Approved]+counts[controlplane.Dispatching] == 0 {
			return counts
		}
		select {
		case <-give:
			b.t.Fatalf("work left behind: %v", counts)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestDirectSendsUnderRace proposes 300 automatic writes at once through a
// control plane whose dispatcher runs (so each proposal may grant its own
// permit and send at once), against a budget of 6 and an in-flight limit
// of 2: never more than 6 writes, never more than 2 at the shop at once,
// one effect per invocation, and what could not go at once is finished by
// the dispatcher (deferred work sent, the rest not dispatched).
func TestDirectSendsUnderRace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("update_product_description", controlplane.StageAutonomous)
	task := b.task([]string{"update_product_description"}, 6, 2, 1000)
	products := b.products(300)
	if err := b.shop.SetFault(demoshop.FaultRule{Route: "PATCH /products/{id}", LatencyMS: 40}); err != nil {
		t.Fatal(err)
	}
	cp := controlplane.New(b.store, b.reg, controlplane.Config{CallTimeout: time.Minute, LeaseMargin: time.Second, Workers: 8}, b.clock.Now, nil)
	b.runDispatcher(cp)

	var wg sync.WaitGroup
	start := make(chan struct{})
	var proposed, direct atomic.Int64
	for i := range 300 {
		wg.Go(func() {
			<-start
			raw := fmt.Sprintf(`{"product_id":%q,"description":"Edition %d"}`, products[i].ID, i)
			inv, err := cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: "update_product_description", Args: []byte(raw), Actor: b.assistant})
			if err != nil {
				return
			}
			proposed.Add(1)
			if inv.State == controlplane.Dispatching {
				direct.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	counts := b.settleAll(cp, task.ID)

	effects := b.effects("")
	perKey := map[string]int{}
	for _, e := range effects {
		perKey[e.RequestID]++
	}
	after, _ := cp.Task(b.ctx, task.ID)
	t.Logf("direct race: %d proposals (%d sent directly), states %v, shop effects %d, max in flight %d, writes used %d",
		proposed.Load(), direct.Load(), counts, len(effects), b.maxInflight.Load(), after.WritesUsed)
	if direct.Load() == 0 {
		t.Errorf("no proposal was sent directly")
	}
	if len(effects) != 6 || after.WritesUsed != 6 || counts[controlplane.Completed] != 6 {
		t.Errorf("effects = %d, writes used = %d, completed = %d; want the budget of 6, no more", len(effects), after.WritesUsed, counts[controlplane.Completed])
	}
	for key, n := range perKey {
		if n != 1 {
			t.Errorf("%s reached the shop %d times", key, n)
		}
	}
	if m := b.maxInflight.Load(); m > 2 {
		t.Errorf("%d writes in flight at once at the shop, limit is 2", m)
	}
	if counts[controlplane.NotDispatched] != int(proposed.Load())-6 {
		t.Errorf("not dispatched = %d, want %d", counts[controlplane.NotDispatched], proposed.Load()-6)
	}
}

// TestPauseRacingDirectSends pauses a task while automatic proposals keep
// arriving and sending themselves: no permit is granted and no send starts
// after the pause commits (by event order), and nothing approved before it
// is sent after it.
func TestPauseRacingDirectSends(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("update_product_description", controlplane.StageAutonomous)
	task := b.task([]string{"update_product_description"}, 200, 3, 10000)
	products := b.products(60)
	if err := b.shop.SetFault(demoshop.FaultRule{Route: "PATCH /products/{id}", LatencyMS: 15}); err != nil {
		t.Fatal(err)
	}
	cp := controlplane.New(b.store, b.reg, controlplane.Config{CallTimeout: time.Minute, LeaseMargin: time.Second, Workers: 4}, b.clock.Now, nil)
	b.runDispatcher(cp)
	var wg sync.WaitGroup
	for i := range products {
		wg.Go(func() {
			raw := fmt.Sprintf(`{"product_id":%q,"description":"Take %d"}`, products[i].ID, i)
			_, _ = cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: "update_product_description", Args: []byte(raw), Actor: b.assistant})
		})
	}
	for range 3 { // pause once writes are reaching the shop
		<-b.writes
	}
	if _, err := cp.ChangeTask(b.ctx, b.assistant, task.ID, controlplane.TaskPause, 0); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	counts := b.settleAll(cp, task.ID)

	events, err := cp.Timeline(b.ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var pauseID int64
	for _, e := range events {
		if e.Action == "task.paused" {
			pauseID = e.ID
		}
	}
	after, started := 0, 0
	for _, e := range events {
		if (e.Action == "permit.granted" || e.Action == "dispatch.started") && e.ID > pauseID {
			after++
		}
		if e.Action == "dispatch.started" {
			started++
		}
	}
	t.Logf("pause race: %d sends started, %d permits or sends after the pause; states %v", started, after, counts)
	if pauseID == 0 {
		t.Fatal("no pause event")
	}
	if after != 0 {
		t.Errorf("%d permits granted or sends started after the pause committed", after)
	}
	if counts[controlplane.Completed] != started || len(b.effects("")) != started {
		t.Errorf("%d sends started, %d completed, %d effects at the shop", started, counts[controlplane.Completed], len(b.effects("")))
	}
}

// TestBlockWaitsForAProposalThatMovesNoMoney holds a shipping-address change
// (no money, so no customer-wide exposure lock) inside its transaction,
// after it looked for a block on its order, while a refund on the same
// order (found delivered long ago) is refused by policy, which blocks the order
// for every action: the block waits for the proposal's commit (the
// proposal was first), so its refusal is journaled after the proposal.
func TestBlockWaitsForAProposalThatMovesNoMoney(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("change_shipping_address", controlplane.StageAssisted)
	task := b.task([]string{"change_shipping_address"}, 10, 2, 60)
	// Another task of the customer's: the held proposal's task lock does
	// not hold the refusal back.
	other := b.task([]string{"issue_refund"}, 10, 2, 60)
	order, err := b.shop.CreateOrder(b.ctx, demoshop.OrderFixture{CustomerID: b.customer.ID})
	if err != nil {
		t.Fatal(err)
	}
	counted, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	b.cp.SetHooks(controlplane.Hooks{ExposureCounted: func() {
		once.Do(func() {
			close(counted)
			<-release
		})
	}})
	proposed := make(chan error, 1)
	go func() {
		_, err := b.tryPropose(task, "change_shipping_address", map[string]any{"order_id": order.ID, "address": map[string]any{
			"name": "Ada Buyer", "line1": "1 New St", "city": "Berlin", "postal_code": "10115", "country": "DE"}}, "")
		proposed <- err
	}()
	<-counted
	// The order is found delivered long ago meanwhile, and a refund outside
	// the window is refused by policy, which blocks the order for every
	// action.
	if _, err := b.shopDB.Exec(b.ctx, `UPDATE shop.orders SET fulfilment_status = 'delivered', shipped_at = $2, delivered_at = $2
		WHERE id = $1`, order.ID, b.clock.Now().AddDate(0, 0, -60)); err != nil {
		t.Fatal(err)
	}
	refusedDone := make(chan error, 1)
	go func() {
		_, err := b.tryPropose(other, "issue_refund", refund(order.ID, 1000, "damaged"), "")
		refusedDone <- err
	}()
	var refusal error
	select {
	case refusal = <-refusedDone:
		close(release)
	case <-time.After(300 * time.Millisecond): // waiting for the lock, as it should
		close(release)
		refusal = <-refusedDone
	}
	if e, ok := apperr.As(refusal); !ok || !strings.HasPrefix(e.Code, "outside_refund_window") {
		t.Fatalf("the refund: %v, want outside_refund_window", refusal)
	}
	if err := <-proposed; err != nil {
		t.Fatalf("address change: %v", err)
	}
	var events []controlplane.Event
	for _, id := range []string{task.ID, other.ID} {
		evs, err := b.cp.Timeline(b.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, evs...)
	}
	var proposedID, refusedID int64
	for _, e := range events {
		switch e.Action {
		case "invocation.proposed":
			proposedID = e.ID
		case "proposal.refused":
			refusedID = e.ID
			if e.Data["blocked"] != true {
				t.Fatalf("the refusal made no block: %v", e.Data)
			}
		}
	}
	if proposedID == 0 || refusedID == 0 || refusedID < proposedID {
		t.Errorf("refusal (block) journaled as event %d, the proposal held before its commit as %d: the block did not wait", refusedID, proposedID)
	}
}
