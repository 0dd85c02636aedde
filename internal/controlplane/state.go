// Package controlplane is Countersign's heart: tasks, the invocation
// journal, policies and exactly-once dispatch that knows when it failed.
// An assistant proposes a write; the adapter dry-runs it; the policy routes
// it to the customer, to an agent or (within limits, with a named owner) to
// automatic approval; a permit granted under the task's lock lets it leave
// exactly once; the adapter verifies it by reading back. A lost
// acknowledgement becomes unverified and is reconciled, never retried.
package controlplane

// State is where an invocation stands. Each value is mirrored by the CHECK
// constraint on invocations.state.
type State string

// The invocation states, as in the diagram of docs/architecture.md ("States").
const (
	// Proposed: recorded, not yet routed (only inside the proposing transaction).
	Proposed State = "proposed"
	// AwaitingConfirmation: stage 4; the customer must confirm the quote.
	AwaitingConfirmation State = "awaiting_confirmation"
	// AwaitingApproval: stage 3 or a rule fired; an agent must approve.
	AwaitingApproval State = "awaiting_approval"
	// Approved: authorised, waiting for a dispatch permit. Never shown as done.
	Approved State = "approved"
	// Dispatching: holds a permit; the request may be on its way. The row is
	// in this state before the request leaves.
	Dispatching State = "dispatching"
	// Completed: accepted by the system and verified by reading back.
	Completed State = "completed"
	// Failed: refused by the system with a structured error; no effect.
	Failed State = "failed"
	// Unverified: the outcome is unknown (timeout, lost response, crash);
	// it is reconciled by inspection, never re-sent.
	Unverified State = "unverified"
	// NotDispatched: never left (task paused or cancelled, budget spent,
	// global stop, policy withdrawn, target changed since the quote). A
	// request still waiting for a person when its task is cancelled is
	// withdrawn into it too (task_cancelled, never approved).
	NotDispatched State = "not_dispatched"
	// Rejected: an agent rejected it or the customer declined it.
	Rejected State = "rejected"
	// Expired: nobody decided before the deadline.
	Expired State = "expired"
	// Reversed: completed, then undone by a linked compensation that completed.
	Reversed State = "reversed"
)

// States lists every state.
var States = []State{Proposed, AwaitingConfirmation, AwaitingApproval, Approved, Dispatching, Completed,
	Failed, Unverified, NotDispatched, Rejected, Expired, Reversed}

// Terminal reports whether nothing more happens to an invocation in s
// (reversal of a completed one aside).
func (s State) Terminal() bool {
	switch s {
	case Completed, Failed, NotDispatched, Rejected, Expired, Reversed:
		return true
	}
	return false
}

// Label is the state's name for people, in words that never call approved
// work done and say when a result needs checking.
func (s State) Label() string {
	switch s {
	case Proposed:
		return "Proposed"
	case AwaitingConfirmation:
		return "Awaiting customer"
	case AwaitingApproval:
		return "Pending approval"
	case Approved:
		return "Approved, not yet sent"
	case Dispatching:
		return "Sending"
	case Completed:
		return "Completed"
	case Failed:
		return "Failed"
	case Unverified:
		return "Result needs checking"
	case NotDispatched:
		return "Not dispatched"
	case Rejected:
		return "Rejected"
	case Expired:
		return "Expired"
	case Reversed:
		return "Reversed"
	}
	return string(s)
}

// TaskState is where a task stands; mirrored by the CHECK on tasks.state.
type TaskState string

// The task states.
const (
	// TaskActive: permits may be granted.
	TaskActive TaskState = "active"
	// TaskPaused: no new permit; approved work that has not begun to send
	// is not_dispatched (task_paused), a permit's included (lease.go), and
	// only a request already sending finishes. Requests waiting for a
	// person stay waiting, to be decided once the task resumes.
	TaskPaused TaskState = "paused"
	// TaskCancelled: as paused, for good, and the requests waiting for a
	// person are withdrawn (not_dispatched, task_cancelled); nothing that
	// was sent is undone.
	TaskCancelled TaskState = "cancelled"
	// TaskClosed: the schema's state for an ended assignment, which takes
	// no permit (task_closed); no code moves a task here yet. An expired
	// task stays active: its writes are refused task_expired, and its
	// approved work is not dispatched (task_expired).
	TaskClosed TaskState = "closed"
)

// NotDispatchedReason says why an invocation never left: approved work
// stopped before its permit, or (task_cancelled) a request withdrawn while
// it waited for a person.
type NotDispatchedReason string

// The reasons an invocation is not dispatched.
const (
	ReasonTaskPaused     NotDispatchedReason = "task_paused"
	ReasonTaskCancelled  NotDispatchedReason = "task_cancelled"
	ReasonTaskClosed     NotDispatchedReason = "task_closed"
	ReasonTaskExpired    NotDispatchedReason = "task_expired"
	ReasonBudgetSpent    NotDispatchedReason = "budget_spent"
	ReasonGlobalStop     NotDispatchedReason = "global_stop"
	ReasonPolicyDisabled NotDispatchedReason = "policy_disabled"
	// ReasonRouteChanged: checked again at the permit, the route under the
	// policy in force now needs a decider who has not said yes.
	ReasonRouteChanged  NotDispatchedReason = "route_changed"
	ReasonTargetChanged NotDispatchedReason = "target_changed"
	ReasonUnreachable   NotDispatchedReason = "system_unreachable"
	ReasonNotConnected  NotDispatchedReason = "system_not_connected"
	// ReasonCurrencyNotLimited: checked again at the permit, the request
	// is in another currency than the policy's amount limits, which came
	// into force after it was decided: a person must decide it, and only
	// the customer or the policy did (unlikeAmount).
	ReasonCurrencyNotLimited NotDispatchedReason = CodeCurrencyNotLimited
	// ReasonMixedCurrency: checked again at the permit, money in another
	// currency moved or is pending on the same customer or object, and the
	// policy has amount limits: as ReasonCurrencyNotLimited (unlikeAmount).
	ReasonMixedCurrency NotDispatchedReason = CodeMixedCurrencyExposure
)

// Sentence says the reason in words.
func (r NotDispatchedReason) Sentence() string {
	switch r {
	case ReasonTaskPaused:
		return "The task was paused before this could be sent."
	case ReasonTaskCancelled:
		return "The task was cancelled before this could be sent."
	case ReasonTaskClosed, ReasonTaskExpired:
		return "The task had ended before this could be sent."
	case ReasonBudgetSpent:
		return "The task's write budget was spent."
	case ReasonGlobalStop:
		return "All dispatch is stopped by an administrator."
	case ReasonPolicyDisabled:
		return "The policy for this action no longer allows it."
	case ReasonRouteChanged:
		return "After it was approved, the policy changed so that it needs another person's decision; it was not sent."
	case ReasonTargetChanged:
		return "The object changed after the quote was shown, so the quote no longer holds."
	case ReasonUnreachable:
		return "The business system could not be reached; nothing was sent."
	case ReasonNotConnected:
		return "The business system is no longer connected."
	case ReasonCurrencyNotLimited:
		return "Its currency is not the one the policy's amount limits are set in, so the amount could not be checked against them and nothing was sent. A person can carry it out in the business system."
	case ReasonMixedCurrency:
		return "Money in another currency already moved or is pending for this customer or object, and amounts in different currencies are never added up against the policy's limits, so nothing was sent. A person can carry it out in the business system."
	}
	return string(r)
}
