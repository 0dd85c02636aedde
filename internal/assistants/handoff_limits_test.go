package assistants_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"countersign/internal/apperr"
	"countersign/internal/assistants"
	"countersign/internal/racetest"
	"countersign/store"
)

// handoffBundle is an assistant with a task in each of the conversations
// the tests hand off.
type handoffBundle struct {
	svc *assistants.Service
	st  *store.Store
	a   assistants.Assistant
}

func setupHandoffs(t *testing.T) *handoffBundle {
	t.Helper()
	svc, st, _ := setup(t)
	a, err := svc.Create(context.Background(), nil, "flood-bot")
	if err != nil {
		t.Fatal(err)
	}
	return &handoffBundle{svc: svc, st: st, a: a}
}

// openTasks gives the assistant a task in each conversation prefix-0 …
// prefix-(n-1).
func (b *handoffBundle) openTasks(t *testing.T, prefix string, n int) {
	t.Helper()
	if _, err := b.st.Pool().Exec(context.Background(), `
		INSERT INTO tasks (id, assistant_id, customer_ref, conversation_id, allowed_actions, write_budget, inflight_limit,
			rate_per_minute, expires_at, state, created_at, updated_at)
		SELECT 'task-' || $1 || i, $2, 'c' || i || '@example.test', $1 || i, '{}', 1, 1, 1, now() + interval '1 day', 'active', now(), now()
		FROM generate_series(0, $3 - 1) i`, prefix+"-", b.a.ID, n); err != nil {
		t.Fatal(err)
	}
}

func (b *handoffBundle) handOff(conversation string) error {
	_, err := b.svc.Record(context.Background(), b.a, assistants.Event{ConversationID: conversation,
		Intent: assistants.IntentTransactionalHigh, Mode: assistants.ModeHandedOff, Summary: "Wants a person."})
	return err
}

// waiting counts the assistant's conversations waiting for a person, and
// its open hand-off events.
func (b *handoffBundle) waiting(t *testing.T) (conversations, events int) {
	t.Helper()
	err := b.st.Pool().QueryRow(context.Background(), `SELECT (SELECT count(*) FROM handoff_queue WHERE assistant_id = $1 AND taken_by IS NULL),
		(SELECT count(*) FROM handoffs_open WHERE assistant_id = $1)`, b.a.ID).Scan(&conversations, &events)
	if err != nil {
		t.Fatal(err)
	}
	return conversations, events
}

// TestAHandoffNeedsATaskOfItsConversation: a made-up conversation id, or
// one whose task is another assistant's, cannot reach a person.
func TestAHandoffNeedsATaskOfItsConversation(t *testing.T) {
	t.Parallel()
	b := setupHandoffs(t)
	err := b.handOff("made-up-1")
	var e *apperr.Error
	if !apperr.Is(err, apperr.Invalid) || !asAppErr(err, &e) || e.Code != "handoff_needs_task" ||
		e.Fields["conversation_id"] == "" || e.Hint == "" {
		t.Fatalf("a hand-off without a task: %v, want invalid handoff_needs_task naming conversation_id", err)
	}
	b.openTasks(t, "real", 1)
	if err := b.handOff("real-0"); err != nil {
		t.Fatalf("a hand-off of a conversation with a task: %v", err)
	}
	if n, _ := b.waiting(t); n != 1 {
		t.Errorf("%d conversations waiting, want the one with a task", n)
	}
}

// TestRacedHandoffsOfOneConversationOpenOneRound: hand-offs of one
// conversation made at once, the assistant one short of its bound, are one
// round — every one answered, one conversation waiting — and they take
// one place of the bound, not one each.
func TestRacedHandoffsOfOneConversationOpenOneRound(t *testing.T) {
	t.Parallel()
	b := setupHandoffs(t)
	b.openTasks(t, "conv", assistants.MaxWaitingHandoffs+1)
	for i := range assistants.MaxWaitingHandoffs - 1 {
		if err := b.handOff(fmt.Sprint("conv-", i)); err != nil {
			t.Fatal(err)
		}
	}
	last := fmt.Sprint("conv-", assistants.MaxWaitingHandoffs-1)
	const n = 12
	for i, err := range racetest.Run(n, func(int) error { return b.handOff(last) }) {
		if err != nil {
			t.Errorf("hand-off %d of one conversation: %v, want it joined to the open round", i, err)
		}
	}
	if conv, events := b.waiting(t); conv != assistants.MaxWaitingHandoffs || events != assistants.MaxWaitingHandoffs-1+n {
		t.Errorf("%d conversations (%d hand-offs) waiting, want %d (%d)", conv, events, assistants.MaxWaitingHandoffs, assistants.MaxWaitingHandoffs-1+n)
	}
	var rounds int
	if err := b.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM handoff_queue WHERE conversation_id = $1`, last).Scan(&rounds); err != nil || rounds != 1 {
		t.Errorf("%s has %d open rounds (%v), want one", last, rounds, err)
	}
	// At the bound, the open round still takes what changed; a new
	// conversation does not open.
	if err := b.handOff(last); err != nil {
		t.Errorf("a hand-off joining an open round at the bound: %v", err)
	}
	if err := b.handOff(fmt.Sprint("conv-", assistants.MaxWaitingHandoffs)); !apperr.Is(err, apperr.LimitReached) {
		t.Errorf("a new conversation past the bound: %v, want limit reached", err)
	}
}

// TestRacedHandoffsStopAtTheAssistantsBound: hand-offs of many
// conversations made at once stop at MaxWaitingHandoffs waiting, each
// refused one answered limit reached with what to tell the customer.
func TestRacedHandoffsStopAtTheAssistantsBound(t *testing.T) {
	t.Parallel()
	b := setupHandoffs(t)
	const before, n = assistants.MaxWaitingHandoffs - 5, 16
	b.openTasks(t, "old", before)
	b.openTasks(t, "new", n)
	for i := range before {
		if err := b.handOff(fmt.Sprint("old-", i)); err != nil {
			t.Fatal(err)
		}
	}
	var opened, refused int
	for i, err := range racetest.Run(n, func(i int) error { return b.handOff(fmt.Sprint("new-", i)) }) {
		var e *apperr.Error
		switch {
		case err == nil:
			opened++
		case apperr.Is(err, apperr.LimitReached) && asAppErr(err, &e) && e.Code == "handoff_limit" && e.Hint != "":
			refused++
		default:
			t.Errorf("hand-off %d: %v", i, err)
		}
	}
	if opened != 5 || refused != n-5 {
		t.Errorf("%d opened and %d refused, want 5 and %d", opened, refused, n-5)
	}
	if conv, _ := b.waiting(t); conv != assistants.MaxWaitingHandoffs {
		t.Errorf("%d conversations waiting, want the bound %d", conv, assistants.MaxWaitingHandoffs)
	}
}

func asAppErr(err error, e **apperr.Error) bool { return errors.As(err, e) }
