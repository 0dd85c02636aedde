// Package lists holds the console's lists and counts: the agents' task
// list, the hand-offs, the approval queue and its badge, the work waiting
// on the home pages, and a customer's "My requests".
//
// These are reads for pages, apart from the state machine: nothing here
// changes a row or records an event, so a page that only lists things
// needs the control plane for none of it. A list's filter, cursor (keyset
// pagination: a page continues strictly after the last row of the one
// before, never by OFFSET) and counts are the store's own types, named
// here by alias where web needs them, since web names no store type; the
// rows carry the control plane's Task, Invocation and QueueCard, made from
// the database's rows by the control plane's own conversions, so a task
// reads the same on a list as in a decision.
package lists

import (
	"context"
	"time"

	"countersign/store"
)

// Store is what the lists ask of the database (*store.Store): reads only.
type Store interface {
	Tasks(ctx context.Context, f store.TaskFilter) ([]store.Task, error)
	TaskList(ctx context.Context, f store.TaskListFilter) ([]store.TaskListRow, error)
	TaskListCounts(ctx context.Context, f store.TaskListFilter) (store.TaskListCounts, error)
	HandoffGroups(ctx context.Context, f store.HandoffFilter) ([]store.HandoffGroup, error)
	HandoffCounts(ctx context.Context, f store.HandoffFilter) (store.HandoffCounts, error)
	HandoffsWaiting(ctx context.Context) (int64, error)
	HandoffConversation(ctx context.Context, id int64) (string, error)
	ConversationLog(ctx context.Context, conversationID string, limit int) ([]store.ConversationEntry, error)
	HandoffTakeovers(ctx context.Context, conversationID string) ([]store.HandoffTakeover, error)
	HandoffDraftOutcome(ctx context.Context, id int64) (store.HandoffDraftOutcome, error)
	ConversationTask(ctx context.Context, conversationID string) (string, error)
	EventsForTask(ctx context.Context, taskID string) ([]store.Event, error)
	ApprovalQueue(ctx context.Context, f store.QueueFilter) ([]store.QueueItem, error)
	CountQueue(ctx context.Context, f store.QueueFilter) (int, error)
	CountPending(ctx context.Context) (awaitingApproval, unverified int, err error)
	WaitingWork(ctx context.Context, listLimit int) (store.WaitingWork, error)
	InvocationsForCustomer(ctx context.Context, customerRef string, limit int) ([]store.Invocation, error)
}

// Service reads the console's lists and counts.
type Service struct {
	store Store
	now   func() time.Time
}

// New builds the lists over st; now is the clock that says what is past a
// deadline or held (time.Now when nil).
func New(st Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, now: now}
}

// pageSize bounds a page of the task and hand-off lists: 50 unless the
// caller asks for between 1 and 200.
func pageSize(limit int) int {
	if limit <= 0 || limit > 200 {
		return 50
	}
	return limit
}
