package assistants

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"countersign/internal/apperr"
	"countersign/store"
)

// Intent is what a customer's request was, as the assistant judged it.
// The values mirror the CHECK constraint on conversation_events.intent.
type Intent string

// The intents.
const (
	IntentInformational     Intent = "informational"
	IntentDiagnostic        Intent = "diagnostic"
	IntentNavigational      Intent = "navigational"
	IntentTransactionalLow  Intent = "transactional_low"
	IntentTransactionalHigh Intent = "transactional_high"
	IntentAmbiguous         Intent = "ambiguous"
	IntentOutOfScope        Intent = "out_of_scope"
)

// Intents lists every intent.
var Intents = []Intent{IntentInformational, IntentDiagnostic, IntentNavigational, IntentTransactionalLow,
	IntentTransactionalHigh, IntentAmbiguous, IntentOutOfScope}

// Mode is what the assistant did with the request. The values mirror the
// CHECK constraint on conversation_events.mode.
type Mode string

// The modes.
const (
	ModeAnswered        Mode = "answered"
	ModeReadAndAnswered Mode = "read_and_answered"
	ModeLinked          Mode = "linked"
	ModeClarified       Mode = "clarified"
	ModeProposed        Mode = "proposed"
	ModeExecuted        Mode = "executed"
	ModeHandedOff       Mode = "handed_off"
	ModeResolved        Mode = "resolved"
)

// Modes lists every mode.
var Modes = []Mode{ModeAnswered, ModeReadAndAnswered, ModeLinked, ModeClarified, ModeProposed, ModeExecuted,
	ModeHandedOff, ModeResolved}

// WouldPropose is, in a hand-off, the write the assistant would have
// proposed had it been allowed to.
type WouldPropose struct {
	Action string          `json:"action"`
	Args   json.RawMessage `json:"args,omitempty"`
}

// Event is what an assistant reports about one request of a conversation.
// Summary, Facts and WouldPropose are kept in the row's data under the keys
// "summary", "facts" and "would_propose"; the agents' hand-off list reads
// them from rows with mode handed_off.
type Event struct {
	ID             int64          `json:"id"`
	ConversationID string         `json:"conversation_id"`
	AssistantID    string         `json:"assistant_id"`
	TaskID         string         `json:"task_id,omitempty"`
	Intent         Intent         `json:"intent"`
	Mode           Mode           `json:"mode"`
	At             time.Time      `json:"at"`
	Summary        string         `json:"summary,omitempty"`
	Facts          map[string]any `json:"facts,omitempty"`
	WouldPropose   *WouldPropose  `json:"would_propose,omitempty"`
}

// eventData is the jsonb data of a conversation event.
type eventData struct {
	Summary      string         `json:"summary,omitempty"`
	Facts        map[string]any `json:"facts,omitempty"`
	WouldPropose *WouldPropose  `json:"would_propose,omitempty"`
}

// Record appends a conversation event for the assistant. A wrong intent or
// mode, a missing conversation id, or a hand-off without a summary is an
// invalid-input error naming the field; a task that is not this
// assistant's is not found. An event past MaxEventBytes is too large, and
// one past the assistant's or the conversation's bound (EventLimits) is
// limit-reached with the seconds to wait. The event is the assistant's
// claim: it counts in the business's metrics only when the conversation
// has a task of this assistant whose customer the business vouched for
// (or an admin's grant, Grants.ReportsWithoutTask). The first event (or task) of a conversation id
// makes it the assistant's; another assistant's conversation is not found.
// A hand-off is recorded only within the hand-off limits (recordHandoff).
func (s *Service) Record(ctx context.Context, a Assistant, e Event) (Event, error) {
	fields := map[string]string{}
	e.ConversationID = strings.TrimSpace(e.ConversationID)
	if e.ConversationID == "" || len(e.ConversationID) > 200 {
		fields["conversation_id"] = "required: your conversation's id (at most 200 characters)"
	}
	if !validIntent(e.Intent) {
		fields["intent"] = "use one of: " + joinValues(Intents)
	}
	if !validMode(e.Mode) {
		fields["mode"] = "use one of: " + joinValues(Modes)
	}
	if e.Mode == ModeHandedOff && strings.TrimSpace(e.Summary) == "" {
		fields["summary"] = "a hand-off needs a summary the agent can read instead of the transcript"
	}
	if len(e.Summary) > 4000 {
		fields["summary"] = "must be at most 4000 characters"
	}
	if e.WouldPropose != nil && strings.TrimSpace(e.WouldPropose.Action) == "" {
		fields["would_propose.action"] = "name the action you would have proposed"
	}
	if len(fields) > 0 {
		return Event{}, apperr.InvalidFields(fields)
	}
	if err := s.eventWithinLimits(ctx, a, e); err != nil {
		return Event{}, err
	}
	row := store.ConversationEvent{ConversationID: e.ConversationID, AssistantID: a.ID, Intent: string(e.Intent),
		Mode: string(e.Mode), At: s.now()}
	if e.TaskID != "" {
		t, err := s.Task(ctx, a, e.TaskID)
		if apperr.Is(err, apperr.NotFound) {
			return Event{}, apperr.InvalidFields(map[string]string{"task_id": "no such task of yours"})
		} else if err != nil {
			return Event{}, err
		}
		// A task acts for its own conversation's customer: naming another
		// conversation's task would have a person act for someone else.
		if t.ConversationID != e.ConversationID {
			return Event{}, apperr.InvalidFields(map[string]string{"task_id": "that task belongs to another conversation; name a task of this one"})
		}
		row.TaskID = &e.TaskID
	}
	// A conversation id is the assistant's that used it first; to any
	// other it does not exist, like another assistant's task.
	owner, err := s.store.ClaimConversation(ctx, e.ConversationID, a.ID, s.now())
	if err != nil {
		return Event{}, err
	}
	if owner != a.ID {
		return Event{}, &apperr.Error{Kind: apperr.NotFound, Code: "conversation_not_found", Message: "No such conversation.",
			Hint: "Report events under your own conversation's id; a conversation id another assistant uses is not yours."}
	}
	data, err := json.Marshal(eventData{Summary: e.Summary, Facts: e.Facts, WouldPropose: e.WouldPropose})
	if err != nil {
		return Event{}, apperr.InvalidFields(map[string]string{"facts": "must be a JSON object"})
	}
	row.Data = data
	saved, err := s.insertEvent(ctx, a, row) // a hand-off within its limits (handoff_limits.go)
	if err != nil {
		return Event{}, err
	}
	e.ID, e.AssistantID, e.At = saved.ID, a.ID, saved.At
	return e, nil
}

func validIntent(i Intent) bool {
	for _, v := range Intents {
		if v == i {
			return true
		}
	}
	return false
}

func validMode(m Mode) bool {
	for _, v := range Modes {
		if v == m {
			return true
		}
	}
	return false
}

func joinValues[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
