package lists

import (
	"context"
	"encoding/json"
	"time"

	"countersign/store"
)

// HandoffFilter selects a page of hand-off groups: the store's filter,
// named here because web names no store type.
type HandoffFilter = store.HandoffFilter

// HandoffCursor is where a page of hand-offs ended (the store's cursor).
type HandoffCursor = store.HandoffCursor

// HandoffGroup is one conversation handed to a person: its open
// hand-offs (neither resolved nor given back), shown as one piece of work:
// when the assistant should not act, handing over well is the right
// answer, and what it prepared lets the person start informed.
type HandoffGroup struct {
	// ID is the first hand-off's; LastID the latest open one's.
	ID             int64
	LastID         int64
	ConversationID string
	AssistantID    string
	TaskID         string
	// CustomerRef is the customer of its task; empty without one.
	CustomerRef string
	Intent      string
	// Count is how many times the assistant handed this off, first at At,
	// last at LastAt.
	Count  int
	At     time.Time
	LastAt time.Time
	// Summary, Facts and WouldPropose are the assistant's preparation, in
	// its latest hand-off.
	Summary      string
	Facts        json.RawMessage
	WouldPropose json.RawMessage
	// TakenBy is the user who took it; zero while nobody has.
	TakenBy     int64
	TakenByName string
}

// HandoffCounts are the hand-off list's totals (the store's counts).
type HandoffCounts = store.HandoffCounts

// floodMinimum is how many conversations one assistant must have waiting
// before the list names it as flooding: below it, everyone's show on the
// list's first screen anyway, and two or three waiting are no alarm.
const floodMinimum = 10

// Flooding returns the assistant filling the people's queue: the one with
// the most conversations waiting, when it holds more than its fair share
// (more than half of all waiting, however many assistants there are) and
// at least floodMinimum. ok is false when no assistant does.
func Flooding(c HandoffCounts) (a store.HandoffAssistant, ok bool) {
	b := c.Busiest
	if b.Waiting < floodMinimum || 2*b.Waiting <= c.Waiting {
		return store.HandoffAssistant{}, false
	}
	return b, true
}

// HandoffPage is one page of hand-off groups with the list's counts, and
// where the next page starts (nil on the last page).
type HandoffPage struct {
	Groups []HandoffGroup
	Counts HandoffCounts
	Next   *HandoffCursor
}

// HandoffsWaiting counts the conversations waiting for a person, as the
// hand-off list's "waiting" count does: the home page and the task list
// show this number.
func (s *Service) HandoffsWaiting(ctx context.Context) (int64, error) {
	return s.store.HandoffsWaiting(ctx)
}

// HandoffList returns a page of hand-off groups: waiting ones first, each
// assistant's in turn so that no assistant's flood delays another's
// customers, the longest waiting first within a turn.
func (s *Service) HandoffList(ctx context.Context, f HandoffFilter) (HandoffPage, error) {
	want := pageSize(f.Limit)
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
		page.Next = &HandoffCursor{Taken: last.Taken, Rank: last.Rank, FirstAt: last.FirstAt, ID: last.ID}
	}
	for _, r := range rows {
		page.Groups = append(page.Groups, handoffGroup(r))
	}
	if page.Counts, err = s.store.HandoffCounts(ctx, f); err != nil {
		return HandoffPage{}, err
	}
	return page, nil
}

func handoffGroup(r store.HandoffGroup) HandoffGroup {
	g := HandoffGroup{ID: r.ID, LastID: r.LastID, ConversationID: r.ConversationID, AssistantID: r.AssistantID, Intent: r.Intent,
		Count: int(r.Count), At: r.FirstAt, LastAt: r.LastAt}
	if r.TaskID != nil {
		g.TaskID = *r.TaskID
	}
	if r.CustomerRef != nil {
		g.CustomerRef = *r.CustomerRef
	}
	if r.TakenBy != nil {
		g.TakenBy = *r.TakenBy
	}
	if r.TakenByName != nil {
		g.TakenByName = *r.TakenByName
	}
	// Preparation that does not decode shows as none: the hand-off itself
	// still needs a person.
	var data struct {
		Summary      string          `json:"summary"`
		Facts        json.RawMessage `json:"facts"`
		WouldPropose json.RawMessage `json:"would_propose"`
	}
	_ = json.Unmarshal(r.Data, &data)
	g.Summary, g.Facts, g.WouldPropose = data.Summary, data.Facts, data.WouldPropose
	return g
}
