package handoffs_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/handoffs"
)

// handOff records a hand-off of the task's conversation as the assistant
// would, with data (summary, facts, would_propose).
func (b *testBundle) handOff(task controlplane.Task, data any) int64 {
	b.t.Helper()
	raw, _ := json.Marshal(data)
	if _, err := b.store.Pool().Exec(b.ctx, `INSERT INTO assistants (id, name, created_at) VALUES ('asst_test', 'Test assistant', now())
		ON CONFLICT DO NOTHING`); err != nil {
		b.t.Fatal(err)
	}
	var id int64
	err := b.store.Pool().QueryRow(b.ctx, `INSERT INTO conversation_events (conversation_id, assistant_id, task_id, intent, mode, at, data)
		VALUES ($1, 'asst_test', NULLIF($2, ''), 'transactional_high', 'handed_off', $3, $4) RETURNING id`, task.ConversationID, task.ID, b.clock.Now(), raw).Scan(&id)
	if err != nil {
		b.t.Fatal(err)
	}
	return id
}

func (b *testBundle) countRows(sql string, args ...any) int {
	b.t.Helper()
	var n int
	if err := b.store.Pool().QueryRow(b.ctx, sql, args...).Scan(&n); err != nil {
		b.t.Fatal(err)
	}
	return n
}

func TestResolvingAHandoffTwiceAtOnceRecordsItOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	first := b.handOff(task, map[string]any{"summary": "Wants a refund; two orders match."})
	latest := b.handOff(task, map[string]any{"summary": "Asks again."})

	var wg sync.WaitGroup
	errs := make([]error, 2)
	start := make(chan struct{})
	for i, who := range []controlplane.Actor{b.agent, b.agent2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = b.ho.Close(b.ctx, who, latest, handoffs.Resolved, "Refunded by phone: order A.")
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case apperr.Is(err, apperr.Conflict) && strings.Contains(err.Error(), "over already"):
			// told plainly: someone resolved it first
		default:
			t.Errorf("the second resolve: %v, want a conflict saying it is over already", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d resolves succeeded (%v), want exactly one", won, errs)
	}
	if n := b.countRows(`SELECT count(*) FROM events WHERE action = 'handoff.resolved'`); n != 1 {
		t.Errorf("handoff.resolved events = %d, want 1", n)
	}
	if n := b.countRows(`SELECT count(DISTINCT user_id) FROM handoff_closures c JOIN conversation_events e ON e.id = c.conversation_event_id
		WHERE e.conversation_id = $1 HAVING count(*) = 2`, task.ConversationID); n != 1 {
		t.Errorf("the conversation's two hand-offs are closed by %d people, want both by the one who won", n)
	}
	var note, outcome string
	if err := b.store.Pool().QueryRow(b.ctx, `SELECT data->>'note', data->>'outcome' FROM events WHERE action = 'handoff.resolved'`).Scan(&note, &outcome); err != nil {
		t.Fatal(err)
	}
	if note != "Refunded by phone: order A." || outcome != "resolved" {
		t.Errorf("the event records note %q, outcome %q", note, outcome)
	}
	if _, err := b.ho.Take(b.ctx, b.agent, first); !apperr.Is(err, apperr.IllegalTransition) {
		t.Errorf("taking a resolved hand-off: %v, want an illegal transition", err)
	}
}

func TestOnlyItsHolderEndsATakenHandoffAndOnlyStaffAtAll(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	id := b.handOff(task, map[string]any{"summary": "Wants a refund."})
	for _, who := range []controlplane.Actor{b.assistant, controlplane.CustomerActor(b.customer.Email, "account")} {
		if err := b.ho.Close(b.ctx, who, id, handoffs.Resolved, "done"); !apperr.Is(err, apperr.Forbidden) {
			t.Errorf("%s resolves: %v, want forbidden", who.Kind, err)
		}
		if _, err := b.ho.Take(b.ctx, who, id); !apperr.Is(err, apperr.Forbidden) {
			t.Errorf("%s takes: %v, want forbidden", who.Kind, err)
		}
	}
	if err := b.ho.Close(b.ctx, b.agent, id, handoffs.GivenBack, "  "); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("giving back without a note: %v, want invalid naming the note", err)
	}
	if by, err := b.ho.Take(b.ctx, b.agent, id); err != nil || by != b.agent.UserID {
		t.Fatalf("take: %d, %v", by, err)
	}
	err := b.ho.Close(b.ctx, b.agent2, id, handoffs.GivenBack, "Ask which order.")
	if !apperr.Is(err, apperr.Conflict) || !strings.Contains(err.Error(), b.agent.Name) {
		t.Errorf("another agent gives it back: %v, want a conflict naming %s", err, b.agent.Name)
	}
	if err := b.ho.Close(b.ctx, b.agent, id, handoffs.GivenBack, "Ask which order."); err != nil {
		t.Fatalf("the holder gives it back: %v", err)
	}
	if n := b.countRows(`SELECT count(*) FROM events WHERE action LIKE 'handoff.%'`); n != 2 {
		t.Errorf("hand-off events = %d, want 2 (taken, given back)", n)
	}
}

func TestSendingAHandoffDraftOnKeepsTheCustomersConfirmation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	o := b.order(2)
	id := b.handOff(task, map[string]any{"summary": "Wants $8.00 back for the bulb.",
		"would_propose": map[string]any{"action": "issue_refund", "args": refund(o.ID, 800, "damaged")}})
	if _, err := b.ho.SendDraft(b.ctx, b.agent, id, b.draftDigest(id)); !apperr.Is(err, apperr.IllegalTransition) {
		t.Errorf("sending before taking: %v, want an illegal transition (take it first)", err)
	}
	if _, err := b.ho.Take(b.ctx, b.agent, id); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ho.SendDraft(b.ctx, b.agent2, id, b.draftDigest(id)); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("someone else sends it: %v, want forbidden", err)
	}
	inv, err := b.ho.SendDraft(b.ctx, b.agent, id, b.draftDigest(id))
	if err != nil {
		t.Fatal(err)
	}
	if inv.State != controlplane.AwaitingConfirmation || inv.Quote.AmountCents == nil || *inv.Quote.AmountCents != 800 {
		t.Fatalf("the draft sent on is %s with quote %+v: want it quoted and awaiting the customer's confirmation", inv.State, inv.Quote)
	}
	if n := b.countRows(`SELECT count(*) FROM events WHERE action = 'invocation.proposed' AND actor_kind = 'user' AND invocation_id = $1`, inv.ID); n != 1 {
		t.Errorf("the proposal is not recorded as the agent's own")
	}
	if n := b.countRows(`SELECT count(*) FROM events WHERE action = 'handoff.draft_sent' AND invocation_id = $1`, inv.ID); n != 1 {
		t.Errorf("the hand-off does not record which request its draft became")
	}
	if len(b.effects(inv.IdempotencyKey)) != 0 {
		t.Errorf("the shop changed before the customer confirmed")
	}
}

func TestWhoSendsAHandoffDraftOnDoesNotApproveIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StagePropose)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	o := b.order(2)
	id := b.handOff(task, map[string]any{"summary": "Wants $8.00 back for the bulb.",
		"would_propose": map[string]any{"action": "issue_refund", "args": refund(o.ID, 800, "damaged")}})
	if _, err := b.ho.Take(b.ctx, b.agent, id); err != nil {
		t.Fatal(err)
	}
	inv, err := b.ho.SendDraft(b.ctx, b.agent, id, b.draftDigest(id))
	if err != nil {
		t.Fatal(err)
	}
	if inv.State != controlplane.AwaitingApproval {
		t.Fatalf("the draft sent on is %s, want awaiting approval (stage 3)", inv.State)
	}
	if _, err := staffApprove(b.ctx, b.cp, b.agent, inv.ID, inv.Version); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("the person who sent it on approves it: %v, want forbidden", err)
	}
	if got, err := staffApprove(b.ctx, b.cp, b.agent2, inv.ID, inv.Version); err != nil || got.State != controlplane.Approved {
		t.Errorf("another agent approves: %v, %v", got.State, err)
	}
}

func TestHandoffsMadeAtOnceAreAllCountedAndClosingEmptiesTheQueue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// No task: hand-offs of one task made at once also wait on the task
	// list's lock of the task, which is not what this counts.
	task := controlplane.Task{ConversationID: "conv-at-once"}
	b.handOff(task, map[string]any{"summary": "First."})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.handOff(task, map[string]any{"summary": "Again."})
		}()
	}
	wg.Wait()
	if n := b.countRows(`SELECT n FROM handoff_queue WHERE conversation_id = $1`, task.ConversationID); n != 9 {
		t.Errorf("the conversation's queue row counts %d hand-offs, want 9", n)
	}
	latest := b.countRows(`SELECT max(id)::int FROM conversation_events WHERE conversation_id = $1`, task.ConversationID)
	if err := b.ho.Close(b.ctx, b.agent, int64(latest), handoffs.GivenBack, "Ask which order."); err != nil {
		t.Fatal(err)
	}
	if n := b.countRows(`SELECT (SELECT count(*) FROM handoff_queue WHERE conversation_id = $1) + (SELECT count(*) FROM handoffs_open WHERE conversation_id = $1)`,
		task.ConversationID); n != 0 {
		t.Errorf("%d rows of the closed conversation are still open or queued", n)
	}
}
