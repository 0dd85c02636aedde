package lists

import (
	"context"
	"time"

	"countersign/internal/controlplane"
	"countersign/store"
)

// TaskFilter selects a page of the agents' task list. Empty fields select
// everything.
type TaskFilter struct {
	// Query matches the start of a customer reference or conversation id,
	// or a whole task id.
	Query string
	State string
	// Action keeps tasks with at least one request of this action.
	Action string
	// Need is "" (any), "person" (needs a person), "unverified",
	// "approval", "paused", "handoff" (a hand-off nobody took) or "mine".
	Need string
	// UserID is who asks, for "mine": a card they hold or a hand-off they
	// took.
	UserID int64
	// After is where the previous page ended; nil for the first page.
	After *TaskCursor
	// Limit is the page's size: 50 unless between 1 and 200.
	Limit int
}

// TaskCursor is where a page of the task list ended. The list's order is
// rank (0 a result needs checking, 1 something else needs a person,
// 2 active, 3 ended), then the newest change first, then the id. It has
// the store's cursor's fields, so each converts to the other and the
// compiler keeps the two in step.
type TaskCursor struct {
	Rank      int32
	UpdatedAt time.Time
	ID        string
}

// TaskItem is a task in the agents' list with what it needs from a person.
type TaskItem struct {
	controlplane.Task
	Unverified       int
	AwaitingApproval int
	AwaitingCustomer int
	// HandoffsWaiting counts hand-offs of the task nobody took.
	HandoffsWaiting int
	// Mine is true when the asking person holds one of its cards or took
	// one of its hand-offs.
	Mine bool
	// NeedsPerson: a result to check, a card to approve, a pause to lift
	// or end, or a hand-off to take.
	NeedsPerson bool
	// FirstTitle, FirstAction and FirstTarget are its first request (the
	// quote's title, "" when not recorded; its action; its object in
	// words), Requests how many it has: what the list titles it by.
	FirstTitle, FirstAction, FirstTarget string
	Requests                             int
}

// TaskCounts are the task list's totals: Total and Before (the tasks ahead
// of the page) for the filtered list, the rest per filter under the search
// alone. It has the store's fields and converts from them, as TaskCursor.
type TaskCounts struct {
	Total, Before                                                 int64
	All, NeedsPerson, Unverified, Approval, Paused, Handoff, Mine int64
	Active, PausedState, Cancelled, Closed                        int64
	// Actions counts tasks per action of their requests.
	Actions map[string]int64
}

// TaskPage is one page of the task list, its counts, and where the next
// page starts (nil on the last page).
type TaskPage struct {
	Items  []TaskItem
	Counts TaskCounts
	Next   *TaskCursor
}

// TaskList returns a page of the agents' task list, tasks that need a
// person first, with the counts that say how much there is.
func (s *Service) TaskList(ctx context.Context, f TaskFilter) (TaskPage, error) {
	want := pageSize(f.Limit)
	sf := store.TaskListFilter{Query: f.Query, State: f.State, Action: f.Action, Need: f.Need, UserID: f.UserID,
		Now: s.now(), After: (*store.TaskCursor)(f.After), Limit: want + 1}
	rows, err := s.store.TaskList(ctx, sf)
	if err != nil {
		return TaskPage{}, err
	}
	sf.Limit = want
	var page TaskPage
	if len(rows) > want {
		rows = rows[:want]
		last := rows[want-1]
		page.Next = &TaskCursor{Rank: last.Rank, UpdatedAt: last.UpdatedAt, ID: last.ID}
	}
	for _, r := range rows {
		page.Items = append(page.Items, TaskItem{Task: controlplane.TaskFromRow(r.Task), Unverified: int(r.Unverified),
			AwaitingApproval: int(r.AwaitingApproval), AwaitingCustomer: int(r.AwaitingCustomer),
			HandoffsWaiting: int(r.HandoffsWaiting), Mine: r.Mine, NeedsPerson: r.Rank <= 1,
			FirstTitle: r.FirstTitle, FirstAction: r.FirstAction, FirstTarget: r.FirstTarget, Requests: int(r.Requests)})
	}
	counts, err := s.store.TaskListCounts(ctx, sf)
	if err != nil {
		return TaskPage{}, err
	}
	page.Counts = TaskCounts(counts)
	return page, nil
}

// TaskSearch finds tasks by customer, conversation or id.
type TaskSearch struct {
	// Query matches the start of a customer reference or conversation id,
	// or a whole task id.
	Query string
	State controlplane.TaskState
	Limit int
}

// Tasks lists the tasks a search finds, those with unverified or
// not-dispatched work first.
func (s *Service) Tasks(ctx context.Context, f TaskSearch) ([]controlplane.Task, error) {
	rows, err := s.store.Tasks(ctx, store.TaskFilter{Query: f.Query, State: string(f.State), Limit: f.Limit})
	if err != nil {
		return nil, err
	}
	out := make([]controlplane.Task, len(rows))
	for i, r := range rows {
		out[i] = controlplane.TaskFromRow(r)
	}
	return out, nil
}
