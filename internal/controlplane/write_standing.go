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
// still allows the action; the API key the actor acted with is still live
// and its assistant's, the assistant still enabled and the action still
// turned on for it; the action's policy is still on and the one the write
// was routed with. The checks made when the request began answer fast;
// this one holds, because a cancel, pause, revocation or switch that
// committed meanwhile is what it reads, and one that comes later waits
// for the write's commit. The refusals carry the early checks' codes
// (task_not_active, task_expired, action_not_allowed, action_not_enabled,
// action_disabled) and key_revoked, assistant_disabled and policy_changed.
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
