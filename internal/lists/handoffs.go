package lists

import (
	"context"
	"encoding/json"
	"time"

	"countersign/store"
)

// HandoffFilter selects a page of hand-off groups. Empty fields select
// everything.
type HandoffFilter struct {
	// Status is "" (all), "waiting", "taken" or "mine" (taken by UserID).
	Status string
	Intent string
	UserID int64
	// After is where the previous page ended; nil for the first page.
	After *HandoffCursor
	// OverSince is when a conversation waiting since before it is over
	// its target (counted in HandoffCounts.OverTarget).
	OverSince time.Time
	// Limit is the page's size: 50 unless between 1 and 200.
	Limit int
}

// HandoffCursor is where a page of hand-offs ended. The list's order is
// waiting before taken, then each assistant's in turn (Rank: 1 for each
// assistant's longest waiting, 2 for its next, …), then the longest
// waiting first, then the id. It converts to the store's cursor, as
// TaskCursor.
type HandoffCursor struct {
	Taken   int32
	Rank    int64
	FirstAt time.Time
	ID      int64
}

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

// HandoffCounts are the hand-off list's totals, in conversations: Total
// and Before (the ones ahead of the page) for the filtered list, the rest
// per status; OverTarget counts the waiting ones past their target. It
// converts from the store's counts, as TaskCursor.
type HandoffCounts struct {
	Total, Before, All, Waiting, Taken, Mine, OverTarget int64
	// Intents counts waiting groups per intent.
	Intents map[string]int64
	// Busiest is the assistant with the most conversations waiting.
	Busiest store.HandoffAssistant
}

// floodMinimum is how many conversations one assistant must have waiting
// before the list names it as flooding: below it, everyone's show on the
// list's first screen anyway, and two or three waiting are no alarm.
const floodMinimum = 10

// Flooding returns the assistant filling the people's queue: the one with
// the most conversations waiting, when it holds more than its fair share
// (more than half of all waiting, however many assistants there are) and
// at least floodMinimum. ok is false when no assistant does.
func (c HandoffCounts) Flooding() (a store.HandoffAssistant, ok bool) {
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
	sf := store.HandoffFilter{Status: f.Status, Intent: f.Intent, UserID: f.UserID, After: (*store.HandoffCursor)(f.After),
		Limit: want + 1, OverSince: f.OverSince}
	rows, err := s.store.HandoffGroups(ctx, sf)
	if err != nil {
		return HandoffPage{}, err
	}
	sf.Limit = want
	var page HandoffPage
	if len(rows) > want {
		rows = rows[:want]
		last := rows[want-1]
		page.Next = &HandoffCursor{Taken: last.Taken, Rank: last.Rank, FirstAt: last.FirstAt, ID: last.ID}
	}
	for _, r := range rows {
		page.Groups = append(page.Groups, handoffGroup(r))
	}
	counts, err := s.store.HandoffCounts(ctx, sf)
	if err != nil {
		return HandoffPage{}, err
	}
	page.Counts = HandoffCounts(counts)
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
