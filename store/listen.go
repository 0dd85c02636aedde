package store

import (
	"context"
	"fmt"
	"time"
)

// The PostgreSQL NOTIFY channels, all in one place. Tx.Notify sends on
// them, a trigger in the migrations sends on TaskEventsChannel, and Listen
// follows them.
const (
	// TaskEventsChannel carries the task id of every new event of a task
	// (a trigger on events sends it); live task pages follow it.
	TaskEventsChannel = "countersign_task_events"
	// DispatchChannel wakes dispatchers when an invocation is approved or
	// its task changed; the payload is an invocation or task id.
	DispatchChannel = "countersign_dispatch"
	// InvocationsChannel carries the id of every invocation whose state
	// changed (TransitionInvocation sends it once the change commits);
	// the API's long polls (?wait=) and the MCP wait_for_outcome follow it.
	InvocationsChannel = "countersign_invocations"
)

// Bounds of the wait before Listen listens again after a failure.
const (
	relistenMin = 100 * time.Millisecond
	relistenMax = 5 * time.Second
)

// Listen holds one connection LISTENing on channel and calls fn with the
// payload of each notification until ctx ends. A failed connection (a
// restarted database, a terminated backend) is listened on again after a
// wait that doubles from 100ms up to 5s and starts over once a LISTEN is
// in force; notifications sent in between are lost, so callers that must
// not miss work also poll. status, if not nil, is called with a nil error
// each time a LISTEN is in force, and with the error and the wait before
// the next attempt each time listening failed.
func (s *Store) Listen(ctx context.Context, channel string, fn func(payload string), status func(err error, retry time.Duration)) {
	if status == nil {
		status = func(error, time.Duration) {}
	}
	wait := relistenMin
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, channel, fn, func() {
			wait = relistenMin
			status(nil, 0)
		})
		if ctx.Err() != nil {
			return
		}
		status(err, wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, relistenMax)
	}
}

// listenOnce listens on one connection until it fails or ctx ends.
func (s *Store) listenOnce(ctx context.Context, channel string, fn func(string), listening func()) error {
	conn, err := s.sessions.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store.Listen(%q): %w", channel, err)
	}
	defer conn.Release()
	// A listening connection must never go back to the pool: whoever took
	// it next would receive this channel's notifications. Closed, the pool
	// discards it on release.
	defer conn.Conn().Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return fmt.Errorf("store.Listen(%q): %w", channel, err)
	}
	listening()
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("store.Listen(%q): %w", channel, err)
		}
		fn(n.Payload)
	}
}
