package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Event is a row of the append-only audit table.
type Event struct {
	ID           int64           `db:"id"`
	At           time.Time       `db:"at"`
	ActorKind    string          `db:"actor_kind"`
	ActorID      string          `db:"actor_id"`
	Action       string          `db:"action"`
	TaskID       *string         `db:"task_id"`
	InvocationID *string         `db:"invocation_id"`
	Data         json.RawMessage `db:"data"`
}

const eventColumns = `id, at, actor_kind, actor_id, action, task_id, invocation_id, data`

// InsertEvent appends an event in the transaction of the change it records;
// once that commits, a task's event is announced on TaskEventsChannel.
func (t *Tx) InsertEvent(ctx context.Context, e Event) (int64, error) {
	if e.Data == nil {
		e.Data = json.RawMessage(`{}`)
	}
	var id int64
	err := t.tx.QueryRow(ctx, `
		INSERT INTO events (at, actor_kind, actor_id, action, task_id, invocation_id, data)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		e.At, e.ActorKind, e.ActorID, e.Action, e.TaskID, e.InvocationID, e.Data).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store.InsertEvent(%s): %w", e.Action, err)
	}
	if e.TaskID != nil {
		// Live task pages, in this and every other instance, follow it.
		_ = t.Notify(ctx, TaskEventsChannel, *e.TaskID)
	}
	return id, nil
}

// InsertEvents appends events in their order (their ids follow it) in one
// statement, as InsertEvent would one by one.
func (t *Tx) InsertEvents(ctx context.Context, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	n := len(events)
	at, kinds, actors, actions := make([]time.Time, n), make([]string, n), make([]string, n), make([]string, n)
	tasks, invs, data := make([]*string, n), make([]*string, n), make([]string, n)
	for i, e := range events {
		at[i], kinds[i], actors[i], actions[i], tasks[i], invs[i] = e.At, e.ActorKind, e.ActorID, e.Action, e.TaskID, e.InvocationID
		data[i] = "{}"
		if e.Data != nil {
			data[i] = string(e.Data)
		}
	}
	_, err := t.tx.Exec(ctx, `
		INSERT INTO events (at, actor_kind, actor_id, action, task_id, invocation_id, data)
		SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::jsonb[])`,
		at, kinds, actors, actions, tasks, invs, data)
	if err != nil {
		return fmt.Errorf("store.InsertEvents(%d): %w", n, err)
	}
	for _, e := range events {
		if e.TaskID != nil {
			_ = t.Notify(ctx, TaskEventsChannel, *e.TaskID)
		}
	}
	return nil
}

// EventsForTask lists a task's events (and its invocations'), oldest first.
func (s *Store) EventsForTask(ctx context.Context, taskID string) ([]Event, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+eventColumns+` FROM events WHERE task_id = $1 ORDER BY id`, taskID)
	events, err := pgx.CollectRows(rows, pgx.RowToStructByName[Event])
	if err != nil {
		return nil, fmt.Errorf("store.EventsForTask: %w", err)
	}
	return events, nil
}

// EventsForInvocation lists an invocation's events, oldest first.
func (s *Store) EventsForInvocation(ctx context.Context, invocationID string) ([]Event, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+eventColumns+` FROM events WHERE invocation_id = $1 ORDER BY id`, invocationID)
	events, err := pgx.CollectRows(rows, pgx.RowToStructByName[Event])
	if err != nil {
		return nil, fmt.Errorf("store.EventsForInvocation: %w", err)
	}
	return events, nil
}
