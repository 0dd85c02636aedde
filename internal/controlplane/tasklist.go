package controlplane

import (
	"context"
	"encoding/json"
	"time"

	"countersign/store"
)

// TaskListItem is a task in the agents' list with what it needs from a
// person.
type TaskListItem struct {
	Task
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
}

// TaskPage is one page of the task list, its counts, and where the next
// page starts (nil on the last page).
type TaskPage struct {
	Items  []TaskListItem
	Counts store.TaskListCounts
	Next   *store.TaskCursor
}

// TaskList returns a page of the agents' task list, tasks that need a
// person first, with the counts that say how much there is.
func (s *Service) TaskList(ctx context.Context, f store.TaskListFilter) (TaskPage, error) {
	if f.Limit <= 0 || f.Limit > 200 {
		f.Limit = 50
	}
	if f.Now.IsZero() {
		f.Now = s.now()
	}
	want := f.Limit
	f.Limit = want + 1
	rows, err := s.store.TaskList(ctx, f)
	if err != nil {
		return TaskPage{}, err
	}
	f.Limit = want
	var page TaskPage
	if len(rows) > want {
		rows = rows[:want]
		last := rows[want-1]
		page.Next = &store.TaskCursor{Rank: last.Rank, UpdatedAt: last.UpdatedAt, ID: last.ID}
	}
	for _, r := range rows {
		page.Items = append(page.Items, TaskListItem{Task: taskFromRow(r.Task), Unverified: int(r.Unverified),
			AwaitingApproval: int(r.AwaitingApproval), AwaitingCustomer: int(r.AwaitingCustomer),
			HandoffsWaiting: int(r.HandoffsWaiting), Mine: r.Mine, NeedsPerson: r.Rank <= 1})
	}
	if page.Counts, err = s.store.TaskListCounts(ctx, f); err != nil {
		return TaskPage{}, err
	}
	return page, nil
}

// HandoffGroup is a set of identical hand-offs of one conversation, shown
// as one piece of work.
type HandoffGroup struct {
	Handoff
	// Count is how many times the assistant handed this off, first at At
	// (Handoff.At), last at LastAt.
	Count  int
	LastAt time.Time
}

// HandoffPage is one page of hand-off groups with the list's counts.
type HandoffPage struct {
	Groups []HandoffGroup
	Counts store.HandoffCounts
	Next   *store.HandoffCursor
}

// HandoffList returns a page of hand-off groups: waiting ones first, the
// longest waiting first.
func (s *Service) HandoffList(ctx context.Context, f store.HandoffFilter) (HandoffPage, error) {
	if f.Limit <= 0 || f.Limit > 200 {
		f.Limit = 50
	}
	want := f.Limit
	f.Limit = want + 1
	rows, err := s.store.HandoffGroups(ctx, f)
	if err != nil {
		return HandoffPage{}, err
	}
	f.Limit = want
	var page HandoffPage
	if len(rows) > want {
		rows = rows[:want]
		last := rows[want-1]
		page.Next = &store.HandoffCursor{Taken: last.Taken, FirstAt: last.FirstAt, ID: last.ID}
	}
	for _, r := range rows {
		g := HandoffGroup{Handoff: Handoff{ID: r.ID, ConversationID: r.ConversationID, AssistantID: r.AssistantID,
			Intent: r.Intent, At: r.FirstAt}, Count: int(r.Count), LastAt: r.LastAt}
		if r.TaskID != nil {
			g.TaskID = *r.TaskID
		}
		if r.TakenBy != nil {
			g.TakenBy = *r.TakenBy
		}
		if r.TakenByName != nil {
			g.TakenByName = *r.TakenByName
		}
		var data struct {
			Summary      string          `json:"summary"`
			Facts        json.RawMessage `json:"facts"`
			WouldPropose json.RawMessage `json:"would_propose"`
		}
		_ = json.Unmarshal(r.Data, &data)
		g.Summary, g.Facts, g.WouldPropose = data.Summary, data.Facts, data.WouldPropose
		page.Groups = append(page.Groups, g)
	}
	if page.Counts, err = s.store.HandoffCounts(ctx, f); err != nil {
		return HandoffPage{}, err
	}
	return page, nil
}
