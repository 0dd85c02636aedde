package controlplane_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"countersign/internal/controlplane"
)

// awaited is what one AwaitChange returned.
type awaited struct {
	inv     controlplane.Invocation
	outcome controlplane.WaitOutcome
	err     error
}

// awaitingApproval proposes n refunds that wait for an agent.
func awaitingApproval(b *testBundle, n int) []controlplane.Invocation {
	b.t.Helper()
	b.setStage("issue_refund", controlplane.StagePropose)
	task := b.task([]string{"issue_refund"}, n+1, 1, 600)
	out := make([]controlplane.Invocation, n)
	for i := range out {
		out[i] = b.propose(task, "issue_refund", refund(b.order(3).ID, int64(100+i), "damaged"), "")
		if out[i].State != controlplane.AwaitingApproval {
			b.t.Fatalf("proposed: %s, want awaiting approval", out[i].State)
		}
	}
	return out
}

// reject is an agent's rejection of id, committed when it returns.
func (b *testBundle) reject(id string) {
	b.t.Helper()
	if _, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: id,
		Verb: controlplane.StaffReject, Reason: controlplane.OtherReason, Other: "not this time"}); err != nil {
		b.t.Fatal(err)
	}
}

// await runs AwaitChange in a goroutine of its own.
func await(b *testBundle, id string, from controlplane.State, within time.Duration) <-chan awaited {
	done := make(chan awaited, 1)
	go func() {
		inv, outcome, err := b.cp.AwaitChange(b.ctx, id, from, within)
		done <- awaited{inv, outcome, err}
	}()
	return done
}

// TestAwaitChangeReturnsWhenAnotherGoroutineDecides: a waiter that has read
// the request and is waiting returns with the new state as soon as an
// agent's rejection commits, woken by the NOTIFY, long before its deadline.
func TestAwaitChangeReturnsWhenAnotherGoroutineDecides(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := awaitingApproval(b, 1)[0]
	waiting := make(chan string, 1)
	b.cp.SetHooks(controlplane.Hooks{Waiting: func(id string) { waiting <- id }})

	done := await(b, inv.ID, controlplane.AwaitingApproval, controlplane.MaxWait)
	<-waiting
	start := time.Now()
	b.reject(inv.ID)
	got := <-done
	if got.err != nil || got.outcome != controlplane.WaitChanged || got.inv.State != controlplane.Rejected {
		t.Fatalf("AwaitChange: %s %s %v, want changed to rejected", got.outcome, got.inv.State, got.err)
	}
	// The deadline would also find the change; the wake-up is what
	// returns it now (woken, it returns in milliseconds).
	if took := time.Since(start); took > controlplane.MaxWait/2 {
		t.Errorf("it returned %s after the change, at its deadline: nothing woke it", took)
	}
	if n := b.cp.Waiting(); n != 0 {
		t.Errorf("%d waiters still held after it returned", n)
	}
}

// TestAwaitChangeReturnsAtTheDeadlineUnchanged: nothing happens, so the
// waiter returns once its time is up, with the state as it is; a state
// other than the one waited on, or a terminal one, returns at once.
func TestAwaitChangeReturnsAtTheDeadlineUnchanged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	invs := awaitingApproval(b, 2)
	inv, other := invs[0], invs[1]
	var waits sync.Map
	b.cp.SetHooks(controlplane.Hooks{Waiting: func(id string) { waits.Store(id, true) }})

	got := <-await(b, inv.ID, controlplane.AwaitingApproval, 300*time.Millisecond)
	if got.err != nil || got.outcome != controlplane.WaitTimeout || got.inv.State != controlplane.AwaitingApproval {
		t.Fatalf("AwaitChange with nothing happening: %s %s %v, want timeout, still awaiting approval", got.outcome, got.inv.State, got.err)
	}

	got = <-await(b, inv.ID, controlplane.AwaitingConfirmation, controlplane.MaxWait)
	if got.outcome != controlplane.WaitChanged || got.inv.State != controlplane.AwaitingApproval {
		t.Errorf("waiting on a state it is not in: %s %s %v, want changed at once", got.outcome, got.inv.State, got.err)
	}
	b.reject(other.ID)
	got = <-await(b, other.ID, controlplane.Rejected, controlplane.MaxWait)
	if got.outcome != controlplane.WaitFinal || got.inv.State != controlplane.Rejected {
		t.Errorf("waiting on a rejected request: %s %s %v, want final at once", got.outcome, got.inv.State, got.err)
	}
	if _, waited := waits.Load(other.ID); waited {
		t.Error("the waiter on a rejected request waited")
	}
}

// TestAwaitChangeReadsAfterSubscribing: a change committed after the caller
// read the request but before the waiter listened sent its NOTIFY to
// nobody; the waiter's read once subscribed finds it, and it returns at
// once instead of sleeping to its deadline.
func TestAwaitChangeReadsAfterSubscribing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := awaitingApproval(b, 1)[0]
	waited := make(chan string, 1)
	b.cp.SetHooks(controlplane.Hooks{
		BeforeSubscribe: func(id string) { b.reject(id) },
		Waiting:         func(id string) { waited <- id },
	})
	start := time.Now()
	got := <-await(b, inv.ID, controlplane.AwaitingApproval, controlplane.MaxWait)
	if got.err != nil || got.outcome != controlplane.WaitChanged || got.inv.State != controlplane.Rejected {
		t.Fatalf("AwaitChange after a change nobody heard: %s %s %v, want changed to rejected at once", got.outcome, got.inv.State, got.err)
	}
	if took := time.Since(start); took > controlplane.MaxWait/2 {
		t.Errorf("it returned after %s, at its deadline: it did not read the request once subscribed", took)
	}
	select {
	case <-waited:
		t.Error("it waited although the request had already changed")
	default:
	}
}

// TestHundredsOfWaitersShareOneListen: 300 waiters on ten requests hold one
// listening connection between them and no other (the pool's connections
// stay at what the pool allows, none held while waiting), each reads its
// request once while nothing happens (no polling), and a change wakes the
// thirty waiters of that request and no other.
func TestHundredsOfWaitersShareOneListen(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const requests, each = 10, 30
	invs := awaitingApproval(b, requests)
	var mu sync.Mutex
	reads := map[string]int{}
	allWaiting := make(chan struct{})
	b.cp.SetHooks(controlplane.Hooks{Waiting: func(id string) {
		mu.Lock()
		defer mu.Unlock()
		reads[id]++
		total := 0
		for _, n := range reads {
			total += n
		}
		if total == requests*each {
			close(allWaiting)
		}
	}})

	results := make([]chan awaited, requests)
	for i, inv := range invs {
		results[i] = make(chan awaited, each)
		for range each {
			go func() {
				got, outcome, err := b.cp.AwaitChange(b.ctx, inv.ID, controlplane.AwaitingApproval, controlplane.MaxWait)
				results[i] <- awaited{got, outcome, err}
			}()
		}
	}
	<-allWaiting
	if n := b.cp.Waiting(); n != requests*each {
		t.Fatalf("%d waiters held, want %d", n, requests*each)
	}
	var listening, backends int
	if err := b.store.Pool().QueryRow(context.Background(), `
		SELECT count(*) FILTER (WHERE query = 'LISTEN countersign_invocations'), count(*)
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&listening, &backends); err != nil {
		t.Fatal(err)
	}
	if listening != 1 {
		t.Errorf("%d connections listen for %d waiters, want 1", listening, requests*each)
	}
	if max := int(b.store.Pool().Config().MaxConns); backends > max {
		t.Errorf("%d connections for %d waiters, more than the pool's %d", backends, requests*each, max)
	}

	start := time.Now()
	b.reject(invs[0].ID)
	defer func() {
		if took := time.Since(start); took > controlplane.MaxWait/2 {
			t.Errorf("the waiters returned %s after the changes, at their deadline: nothing woke them", took)
		}
	}()
	for range each {
		if got := <-results[0]; got.err != nil || got.outcome != controlplane.WaitChanged || got.inv.State != controlplane.Rejected {
			t.Fatalf("a waiter of the rejected request: %s %s %v", got.outcome, got.inv.State, got.err)
		}
	}
	for i := 1; i < requests; i++ {
		select {
		case got := <-results[i]:
			t.Fatalf("a waiter of request %d returned when another changed: %s %s", i, got.outcome, got.inv.State)
		default:
		}
	}
	mu.Lock()
	for _, inv := range invs {
		if reads[inv.ID] != each {
			t.Errorf("request %s was read %d times by its %d waiters while nothing happened to it", inv.ID, reads[inv.ID], each)
		}
	}
	mu.Unlock()
	for i := 1; i < requests; i++ {
		b.reject(invs[i].ID)
		for range each {
			if got := <-results[i]; got.outcome != controlplane.WaitChanged {
				t.Fatalf("a waiter of request %d: %s %v", i, got.outcome, got.err)
			}
		}
	}
}

// TestReleaseWaitsAnswersEveryWaitAtOnce: at shutdown the held waits
// answer at once with the state as it is, as at their deadline, and a wait
// made after it does not wait.
func TestReleaseWaitsAnswersEveryWaitAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := awaitingApproval(b, 1)[0]
	waiting := make(chan string, 2)
	b.cp.SetHooks(controlplane.Hooks{Waiting: func(id string) { waiting <- id }})
	first, second := await(b, inv.ID, controlplane.AwaitingApproval, controlplane.MaxWait), await(b, inv.ID, controlplane.AwaitingApproval, controlplane.MaxWait)
	<-waiting
	<-waiting
	start := time.Now()
	b.cp.ReleaseWaits()
	for _, done := range []<-chan awaited{first, second, await(b, inv.ID, controlplane.AwaitingApproval, controlplane.MaxWait)} {
		got := <-done
		if got.err != nil || got.outcome != controlplane.WaitTimeout || got.inv.State != controlplane.AwaitingApproval {
			t.Errorf("a released wait: %s %s %v, want timeout, awaiting approval", got.outcome, got.inv.State, got.err)
		}
	}
	if took := time.Since(start); took > controlplane.MaxWait/2 {
		t.Errorf("the waits answered %s after the release, at their deadline", took)
	}
}
