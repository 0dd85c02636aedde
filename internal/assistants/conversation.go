package assistants

import (
	"context"
	"errors"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/handoffs"
	"countersign/store"
)

// conversationLogLimit is how many of a conversation's newest events the
// hand-off status is read from.
const conversationLogLimit = 200

// Conversation is what the assistant may read back about one of its
// conversations: where its hand-off to a person stands.
type Conversation struct {
	ConversationID string `json:"conversation_id"`
	// Handoff is the latest hand-off; nil when it never handed off.
	Handoff *HandoffStatus `json:"handoff"`
}

// HandoffStatus is where a conversation's latest hand-off stands: waiting
// (nobody took it), taken, resolved or given_back (to the assistant, with
// what to do next in Note). By names the person who took or ended it.
type HandoffStatus struct {
	ID          int64      `json:"id"`
	State       string     `json:"state"`
	HandedOffAt time.Time  `json:"handed_off_at"`
	TakenAt     *time.Time `json:"taken_at"`
	ClosedAt    *time.Time `json:"closed_at"`
	By          string     `json:"by"`
	Note        string     `json:"note"`
	// TakenOver is set once a manager took the conversation over from the
	// person holding it (By is then the manager): from whom, when, why.
	TakenOver *handoffs.Takeover `json:"taken_over,omitempty"`
}

// Conversation reads one of the assistant's conversations. Another
// assistant's conversation, or an id never used, is not found.
func (s *Service) Conversation(ctx context.Context, a Assistant, id string) (Conversation, error) {
	owner, err := s.store.ConversationOwner(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && owner != a.ID) {
		return Conversation{}, &apperr.Error{Kind: apperr.NotFound, Code: "conversation_not_found", Message: "No such conversation."}
	}
	if err != nil {
		return Conversation{}, err
	}
	rows, err := s.store.ConversationLog(ctx, id, conversationLogLimit)
	if err != nil {
		return Conversation{}, err
	}
	out := Conversation{ConversationID: id}
	var holder *store.ConversationEntry
	var start time.Time
	var closedAt *time.Time // of the round before r
	round := map[int64]bool{}
	for i, r := range rows {
		if r.Mode != string(ModeHandedOff) {
			continue
		}
		// A round of hand-offs starts with the first after the previous
		// round was closed (the events one closing closed share its time).
		if out.Handoff == nil || (closedAt != nil && (r.ClosedAt == nil || !r.ClosedAt.Equal(*closedAt))) {
			start, round = r.At, map[int64]bool{}
		}
		round[r.ID] = true
		closedAt = r.ClosedAt
		out.Handoff = &HandoffStatus{ID: r.ID, State: "waiting", HandedOffAt: start}
		if r.Outcome == nil && r.TakenBy != nil && holder == nil {
			holder = &rows[i]
		}
		if r.Outcome != nil {
			holder = nil // a later hand-off starts a new round
			out.Handoff.State, out.Handoff.ClosedAt, out.Handoff.TakenAt = *r.Outcome, r.ClosedAt, r.TakenAt
			out.Handoff.By, out.Handoff.Note = deref(r.ClosedByName), deref(r.Note)
		}
	}
	if h := out.Handoff; h != nil && h.State == "waiting" && holder != nil {
		h.State, h.TakenAt, h.By = "taken", holder.TakenAt, deref(holder.TakenByName)
	}
	if out.Handoff != nil && out.Handoff.State != "waiting" {
		overs, err := s.store.HandoffTakeovers(ctx, id)
		if err != nil {
			return Conversation{}, err
		}
		for _, t := range overs {
			if round[t.HandoffID] {
				over := handoffs.TakeoverOf(t)
				out.Handoff.TakenOver = &over
			}
		}
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
