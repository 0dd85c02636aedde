package lists

import (
	"context"

	"countersign/internal/controlplane"
	"countersign/store"
)

// TaskFilter selects a page of the agents' task list: the store's filter,
// named here because web names no store type (docs/architecture.md,
// "Layers"). TaskList sets its Now from the lists' clock.
type TaskFilter = store.TaskListFilter

// TaskCursor is where a page of the task list ended (the store's cursor).
type TaskCursor = store.TaskCursor

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

// TaskPage is one page of the task list, its counts, and where the next
// page starts (nil on the last page).
type TaskPage struct {
	Items  []TaskItem
	Counts store.TaskListCounts
	Next   *TaskCursor
}

// TaskList returns a page of the agents' task list, tasks that need a
// person first, with the counts that say how much there is.
func (s *Service) TaskList(ctx context.Context, f TaskFilter) (TaskPage, error) {
	want := pageSize(f.Limit)
	f.Now, f.Limit = s.now(), want+1
	rows, err := s.store.TaskList(ctx, f)
	if err != nil {
		return TaskPage{}, err
	}
	f.Limit = want
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
	if page.Counts, err = s.store.TaskListCounts(ctx, f); err != nil {
		return TaskPage{}, err
	}
	return page, nil
}

// Tasks lists the tasks a search finds, those with unverified or
// not-dispatched work first.
func (s *Service) Tasks(ctx context.Context, f store.TaskFilter) ([]controlplane.Task, error) {
	rows, err := s.store.Tasks(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]controlplane.Task, len(rows))
	for i, r := range rows {
		out[i] = controlplane.TaskFromRow(r)
	}
	return out, nil
}
