package assistants

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"countersign/internal/apperr"
	"countersign/store"
)

// The bounds on the conversation events an assistant reports. Events are
// the assistant's own claims and cost the business storage, roll-up time
// and, for hand-offs, people's attention; the bounds are far above what
// one assistant serving real customers reports, and far below a flood.
const (
	// EventsPerAssistantMinute bounds an assistant's events in a minute,
	// whatever its keys and console instances: 300 is two and a half
	// times what one API key may send a minute through one instance
	// (-api-rate, 120), so an assistant spread over a few instances is not
	// cut short, while a flood stops within the minute.
	EventsPerAssistantMinute = 300
	// EventsPerAssistantHour bounds an assistant's events in an hour:
	// 6,000 is 100 a minute kept up for the hour, some 2,000 conversations
	// of three requests, more than a busy support desk answers in an hour.
	// It stops the minute's bound being used all day (432,000 events).
	EventsPerAssistantHour = 6000
	// EventsPerConversationHour bounds the events of one conversation in
	// an hour: a person asks an assistant a few things in a conversation,
	// not 60 in an hour, so more is made up and only fills the record.
	EventsPerConversationHour = 60
	// MaxEventBytes bounds the whole of an event as sent and as kept (its
	// summary, facts and would_propose together, each also bounded on its
	// own): 32 KiB holds the longest summary, the largest facts and the
	// largest arguments written in plain text; it stops a body of every
	// field at its limit in wide characters, or padded out, being kept.
	MaxEventBytes = 32 << 10
)

// EventBound names a bound a conversation event counts against, as a
// refused event's details.bound tells the assistant.
type EventBound string

// The bounds, each a count in a clock window (see the limits above).
const (
	// BoundAssistantMinute: the assistant's events in this minute.
	BoundAssistantMinute EventBound = "assistant_minute"
	// BoundAssistantHour: the assistant's events in this hour.
	BoundAssistantHour EventBound = "assistant_hour"
	// BoundConversationHour: one conversation's events in this hour.
	BoundConversationHour EventBound = "conversation_hour"
)

// EventLimits are the bounds the service applies to conversation events;
// DefaultEventLimits unless a test sets others (SetEventLimits).
type EventLimits struct {
	PerAssistantMinute  int
	PerAssistantHour    int
	PerConversationHour int
}

// DefaultEventLimits are the bounds of the constants above.
var DefaultEventLimits = EventLimits{PerAssistantMinute: EventsPerAssistantMinute,
	PerAssistantHour: EventsPerAssistantHour, PerConversationHour: EventsPerConversationHour}

// SetEventLimits replaces the bounds on conversation events (a zero field
// keeps its default). It is called while wiring, before the service
// answers requests.
func (s *Service) SetEventLimits(l EventLimits) {
	d := DefaultEventLimits
	if l.PerAssistantMinute > 0 {
		d.PerAssistantMinute = l.PerAssistantMinute
	}
	if l.PerAssistantHour > 0 {
		d.PerAssistantHour = l.PerAssistantHour
	}
	if l.PerConversationHour > 0 {
		d.PerConversationHour = l.PerConversationHour
	}
	s.eventLimits = &d
}

func (s *Service) limits() EventLimits {
	if s.eventLimits == nil {
		return DefaultEventLimits
	}
	return *s.eventLimits
}

// EventTooLarge is the refusal of an event of more than MaxEventBytes.
func EventTooLarge() error {
	return &apperr.Error{Kind: apperr.TooLarge, Code: "event_too_large",
		Message: fmt.Sprintf("This conversation event is larger than %d KiB, the most an event may be.", MaxEventBytes>>10),
		Hint:    "Report what happened in a short summary and the few facts a person needs; the transcript stays with you."}
}

// eventWithinLimits refuses an event past its size, and counts it against
// the assistant's minute and hour and the conversation's hour, in
// PostgreSQL so that every console instance and racing request shares the
// count. An event refused by a bound counts in none; one refused after
// this (another assistant's conversation id) has counted, like any
// request the assistant makes.
func (s *Service) eventWithinLimits(ctx context.Context, a Assistant, e Event) error {
	data, _ := json.Marshal(eventData{Summary: e.Summary, Facts: e.Facts, WouldPropose: e.WouldPropose})
	if len(data) > MaxEventBytes {
		return EventTooLarge()
	}
	l, now := s.limits(), s.now()
	windows := []struct {
		size   time.Duration
		window store.EventWindow
	}{
		{time.Minute, store.EventWindow{Bound: string(BoundAssistantMinute), Key: a.ID, Cap: l.PerAssistantMinute}},
		{time.Hour, store.EventWindow{Bound: string(BoundAssistantHour), Key: a.ID, Cap: l.PerAssistantHour}},
		{time.Hour, store.EventWindow{Bound: string(BoundConversationHour), Key: a.ID + "/" + e.ConversationID, Cap: l.PerConversationHour}},
	}
	ws := make([]store.EventWindow, len(windows))
	for i, w := range windows {
		ws[i] = w.window
		ws[i].Start = now.UTC().Truncate(w.size)
	}
	full, err := s.store.TakeEventWindows(ctx, ws)
	if err != nil || full < 0 {
		return err
	}
	w := windows[full]
	wait := int(math.Ceil(ws[full].Start.Add(w.size).Sub(now).Seconds()))
	per := "a minute"
	if w.size == time.Hour {
		per = "an hour"
	}
	e2 := &apperr.Error{Kind: apperr.LimitReached, Retryable: true, RetryAfterSeconds: max(wait, 1),
		Details: map[string]any{"bound": w.window.Bound, "limit": w.window.Cap}}
	if EventBound(w.window.Bound) == BoundConversationHour {
		e2.Code = "conversation_event_limit"
		e2.Message = fmt.Sprintf("This conversation has had %d events reported in this hour, the most one conversation may.", w.window.Cap)
		e2.Hint = "Report one event for each of the customer's requests, when you have dealt with it; " +
			"wait for the number of seconds in Retry-After before reporting on this conversation again."
		return e2
	}
	e2.Code = "event_rate_limited"
	e2.Message = fmt.Sprintf("This assistant has reported %d conversation events in this window, the most it may %s.", w.window.Cap, per)
	e2.Hint = "Wait for the number of seconds in Retry-After, then report again. What you report is kept as your " +
		"report; it counts in the business's metrics only for conversations with a task whose customer the business vouched for."
	return e2
}
