package store

import (
	"context"
	"fmt"
)

// TaskEventsChannel is the NOTIFY channel on which every new event of a
// task announces the task's id (a trigger on events sends it).
const TaskEventsChannel = "countersign_task_events"

// ListenTaskEvents holds one connection listening on TaskEventsChannel and
// calls fn with the task id of each notification until ctx ends. ready, if
// not nil, is called once the LISTEN is in force.
func (s *Store) ListenTaskEvents(ctx context.Context, ready func(), fn func(taskID string)) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store.ListenTaskEvents: %w", err)
	}
	// A wait cancelled mid-read leaves the connection unusable; pgx closes
	// it, and the pool discards it on release.
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+TaskEventsChannel); err != nil {
		return fmt.Errorf("store.ListenTaskEvents: %w", err)
	}
	if ready != nil {
		ready()
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("store.ListenTaskEvents: %w", err)
		}
		fn(n.Payload)
	}
}
