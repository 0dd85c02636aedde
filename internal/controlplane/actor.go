package controlplane

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"countersign/store"
)

// ActorKind says who did something; mirrored by the CHECK on events.
type ActorKind string

// The kinds of actor.
const (
	ActorCustomer  ActorKind = "customer"
	ActorUser      ActorKind = "user" // a console user: agent, manager or admin
	ActorAssistant ActorKind = "assistant"
	ActorPolicy    ActorKind = "policy"
	ActorSystem    ActorKind = "system"
)

// Actor is who asks for a change: the audit trail names them.
type Actor struct {
	Kind ActorKind
	// ID is the user id, the customer reference, the assistant id, or the
	// policy's name.
	ID string
	// UserID is set for console users.
	UserID int64
	// Role is the console user's role ("agent", "manager", "admin").
	Role string
	// Name is for people reading the timeline.
	Name string
	// Proof is how a customer showed they are the customer ("code",
	// "account", "assertion"); a customer's confirmation or decline
	// without one is refused. The audit trail records it.
	Proof string
	// ProvedFor is the request (invocation id) a code or an assertion was
	// made on: such a proof decides that request and its re-quotes only.
	// Empty for the customer's signed-in account, which spans their
	// requests (CustomerProvedOn).
	ProvedFor string
	// Locale is the language a customer read the page they decided on
	// (a BCP 47 tag, internal/locale) and LocaleFrom the step of the
	// order that chose it ("business", "switch", "header", "default",
	// "fallback"); the audit trail records both. Empty for other actors.
	Locale, LocaleFrom string
	// Via is set when a console user acted from outside the console (a
	// Slack message): the audit event records where and as whom there.
	Via *Via
	// KeyID is the API key an assistant acted with, set by the API and the
	// MCP server: a write it asks for is recorded only if that key is
	// still live, and its assistant still enabled, in the write's own
	// transaction (mayRecord). Empty when the assistant acted without one
	// (the console's own callers, tests).
	KeyID string
	// GrantID is the OAuth grant whose access token an assistant acted
	// with (a hosted client a person connected), set by the MCP server
	// when KeyID is empty: a write it asks for is recorded only while the
	// grant is live, in the write's own transaction, as for a key.
	GrantID string
	// Identified is how a console user proved who they are (the session's
	// sign-in, or Slack); the audit event records it, "unknown" when unset.
	Identified Identification
	// AccountableUserID, set for an operator's own assistant (a client a
	// person connected to act as themselves), is the console user it acts
	// for: every event it records names them ("accountable_user_id",
	// "accountable"), and they never approve what it proposed
	// (approveAsStaff). AccountableName is their name.
	AccountableUserID int64
	AccountableName   string
}

// Via is where a console user acted when it was not the console: the
// channel ("slack"), the conversation there and the user's identity there.
type Via struct {
	Channel      string `json:"channel"`
	Conversation string `json:"conversation,omitempty"`
	User         string `json:"user,omitempty"`
}

// UserActor is a console user acting.
func UserActor(id int64, role, name string) Actor {
	return Actor{Kind: ActorUser, ID: strconv.FormatInt(id, 10), UserID: id, Role: role, Name: name}
}

// CustomerActor is the end customer acting on the confirmation page, who
// proved who they are with proof ("code", "account" or "assertion").
func CustomerActor(customerRef, proof string) Actor {
	return Actor{Kind: ActorCustomer, ID: customerRef, Name: customerRef, Proof: proof}
}

// AssistantActor is an assistant program acting through the API.
func AssistantActor(id, name string) Actor { return Actor{Kind: ActorAssistant, ID: id, Name: name} }

// SystemActor is the control plane itself (sweepers, dispatch).
var SystemActor = Actor{Kind: ActorSystem, ID: "countersign", Name: "Countersign"}

// record appends an event in the transaction of the change it records.
func (s *Service) record(ctx context.Context, tx *store.Tx, actor Actor, action EventAction, taskID, invocationID string, data map[string]any) error {
	e, err := s.event(actor, action, taskID, invocationID, data)
	if err != nil {
		return err
	}
	_, err = tx.InsertEvent(ctx, e)
	return err
}

// entry is one event of a recordAll.
type entry struct {
	actor              Actor
	action             EventAction
	taskID, invocation string
	data               map[string]any
}

// recordAll writes entries as record would, in their order, in one
// statement.
func (s *Service) recordAll(ctx context.Context, tx *store.Tx, entries ...entry) error {
	events := make([]store.Event, 0, len(entries))
	for _, x := range entries {
		e, err := s.event(x.actor, x.action, x.taskID, x.invocation, x.data)
		if err != nil {
			return err
		}
		events = append(events, e)
	}
	return tx.InsertEvents(ctx, events)
}

// event is the audit row record writes, at the service's now.
func (s *Service) event(actor Actor, action EventAction, taskID, invocationID string, data map[string]any) (store.Event, error) {
	return AuditEvent(s.now(), actor, action, taskID, invocationID, data)
}

// AuditEvent is the audit row of actor's change at at: the actor's name,
// proof and channel in its data. The control plane records its own
// changes with it; it is exported for the services that record theirs in
// the same audit trail (internal/handoffs), so every event names its actor
// the same way.
func AuditEvent(at time.Time, actor Actor, action EventAction, taskID, invocationID string, data map[string]any) (store.Event, error) {
	if data == nil {
		data = map[string]any{}
	}
	if actor.Name != "" {
		data["actor_name"] = actor.Name
	}
	if actor.Proof != "" {
		data["proof"] = actor.Proof
	}
	if actor.ProvedFor != "" {
		data["proved_for"] = actor.ProvedFor
	}
	if actor.Locale != "" {
		data["locale"] = actor.Locale
		data["locale_from"] = actor.LocaleFrom
	}
	if actor.Via != nil {
		data["via"] = *actor.Via
	}
	if actor.Kind == ActorUser {
		data["identified_by"] = actor.Identified.recorded()
	}
	if actor.AccountableUserID != 0 {
		data["accountable_user_id"] = strconv.FormatInt(actor.AccountableUserID, 10)
		data["accountable"] = actor.AccountableName
	}
	b, err := json.Marshal(data)
	if err != nil {
		return store.Event{}, err
	}
	e := store.Event{At: at, ActorKind: string(actor.Kind), ActorID: actor.ID, Action: string(action), Data: b}
	if taskID != "" {
		e.TaskID = &taskID
	}
	if invocationID != "" {
		e.InvocationID = &invocationID
	}
	return e, nil
}
