package controlplane_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	cp := controlplane.New(b.store, b.cp.Registry(), controlplane.Config{CallTimeout: time.Minute, LeaseMargin: time.Second, Workers: 8}, b.clock.Now, nil)
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
	cp := controlplane.New(b.store, b.cp.Registry(), controlplane.Config{CallTimeout: time.Minute, LeaseMargin: time.Second, Workers: 4}, b.clock.Now, nil)
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
	if _, err := cp.Pause(b.ctx, b.assistant, task.ID, 0); err != nil {
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
