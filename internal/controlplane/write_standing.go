package controlplane

import (
	"fmt"
	"time"

	"countersign/internal/apperr"
	"countersign/store"
)

// write is what mayRecord checks a write against: its action, whether it
// is a compensation (authorised by its own approval, whatever the task
// lists), and the version of the policy it was routed with before its
// transaction began (0 when it is routed under the lock, with the policy
// read there).
type write struct {
	system, action string
	compensation   bool
	policyVersion  int32
}

// mayRecord is the check every path that records a write makes in the
// transaction that records it, after the dry run, with the task locked
// (task) and the rows that admitted the write share-locked (st,
// store.Standing): the task still takes writes (active, not expired) and
// still allows the action; the API key (or OAuth grant: not revoked or
// expired, its client and person standing, store.Standing.Grant) the
// actor acted with is still live and its assistant's, the assistant still
// enabled and the action still
// turned on for it; the action's policy is still on and the one the write
// was routed with. The checks made when the request began answer fast;
// this one holds, because a cancel, pause, revocation or switch that
// committed meanwhile is what it reads, and one that comes later waits
// for the write's commit. The refusals carry the early checks' codes
// (task_not_active, task_expired, action_not_allowed, action_not_enabled,
// action_disabled, customer_not_vouched) and key_revoked, token_revoked,
// assistant_disabled and policy_changed. A write made without a key on
// an assistant's task is checked against that assistant too
// (ownerStands).
func (s *Service) mayRecord(actor Actor, task store.Task, st store.Standing, w write) error {
	if err := taskTakesWrites(TaskState(task.State), task.ExpiresAt, s.now()); err != nil {
		return err
	}
	if !w.compensation && !TaskFromRow(task).Allows(w.system, w.action) {
		return notAllowed(w.action)
	}
	if actor.KeyID != "" {
		switch {
		case st.Key == nil || st.Key.RevokedAt != nil || st.Key.AssistantID != actor.ID:
			return &apperr.Error{Kind: apperr.Unauthenticated, Code: "key_revoked",
				Message: "The API key this request was made with was revoked before it was recorded; nothing was recorded.",
				Hint:    "Stop using this key; an admin issues a new one on /admin/assistants."}
		case st.Assistant == nil || st.Assistant.DisabledAt != nil:
			return &apperr.Error{Kind: apperr.Unauthenticated, Code: "assistant_disabled",
				Message: "This assistant was disabled before the request was recorded; nothing was recorded.",
				Hint:    "Hand the request to a person."}
		case !st.ActionEnabled:
			return ErrActionNotEnabled(w.action)
		}
	}
	if actor.KeyID == "" && actor.GrantID != "" {
		switch {
		case st.Grant == nil || st.Grant.RevokedAt != nil || !s.now().Before(st.Grant.ExpiresAt) || st.Grant.AssistantID != actor.ID:
			return &apperr.Error{Kind: apperr.Unauthenticated, Code: "token_revoked",
				Message: "The access token this request was made with was revoked before it was recorded; nothing was recorded.",
				Hint:    "Ask the person who connected this client to connect it again."}
		case st.Assistant == nil || st.Assistant.DisabledAt != nil:
			return &apperr.Error{Kind: apperr.Unauthenticated, Code: "assistant_disabled",
				Message: "This assistant was disabled before the request was recorded; nothing was recorded.",
				Hint:    "Hand the request to a person."}
		case !st.ActionEnabled:
			return ErrActionNotEnabled(w.action)
		}
	}
	if err := ownerStands(actor, task, st, w); err != nil {
		return err
	}
	if st.Policy == nil || !st.Policy.Enabled {
		return errActionDisabled()
	}
	if w.policyVersion != 0 && st.Policy.Version != w.policyVersion {
		return &apperr.Error{Kind: apperr.Conflict, Code: "policy_changed", Retryable: true,
			Message: "The action's policy changed while the request was being quoted; nothing was recorded.",
			Hint:    "Propose again: it is routed by the policy in force now."}
	}
	return nil
}

// taskTakesWrites refuses a write on a task that is not active or has
// expired at now.
func taskTakesWrites(state TaskState, expiresAt, now time.Time) error {
	if state != TaskActive {
		return &apperr.Error{Kind: apperr.IllegalTransition, Code: "task_not_active",
			Message: fmt.Sprintf("The task is %s; it takes no new proposals.", state),
			Hint:    "Tell the customer the work is paused, or ask a person to resume the task."}
	}
	if !now.Before(expiresAt) {
		return &apperr.Error{Kind: apperr.IllegalTransition, Code: "task_expired", Message: "The task has expired."}
	}
	return nil
}

// ErrActionNotEnabled refuses a write (or its reversal) by an assistant
// that does not have action turned on: Forbidden, code action_not_enabled.
// The API checks it when a request arrives and the control plane again
// when it records the write.
func ErrActionNotEnabled(action string) error {
	return &apperr.Error{Kind: apperr.Forbidden, Code: "action_not_enabled",
		Message: "This assistant does not have " + action + " turned on.",
		Hint:    "List the tools for this task and propose only what it offers, or hand the request to a person."}
}

// errActionDisabled refuses a write whose action its policy switched off.
func errActionDisabled() error {
	return &apperr.Error{Kind: apperr.Forbidden, Code: "action_disabled",
		Message: "This action is switched off by its policy.", Hint: "Hand the request to a person."}
}

// withinGrants is the locked task with its limits no higher than its
// key's assistant's maxima now: an admin who lowers them after the task
// opened bounds what it proposes from then on.
func withinGrants(task store.Task, st store.Standing) store.Task {
	if a := st.Assistant; a != nil {
		task.WriteBudget = min(task.WriteBudget, a.MaxWriteBudget)
		task.InflightLimit = min(task.InflightLimit, a.MaxInflightLimit)
		task.RatePerMinute = min(task.RatePerMinute, a.MaxRatePerMinute)
	}
	return task
}

// ownerStands checks what the write's assistant (st.Assistant: the key's,
// or the task's when the write was made without a key and its standing
// query named the task, store.StandingQuery.OwnerTask) still allows.
//
// A customer's re-quote and a person's edit of the assistant's proposal
// are made without its key, but what they record is still the assistant's
// write, on its task, for the customer it proposed to: disabling the
// assistant or switching the action off for it stops them as it stops
// the assistant's own proposals. A reversal (compensation) made without a
// key is a person's undoing of a write, not the assistant's: its standing
// does not hold it back.
//
// A task opened on the admin's "act for any customer" grant (no
// assertion: the business never vouched for its customer) takes writes
// only while the assistant keeps that grant, so withdrawing it stops the
// tasks it admitted.
func ownerStands(actor Actor, task store.Task, st store.Standing, w write) error {
	a := st.Assistant
	if a == nil || (actor.KeyID == "" && w.compensation) {
		return nil
	}
	if actor.KeyID == "" && actor.GrantID == "" {
		switch {
		case a.DisabledAt != nil:
			return &apperr.Error{Kind: apperr.Unauthenticated, Code: "assistant_disabled",
				Message: "The assistant that proposed this request was disabled before the change was recorded; nothing was recorded.",
				Hint:    "A person of the business takes the request from here: reject it, or propose it again themselves."}
		case !st.ActionEnabled:
			return &apperr.Error{Kind: apperr.Forbidden, Code: "action_not_enabled",
				Message: "The assistant that proposed this request no longer has " + w.action + " turned on; nothing was recorded.",
				Hint:    "A person of the business takes the request from here: reject it, or propose it again themselves."}
		}
	}
	if task.Vouched != nil && VouchKind(*task.Vouched) == VouchAnyCustomer && !a.AnyCustomer {
		return &apperr.Error{Kind: apperr.Forbidden, Code: "customer_not_vouched",
			Message: "This task was opened on the assistant's grant to act for any customer, and an admin has withdrawn that grant; nothing was recorded.",
			Hint: "The business must vouch for the customer: open a task with a customer_assertion its site signs " +
				"(see docs/api.md, \"Opening a task\")."}
	}
	return nil
}
