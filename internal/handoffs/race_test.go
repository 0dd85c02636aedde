package handoffs_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/racetest"
	"countersign/store"
)

// detail is PostgreSQL's DETAIL of err, if any: for a deadlock, which
// locks each transaction held and waited for.
func detail(err error) string {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Detail
	}
	return ""
}

// tryHandOff records a hand-off of the task's conversation through the
// store, as the assistant API does, and returns its error (for goroutines).
func (b *testBundle) tryHandOff(task controlplane.Task, mode, summary string) error {
	raw, _ := json.Marshal(map[string]any{"summary": summary})
	_, err := b.store.InsertConversationEvent(b.ctx, store.ConversationEvent{ConversationID: task.ConversationID,
		AssistantID: "asst_test", TaskID: &task.ID, Intent: "transactional_high", Mode: mode, At: b.clock.Now(), Data: raw})
	return err
}

// TestConcurrentHandoffsOfOneTaskAllCount: sixteen hand-offs of one task
// recorded at once (an assistant's parallel tool calls) all land and are
// all counted, by the task list and by the hand-off queue. Each insert
// took the task's row as the foreign key's (KEY SHARE), then the
// conversation's queue lock, then the task's row for its count (FOR
// UPDATE): two of them deadlocked, each holding what the other waited for.
func TestConcurrentHandoffsOfOneTaskAllCount(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.handOff(controlplane.Task{ConversationID: "conv-seed"}, map[string]any{"summary": "Seeds the assistant."})
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	const n = 16
	for i, err := range racetest.Run(n, func(i int) error {
		return b.tryHandOff(task, "handed_off", fmt.Sprintf("Hand-off %d.", i))
	}) {
		if err != nil {
			t.Errorf("hand-off %d: %v\n%s", i, err, detail(err))
		}
	}
	if got := b.countRows(`SELECT handoffs_waiting FROM tasks WHERE id = $1`, task.ID); got != n {
		t.Errorf("the task counts %d hand-offs waiting, want %d", got, n)
	}
	if got := b.countRows(`SELECT coalesce((SELECT n FROM handoff_queue WHERE conversation_id = $1), 0)`, task.ConversationID); got != n {
		t.Errorf("the conversation's queue row counts %d hand-offs, want %d", got, n)
	}
}

// TestConcurrentHandoffsAndOtherWritesOfOneTask: hand-offs of one task
// raced with its conversation's other events, its proposals and a person
// taking the hand-off, as parallel tool calls and a quick agent do: none
// deadlocks or fails, and every hand-off is counted.
func TestConcurrentHandoffsAndOtherWritesOfOneTask(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 20, 20, 600)
	first := b.handOff(task, map[string]any{"summary": "First."})
	var fns []func() error
	for i := range 8 {
		fns = append(fns,
			func() error { return b.tryHandOff(task, "handed_off", fmt.Sprintf("Hand-off %d.", i)) },
			func() error { return b.tryHandOff(task, "read_and_answered", fmt.Sprintf("Answer %d.", i)) },
		)
	}
	for i := range 4 {
		o := b.order(2)
		fns = append(fns, func() error {
			_, err := b.tryPropose(task, "issue_refund", refund(o.ID, int64(100+i), "damaged"), "")
			return err
		})
	}
	// The take posts the first hand-off: one made before it lands is
	// newer, so the take may be refused as the page being out of date
	// (handoff_changed), after taking the same locks; nothing else may fail.
	take := len(fns)
	fns = append(fns, func() error { _, err := b.ho.Take(b.ctx, b.agent, first); return err })
	for i, err := range racetest.Run(len(fns), func(i int) error { return fns[i]() }) {
		var ae *apperr.Error
		if i == take && errors.As(err, &ae) && ae.Code == "handoff_changed" {
			continue
		}
		if err != nil {
			t.Errorf("write %d: %v\n%s", i, err, detail(err))
		}
	}
	// Taken, the hand-offs the take saw wait for nobody; those made after
	// it still do. Whichever came first, the counts agree with the rows.
	want := b.countRows(`SELECT count(*) FROM conversation_events e WHERE e.task_id = $1 AND e.mode = 'handed_off'
		AND NOT EXISTS (SELECT 1 FROM handoff_assignments h WHERE h.conversation_event_id = e.id)`, task.ID)
	if got := b.countRows(`SELECT handoffs_waiting FROM tasks WHERE id = $1`, task.ID); got != want {
		t.Errorf("the task counts %d hand-offs waiting, want %d", got, want)
	}
	if got := b.countRows(`SELECT coalesce((SELECT n FROM handoff_queue WHERE conversation_id = $1), 0)`, task.ConversationID); got != 9 {
		t.Errorf("the conversation's queue row counts %d hand-offs, want 9", got)
	}
	if got := b.countRows(`SELECT count(*) FROM invocations WHERE task_id = $1`, task.ID); got != 4 {
		t.Errorf("%d proposals landed, want 4", got)
	}
}

// TestHandoffMadeWhileItsConversationIsTakenWaits: a person takes the
// conversation's hand-off (the assignment's recount holds the task, then
// the queue refresh wants the conversation's lock) while the assistant
// hands off again. The new hand-off waits for the task before it takes the
// conversation's lock, so the take finishes and then the hand-off; when it
// took the conversation first, each waited for the other.
func TestHandoffMadeWhileItsConversationIsTakenWaits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	first := b.handOff(task, map[string]any{"summary": "First."})
	take, err := b.store.Pool().Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = take.Rollback(b.ctx) }()
	if _, err := take.Exec(b.ctx, `INSERT INTO handoff_assignments (conversation_event_id, user_id, taken_at) VALUES ($1, $2, now())`,
		first, b.agent.UserID); err != nil {
		t.Fatal(err)
	}
	conn, err := b.store.Pool().Acquire(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	var pid uint32
	if err := conn.QueryRow(b.ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := conn.Exec(b.ctx, `INSERT INTO conversation_events (conversation_id, assistant_id, task_id, intent, mode, at, data)
			VALUES ($1, 'asst_test', $2, 'transactional_high', 'handed_off', now(), '{"summary": "Again."}')`, task.ConversationID, task.ID)
		done <- err
	}()
	for waiting := false; !waiting; {
		if err := b.store.Pool().QueryRow(b.ctx, `SELECT coalesce(wait_event_type = 'Lock', false) FROM pg_stat_activity WHERE pid = $1`,
			pid).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("the hand-off ended (%v) while the take held its task", err)
		default:
		}
	}
	if _, err := take.Exec(b.ctx, `SELECT handoff_queue_refresh(ARRAY[$1::text])`, task.ConversationID); err != nil {
		t.Fatalf("the take's queue refresh: %v\n%s", err, detail(err))
	}
	if err := take.Commit(b.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the hand-off: %v\n%s", err, detail(err))
	}
	if got := b.countRows(`SELECT handoffs_waiting FROM tasks WHERE id = $1`, task.ID); got != 1 {
		t.Errorf("the task counts %d hand-offs waiting, want the new one", got)
	}
}
