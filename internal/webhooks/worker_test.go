package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/webhooks"
)

func TestEnqueuesOutcomesOfTheAssistantsInvocationsOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.worker(t)
	b.invocation(t, "tsk_hook", "inv_a")
	b.invocation(t, "tsk_other", "inv_b")
	b.event(t, "tsk_hook", "inv_a", "invocation.proposed")
	b.event(t, "tsk_hook", "inv_a", "invocation.awaiting_approval")
	approved := b.event(t, "tsk_hook", "inv_a", "invocation.approved")
	b.event(t, "tsk_other", "inv_b", "invocation.approved")
	b.event(t, "tsk_hook", "", "task.paused")
	completed := b.event(t, "tsk_hook", "inv_a", "invocation.completed")

	n, err := w.Enqueue(b.ctx)
	mustN(t, "enqueued", n, err, 2)
	n, err = w.Enqueue(b.ctx) // read again: nothing new
	mustN(t, "enqueued again", n, err, 0)
	n, err = w.DeliverDue(b.ctx)
	mustN(t, "attempts", n, err, 2)

	got := b.recv.all()
	if len(got) != 2 {
		t.Fatalf("received %d, want 2", len(got))
	}
	for i, want := range []struct {
		id    int64
		event string
	}{{approved, "invocation.approved"}, {completed, "invocation.completed"}} {
		g := got[i]
		if g.sigErr != nil {
			t.Errorf("%s: signature: %v", want.event, g.sigErr)
		}
		if g.payload.EventID != want.id || g.payload.Event != want.event || g.event != want.event ||
			string(g.payload.Invocation) != `{"id":"inv_a"}` || !g.payload.OccurredAt.Equal(b.clock.Now()) {
			t.Errorf("delivery %d = %+v, want event %d %s of inv_a", i, g, want.id, want.event)
		}
	}
	for _, d := range b.deliveries(t) {
		if d.State != webhooks.Delivered || len(d.Attempts) != 1 || d.Attempts[0].Status != 200 || d.Attempts[0].Body != "thanks" {
			t.Errorf("delivery %d: %+v, want delivered after one 200", d.ID, d)
		}
	}
}

func TestEventsBeforeRegistrationAreNotSent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.invocation(t, "tsk_other", "inv_b")
	b.exec(t, `UPDATE tasks SET assistant_id = 'ast_other' WHERE id = 'tsk_hook'`)
	before := b.event(t, "tsk_other", "inv_b", "invocation.completed")
	if _, _, err := b.svc.Register(b.ctx, "ast_other", nil, "http://127.0.0.1:1/never"); err != nil {
		t.Fatal(err)
	}
	after := b.event(t, "tsk_other", "inv_b", "invocation.reconciled")
	w := b.worker(t)
	n, err := w.Enqueue(b.ctx)
	mustN(t, "enqueued", n, err, 1)
	list, err := b.svc.Deliveries(b.ctx, "ast_other", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Event != "invocation.reconciled" {
		t.Errorf("deliveries %+v, want only event %d (not %d, recorded before the endpoint)", list, after, before)
	}
}

func TestRetriesAfterA500WithBackoff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.recv.respond = func(_ received, seen int) (int, string) {
		if seen == 0 {
			return http.StatusInternalServerError, "database is down"
		}
		return http.StatusNoContent, ""
	}
	w := b.worker(t)
	b.invocation(t, "tsk_hook", "inv_a")
	b.event(t, "tsk_hook", "inv_a", "invocation.rejected")
	n, err := w.Enqueue(b.ctx)
	mustN(t, "enqueued", n, err, 1)
	n, err = w.DeliverDue(b.ctx)
	mustN(t, "first round", n, err, 1)
	n, err = w.DeliverDue(b.ctx)
	mustN(t, "before the back-off", n, err, 0)
	b.clock.Advance(29 * time.Second)
	n, err = w.DeliverDue(b.ctx)
	mustN(t, "a second before the back-off ends", n, err, 0)
	b.clock.Advance(time.Second)
	n, err = w.DeliverDue(b.ctx)
	mustN(t, "after the back-off", n, err, 1)

	got := b.recv.all()
	if len(got) != 2 || got[0].delivery != got[1].delivery || got[0].sigErr != nil || got[1].sigErr != nil {
		t.Fatalf("received %+v, want the same delivery twice, both signed", got)
	}
	list := b.deliveries(t)
	if len(list) != 1 {
		t.Fatalf("%d deliveries", len(list))
	}
	start := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	want := []webhooks.Attempt{
		// A non-2xx answer's body is not kept (nor the server's own
		// reason phrase): only its status.
		{At: start, Status: 500, Error: "endpoint answered 500 Internal Server Error"},
		{At: start.Add(30 * time.Second), Status: 204},
	}
	if diff := cmp.Diff(want, list[0].Attempts); diff != "" || list[0].State != webhooks.Delivered {
		t.Errorf("state %s, attempts (-want +got):\n%s", list[0].State, diff)
	}
}

func TestGivesUpAfterADay(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.recv.respond = func(received, int) (int, string) { return http.StatusBadGateway, "" }
	w := b.worker(t)
	b.invocation(t, "tsk_hook", "inv_a")
	b.event(t, "tsk_hook", "inv_a", "invocation.expired")
	n, err := w.Enqueue(b.ctx)
	mustN(t, "enqueued", n, err, 1)
	start := b.clock.Now()
	for i := 0; i < 100; i++ {
		if _, err := w.DeliverDue(b.ctx); err != nil {
			t.Fatal(err)
		}
		d := b.deliveries(t)[0]
		if d.State != webhooks.Pending {
			break
		}
		b.clock.Advance(d.NextAttemptAt.Sub(b.clock.Now()))
	}
	d := b.deliveries(t)[0]
	last := d.Attempts[len(d.Attempts)-1].At
	if d.State != webhooks.Failed || last.Sub(start) > webhooks.RetryFor || last.Sub(start) < webhooks.RetryFor-time.Hour {
		t.Errorf("state %s after %d attempts, the last %s after the first; want failed within the last hour of a day",
			d.State, len(d.Attempts), last.Sub(start))
	}
	if got := len(b.recv.all()); got != len(d.Attempts) {
		t.Errorf("receiver saw %d, attempts recorded %d", got, len(d.Attempts))
	}
	b.clock.Advance(48 * time.Hour)
	n, err = w.DeliverDue(b.ctx)
	mustN(t, "attempts after giving up", n, err, 0)

	// Resending puts it back for another day.
	if err := b.svc.Resend(b.ctx, "ast_hook", d.ID); err != nil {
		t.Fatal(err)
	}
	b.recv.respond = nil
	n, err = w.DeliverDue(b.ctx)
	mustN(t, "attempts after resend", n, err, 1)
	if d := b.deliveries(t)[0]; d.State != webhooks.Delivered {
		t.Errorf("after resend: %s", d.State)
	}
}

func TestInOrderPerInvocation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var confirmed int64
	b.recv.respond = func(r received, seen int) (int, string) {
		if r.payload.EventID == confirmed && seen == 0 {
			return http.StatusServiceUnavailable, "busy"
		}
		return http.StatusOK, ""
	}
	w := b.worker(t)
	b.invocation(t, "tsk_hook", "inv_a")
	b.invocation(t, "tsk_hook", "inv_b")
	confirmed = b.event(t, "tsk_hook", "inv_a", "invocation.confirmed")
	completed := b.event(t, "tsk_hook", "inv_a", "invocation.completed")
	other := b.event(t, "tsk_hook", "inv_b", "invocation.declined")
	n, err := w.Enqueue(b.ctx)
	mustN(t, "enqueued", n, err, 3)

	// inv_a's confirmation fails: its completion waits; inv_b is not held up.
	n, err = w.DeliverDue(b.ctx)
	mustN(t, "first round", n, err, 2)
	if diff := cmp.Diff([]int64{confirmed, other}, b.recv.eventIDs()); diff != "" {
		t.Fatalf("first round (-want +got):\n%s", diff)
	}
	b.clock.Advance(webhooks.Backoff(1))
	n, err = w.DeliverDue(b.ctx)
	mustN(t, "second round", n, err, 2)
	if diff := cmp.Diff([]int64{confirmed, other, confirmed, completed}, b.recv.eventIDs()); diff != "" {
		t.Errorf("arrival order (-want +got):\n%s", diff)
	}
}

func TestTwoInstancesDeliverEachEventOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var want []int64
	for i := range 10 {
		inv := fmt.Sprintf("inv_%d", i)
		b.invocation(t, "tsk_hook", inv)
		want = append(want, b.event(t, "tsk_hook", inv, "invocation.approved"), b.event(t, "tsk_hook", inv, "invocation.completed"))
	}
	w1, w2 := b.worker(t), b.worker(t)

	// Both enqueue the same events at once.
	var wg sync.WaitGroup
	counts := make([]int, 2)
	errs := make([]error, 2)
	for i, w := range []*webhooks.Worker{w1, w2} {
		wg.Go(func() { counts[i], errs[i] = w.Enqueue(b.ctx) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || counts[0]+counts[1] != len(want) {
		t.Fatalf("enqueued %v (errors %v), want %d in all", counts, errs, len(want))
	}

	// The first POST is held until the second instance has looked for
	// work: everything the first claimed is leased, so the second finds
	// nothing to send.
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	b.recv.respond = func(received, int) (int, string) {
		first := false
		once.Do(func() { first = true })
		if first {
			close(held)
			<-release
		}
		return http.StatusOK, ""
	}
	done := make(chan error, 1)
	go func() { _, err := w1.DeliverDue(b.ctx); done <- err }()
	<-held
	n, err := w2.DeliverDue(b.ctx)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	n2, err := w2.DeliverDue(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the second instance sent %d while the first held its claim, %d after", n, n2)

	seen := map[int64]int{}
	for _, id := range b.recv.eventIDs() {
		seen[id]++
	}
	for _, id := range want {
		if seen[id] != 1 {
			t.Errorf("event %d received %d times, want once", id, seen[id])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("received %d distinct events, want %d", len(seen), len(want))
	}
}

func TestRemovedEndpointGetsNothingMore(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.recv.respond = func(received, int) (int, string) { return http.StatusInternalServerError, "" }
	w := b.worker(t)
	b.invocation(t, "tsk_hook", "inv_a")
	b.event(t, "tsk_hook", "inv_a", "invocation.failed")
	if _, err := w.Enqueue(b.ctx); err != nil {
		t.Fatal(err)
	}
	n, err := w.DeliverDue(b.ctx)
	mustN(t, "attempts", n, err, 1)
	if err := b.svc.Remove(b.ctx, "ast_hook"); err != nil {
		t.Fatal(err)
	}
	b.event(t, "tsk_hook", "inv_a", "invocation.reconciled")
	b.clock.Advance(time.Hour)
	n, err = w.Enqueue(b.ctx)
	mustN(t, "enqueued after removal", n, err, 0)
	n, err = w.DeliverDue(b.ctx)
	mustN(t, "attempts after removal", n, err, 0)
	if d := b.deliveries(t); len(d) != 1 || d[0].State != webhooks.Failed {
		t.Errorf("deliveries %+v, want the pending one given up", d)
	}
}

func TestAnInvocationThatCannotBeRenderedHoldsUpNoOther(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.workerRendering(t, func(_ context.Context, id string) (any, error) {
		if id == "inv_bad" {
			return nil, errors.New("no such invocation")
		}
		return map[string]string{"id": id}, nil
	})
	b.invocation(t, "tsk_hook", "inv_bad")
	b.invocation(t, "tsk_hook", "inv_ok")
	b.event(t, "tsk_hook", "inv_bad", "invocation.completed")
	ok := b.event(t, "tsk_hook", "inv_ok", "invocation.completed")
	n, err := w.Enqueue(b.ctx)
	mustN(t, "enqueued", n, err, 1)
	n, err = w.DeliverDue(b.ctx)
	mustN(t, "attempts", n, err, 1)
	if diff := cmp.Diff([]int64{ok}, b.recv.eventIDs()); diff != "" {
		t.Errorf("received (-want +got):\n%s", diff)
	}
}

// TestAStoppedWorkerHoldsOnlyTheDeliveryItWasSending: a worker claims one
// delivery at a time, just before it sends it. One that stops mid-send (its
// console killed or frozen) holds that delivery alone: another instance
// sends the rest at once, and the held one a minute later, when its claim
// (one delivery timeout and 30 s) has run out. (Claims of ten, held for
// 130 s, kept all three back.)
func TestAStoppedWorkerHoldsOnlyTheDeliveryItWasSending(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var want []int64
	for i := range 3 {
		inv := fmt.Sprintf("inv_%d", i)
		b.invocation(t, "tsk_hook", inv)
		want = append(want, b.event(t, "tsk_hook", inv, "invocation.completed"))
	}
	w1, w2 := b.worker(t), b.worker(t)
	n, err := w1.Enqueue(b.ctx)
	mustN(t, "enqueued", n, err, 3)

	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	b.recv.respond = func(received, int) (int, string) {
		first := false
		once.Do(func() { first = true })
		if first {
			close(held)
			<-release
		}
		return http.StatusOK, ""
	}
	defer close(release)
	ctx1, stop1 := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { _, err := w1.DeliverDue(ctx1); done <- err }()
	<-held
	n, err = w2.DeliverDue(b.ctx)
	mustN(t, "sent by the second instance while the first holds its claim", n, err, 2)
	stop1() // the first stops mid-send, its claim left in place
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the stopped worker returned %v, want context.Canceled", err)
	}
	n, err = w2.DeliverDue(b.ctx)
	mustN(t, "sent while the stopped worker's claim runs", n, err, 0)
	b.clock.Advance(time.Minute)
	n, err = w2.DeliverDue(b.ctx)
	mustN(t, "sent once the claim ran out", n, err, 1)

	for _, d := range b.deliveries(t) {
		if d.State != webhooks.Delivered {
			t.Errorf("delivery %d is %s, want delivered", d.ID, d.State)
		}
	}
	seen := map[int64]bool{}
	for _, id := range b.recv.eventIDs() {
		seen[id] = true
	}
	for _, id := range want {
		if !seen[id] {
			t.Errorf("event %d never received", id)
		}
	}
}

// handoffEvent records a person ending a hand-off of conversation as
// handoffs.Service.Close does.
func (b *testBundle) handoffEvent(t *testing.T, conversation string) int64 {
	t.Helper()
	var id int64
	err := b.pool.QueryRow(b.ctx, `INSERT INTO events (at, actor_kind, actor_id, action, task_id, data)
		VALUES ($1::timestamptz, 'user', '1', 'handoff.given_back', 'tsk_hook', jsonb_build_object('assistant_id', 'ast_hook', 'conversation_id', $2::text,
			'outcome', 'given_back', 'note', 'Ask which order.', 'handed_off_at', $1, 'latest_handoff_id', 1)) RETURNING id`,
		b.clock.Now(), conversation).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestOneConversationsFailingHandoffDeliveryHoldsUpNoOther(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var failing int64
	b.recv.respond = func(r received, seen int) (int, string) {
		if r.payload.EventID == failing && seen == 0 {
			return http.StatusServiceUnavailable, "busy"
		}
		return http.StatusOK, ""
	}
	w := b.worker(t)
	failing = b.handoffEvent(t, "conv-a")
	laterA := b.handoffEvent(t, "conv-a")
	other := b.handoffEvent(t, "conv-b")
	n, err := w.Enqueue(b.ctx)
	mustN(t, "enqueued", n, err, 3)
	// conv-a's first ending fails: its next waits, in order; conv-b's goes.
	n, err = w.DeliverDue(b.ctx)
	mustN(t, "first round", n, err, 2)
	if diff := cmp.Diff([]int64{failing, other}, b.recv.eventIDs()); diff != "" {
		t.Errorf("first round (-want +got):\n%s", diff)
	}
	for _, d := range b.deliveries(t) {
		if d.InvocationID != "" {
			t.Errorf("a hand-off's delivery names invocation %q", d.InvocationID)
		}
	}
	b.clock.Advance(webhooks.Backoff(1))
	for range 2 {
		if _, err := w.DeliverDue(b.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]int64{failing, other, failing, laterA}, b.recv.eventIDs()); diff != "" {
		t.Errorf("arrival order (-want +got):\n%s", diff)
	}
}
