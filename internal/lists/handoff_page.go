package lists

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"countersign/internal/apperr"
	"countersign/store"
)

// handoffLogLimit is how many of a conversation's newest events its
// hand-off page shows.
const handoffLogLimit = 200

// HandoffState is where a conversation's hand-off stands.
type HandoffState string

// The hand-off states, as the page and the assistant's API name them.
const (
	HandoffWaiting   HandoffState = "waiting"
	HandoffTaken     HandoffState = "taken"
	HandoffResolved  HandoffState = "resolved"
	HandoffGivenBack HandoffState = "given_back"
)

// ConversationEntry is one event the assistant reported in a
// conversation, as its hand-off page shows it.
type ConversationEntry struct {
	ID     int64
	Intent string
	Mode   string
	At     time.Time
	TaskID string
	// Summary, Facts and WouldPropose are what it prepared (hand-offs).
	Summary      string
	Facts        json.RawMessage
	WouldPropose json.RawMessage
	// Data is the event's data as the assistant reported it.
	Data json.RawMessage
}

// HandoffDetail is one conversation handed to a person: what the assistant
// reported, in order, where the hand-off stands, and the write it
// prepared.
type HandoffDetail struct {
	ConversationID string
	AssistantID    string
	Entries        []ConversationEntry
	// Latest is the newest hand-off; State is where it stands.
	Latest ConversationEntry
	State  HandoffState
	// FirstOpenAt is when the open hand-offs began waiting (the latest's
	// time once closed).
	FirstOpenAt time.Time
	HolderID    int64
	HolderName  string
	TakenAt     *time.Time
	// ClosedByName, ClosedAt and Note say who ended it, once ended.
	ClosedByName string
	ClosedAt     *time.Time
	Note         string
	// TaskID is the task the latest hand-off named, else the
	// conversation's newest (the one its draft is sent on); empty when it
	// has none.
	TaskID string
	// DraftSent is the invocation the latest hand-off's draft became;
	// DraftDiscarded is set when its holder set it aside.
	DraftSent      string
	DraftDiscarded bool
	// TakenOver is the latest take-over of the hand-offs this state is
	// about (a manager took them from their holder); nil when none.
	TakenOver *store.HandoffTakeover
	// DraftSending is set once its holder sent it on (DraftSent is empty
	// while the proposal is being made).
	DraftSending bool
}

// Handoff reads the conversation hand-off id belongs to; a missing one is
// not found.
func (s *Service) Handoff(ctx context.Context, id int64) (HandoffDetail, error) {
	conv, err := s.store.HandoffConversation(ctx, id)
	if err != nil {
		return HandoffDetail{}, err
	}
	rows, err := s.store.ConversationLog(ctx, conv, handoffLogLimit)
	if err != nil {
		return HandoffDetail{}, err
	}
	d := HandoffDetail{ConversationID: conv, State: HandoffWaiting}
	var latest *store.ConversationEntry
	for i, r := range rows {
		e := entryOf(r)
		d.Entries = append(d.Entries, e)
		d.AssistantID = r.AssistantID
		if r.Mode != "handed_off" {
			continue
		}
		latest, d.Latest = &rows[i], e
		if r.Outcome == nil && (d.FirstOpenAt.IsZero() || r.At.Before(d.FirstOpenAt)) {
			d.FirstOpenAt = r.At
		}
		if r.Outcome == nil && r.TakenBy != nil && d.HolderID == 0 {
			d.HolderID, d.HolderName, d.TakenAt = *r.TakenBy, deref(r.TakenByName), r.TakenAt
		}
	}
	if latest == nil {
		return HandoffDetail{}, apperr.New(apperr.NotFound, "No such hand-off.")
	}
	switch {
	case latest.Outcome != nil:
		d.State, d.ClosedByName, d.ClosedAt, d.Note = HandoffState(*latest.Outcome), deref(latest.ClosedByName), latest.ClosedAt, deref(latest.Note)
		d.FirstOpenAt, d.HolderID, d.HolderName, d.TakenAt = latest.At, 0, deref(latest.TakenByName), latest.TakenAt
	case d.HolderID != 0:
		d.State = HandoffTaken
	}
	if d.State != HandoffWaiting {
		if d.TakenOver, err = s.takenOver(ctx, conv, rows, latest); err != nil {
			return HandoffDetail{}, err
		}
	}
	// The customer shown is the one a draft sent on acts for
	// (controlplane.heldDraft): the latest hand-off's task, else the
	// conversation's newest — never a task another event named.
	if d.TaskID = d.Latest.TaskID; d.TaskID == "" {
		if d.TaskID, err = s.store.ConversationTask(ctx, conv); err != nil && !errors.Is(err, store.ErrNotFound) {
			return HandoffDetail{}, err
		}
	}
	if len(d.Latest.WouldPropose) > 0 {
		switch o, err := s.store.HandoffDraftOutcome(ctx, d.Latest.ID); {
		case err == nil:
			d.DraftDiscarded, d.DraftSending = o.Outcome == "discarded", o.Outcome == "sent"
			d.DraftSent = o.InvocationID
		case !errors.Is(err, store.ErrNotFound):
			return HandoffDetail{}, err
		}
	}
	return d, nil
}

// takenOver finds the latest take-over of the hand-offs latest's state is
// about: the open ones, or those its closing closed.
func (s *Service) takenOver(ctx context.Context, conv string, rows []store.ConversationEntry, latest *store.ConversationEntry) (*store.HandoffTakeover, error) {
	overs, err := s.store.HandoffTakeovers(ctx, conv)
	if err != nil || len(overs) == 0 {
		return nil, err
	}
	round := map[int64]bool{}
	for _, r := range rows {
		if r.Mode == "handed_off" && ((latest.Outcome == nil && r.Outcome == nil) ||
			(latest.ClosedAt != nil && r.ClosedAt != nil && r.ClosedAt.Equal(*latest.ClosedAt))) {
			round[r.ID] = true
		}
	}
	var out *store.HandoffTakeover
	for i, t := range overs {
		if round[t.HandoffID] {
			out = &overs[i]
		}
	}
	return out, nil
}

func entryOf(r store.ConversationEntry) ConversationEntry {
	e := ConversationEntry{ID: r.ID, Intent: r.Intent, Mode: r.Mode, At: r.At, TaskID: deref(r.TaskID), Data: r.Data}
	var data struct {
		Summary      string          `json:"summary"`
		Facts        json.RawMessage `json:"facts"`
		WouldPropose json.RawMessage `json:"would_propose"`
	}
	_ = json.Unmarshal(r.Data, &data)
	e.Summary, e.Facts, e.WouldPropose = data.Summary, data.Facts, data.WouldPropose
	if string(e.WouldPropose) == "null" {
		e.WouldPropose = nil
	}
	return e
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
