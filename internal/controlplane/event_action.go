package controlplane

// EventAction names what an audit event records: events.action, the
// webhook's event and the word the timeline, Slack and the chaos checker
// switch on. The stored strings never change, so old events keep their
// meaning; the database has no CHECK on them, and EventActions is the list
// the tests hold every reader to.
type EventAction string

// The event actions, each with what happened and who records it.
const (
	// EventTaskCreated: a task was opened (its assistant or a person).
	EventTaskCreated EventAction = "task.created"
	// EventTaskPaused: a person paused a task; its approved work not yet
	// sending is listed as not dispatched.
	EventTaskPaused EventAction = "task.paused"
	// EventTaskActive: a person resumed a paused task; nothing is replayed.
	EventTaskActive EventAction = "task.active"
	// EventTaskCancelled: a person cancelled a task for good; requests
	// waiting for a person are withdrawn, nothing sent is undone.
	EventTaskCancelled EventAction = "task.cancelled"
	// EventTaskClosed: a task's assignment ended (no code records it yet).
	EventTaskClosed EventAction = "task.closed"

	// EventInvocationProposed: an assistant (or a person's draft) proposed
	// a write, with what was quoted.
	EventInvocationProposed EventAction = "invocation.proposed"
	// EventInvocationSummaryDisagreed: the system noted that the
	// assistant's summary disagrees with the quote.
	EventInvocationSummaryDisagreed EventAction = "invocation.summary_disagreed"
	// EventInvocationAwaitingApproval: the policy routed the proposal to
	// the agents' queue.
	EventInvocationAwaitingApproval EventAction = "invocation.awaiting_approval"
	// EventInvocationAwaitingConfirmation: the policy routed the proposal
	// to the customer.
	EventInvocationAwaitingConfirmation EventAction = "invocation.awaiting_confirmation"
	// EventInvocationApproved: an agent approved it, or the policy did
	// within its limits; approved is not yet sent.
	EventInvocationApproved EventAction = "invocation.approved"
	// EventInvocationFirstApproval: the first of two people approved it;
	// a second person completes the approval.
	EventInvocationFirstApproval EventAction = "invocation.first_approval"
	// EventInvocationConfirmed: the customer confirmed the quote.
	EventInvocationConfirmed EventAction = "invocation.confirmed"
	// EventInvocationDeclined: the customer declined the quote.
	EventInvocationDeclined EventAction = "invocation.declined"
	// EventInvocationRejected: an agent rejected it.
	EventInvocationRejected EventAction = "invocation.rejected"
	// EventInvocationSentBack: an agent sent it back to the assistant with
	// a question.
	EventInvocationSentBack EventAction = "invocation.sent_back"
	// EventInvocationEdited: an agent edited its arguments and the system
	// quoted the edit again.
	EventInvocationEdited EventAction = "invocation.edited"
	// EventInvocationExpired: the system's sweeper found nobody decided
	// before the deadline.
	EventInvocationExpired EventAction = "invocation.expired"
	// EventInvocationCompleted: dispatch saw the system accept it and
	// verified it by reading back.
	EventInvocationCompleted EventAction = "invocation.completed"
	// EventInvocationFailed: the system refused it with a structured
	// error; nothing changed.
	EventInvocationFailed EventAction = "invocation.failed"
	// EventInvocationUnverified: no confirmation came back (dispatch or the
	// lease sweeper); the result needs checking and is never re-sent.
	EventInvocationUnverified EventAction = "invocation.unverified"
	// EventInvocationNotDispatched: the system stopped it before it left
	// (task paused or cancelled, global stop, budget …) or withdrew it.
	EventInvocationNotDispatched EventAction = "invocation.not_dispatched"
	// EventInvocationReconciled: a person or the reconciler settled an
	// unverified result from the system's evidence.
	EventInvocationReconciled EventAction = "invocation.reconciled"
	// EventInvocationReconcileInconclusive: the look-up did not settle an
	// unverified result; it stays for a person to check.
	EventInvocationReconcileInconclusive EventAction = "invocation.reconcile_inconclusive"
	// EventInvocationReversed: the system recorded that a linked
	// compensation completed and undid it.
	EventInvocationReversed EventAction = "invocation.reversed"
	// EventInvocationSuperseded: a re-quote replaced it because the object
	// changed since its quote.
	EventInvocationSuperseded EventAction = "invocation.superseded"
	// EventInvocationRequoted: the system quoted the replacement again on
	// the object as it is now.
	EventInvocationRequoted EventAction = "invocation.requoted"
	// EventInvocationRerouted: the system sent it to the agents' queue
	// instead of sending it (exposure or a newer policy needs more).
	EventInvocationRerouted EventAction = "invocation.rerouted"

	// EventPermitGranted: dispatch granted a permit within the task's
	// limits, just before it started sending.
	EventPermitGranted EventAction = "permit.granted"
	// EventDispatchStarted: dispatch holds the lease and the request may
	// be on its way.
	EventDispatchStarted EventAction = "dispatch.started"
	// EventDispatchWithheld: dispatch held a send back (the lease ran out
	// before it left); it was not sent.
	EventDispatchWithheld EventAction = "dispatch.withheld"
	// EventDispatchStoppedGlobally: an admin stopped all dispatch.
	EventDispatchStoppedGlobally EventAction = "dispatch.stopped_globally"
	// EventDispatchResumedGlobally: an admin resumed dispatch; nothing is
	// replayed.
	EventDispatchResumedGlobally EventAction = "dispatch.resumed_globally"

	// EventProposalRefused: the adapter or the policy refused a proposal;
	// no invocation was recorded.
	EventProposalRefused EventAction = "proposal.refused"
	// EventProposalBlockedAfterRefusal: an assistant tried again after a
	// refusal and the target is now blocked for it.
	EventProposalBlockedAfterRefusal EventAction = "proposal.blocked_after_refusal"
	// EventTargetUnblocked: a person lifted the block on a target.
	EventTargetUnblocked EventAction = "target.unblocked"

	// EventHandoffTaken: a person took a conversation's hand-off.
	EventHandoffTaken EventAction = "handoff.taken"
	// EventHandoffTakenOver: a person took a conversation over from the
	// one who had it, with a reason.
	EventHandoffTakenOver EventAction = "handoff.taken_over"
	// EventHandoffResolved: a person dealt with the customer's request.
	EventHandoffResolved EventAction = "handoff.resolved"
	// EventHandoffGivenBack: a person gave the conversation back to the
	// assistant with a note.
	EventHandoffGivenBack EventAction = "handoff.given_back"
	// EventHandoffDraftSent: a person sent on the assistant's hand-off
	// draft through the normal route.
	EventHandoffDraftSent EventAction = "handoff.draft_sent"
	// EventHandoffDraftDiscarded: a person set the assistant's hand-off
	// draft aside; nothing was proposed.
	EventHandoffDraftDiscarded EventAction = "handoff.draft_discarded"

	// EventPolicyChanged: an admin changed a policy, in the transaction of
	// the change.
	EventPolicyChanged EventAction = "policy.changed"
	// EventAssistantGrantsChanged: an admin changed what an assistant may
	// do (internal/assistants records it).
	EventAssistantGrantsChanged EventAction = "assistant.grants_changed"
	// EventWebhookTest: an admin asked for a test delivery of the webhooks
	// (internal/webhooks records it); no task has it.
	EventWebhookTest EventAction = "webhook.test"
	// EventFactorRequirementChanged: an admin said whether a role needs a
	// second factor (internal/factors records it); no task has it.
	EventFactorRequirementChanged EventAction = "factor.requirement_changed"
	// EventFactorAdded: a person set up a second factor of their own (data
	// "kind": totp, passkey, or recovery_codes when they made new ones;
	// "name" for a passkey). internal/factors records it; no task has it.
	EventFactorAdded EventAction = "factor.added"
	// EventFactorRemoved: a person removed a second factor of their own
	// ("kind", "name" as for EventFactorAdded).
	EventFactorRemoved EventAction = "factor.removed"
	// EventFactorReset: an admin removed every second factor of another
	// person ("user_id", "user_name") and ended their sessions.
	EventFactorReset EventAction = "factor.reset"
	// EventCustomerPasskeyAdded: a customer added a passkey for a business
	// system, on the page of a request they decided (data "system",
	// "shop" as the customer knows it, "name", and the actor's "proof").
	// internal/custkeys records it.
	EventCustomerPasskeyAdded EventAction = "customer_passkey.added"
	// EventCustomerPasskeyRemoved: a customer removed one of their
	// passkeys for a business system (data as for
	// EventCustomerPasskeyAdded).
	EventCustomerPasskeyRemoved EventAction = "customer_passkey.removed"

	// EventOAuthConsented: a person let a client connect to the MCP server
	// (internal/authserver records it; data "client", "client_id",
	// "redirect_uri", "assistant", "acts_as_user", "new_client"); no task
	// has it.
	EventOAuthConsented EventAction = "oauth.consented"
	// EventOAuthClientApproved: an admin approved a client for first use
	// ("client", "client_id").
	EventOAuthClientApproved EventAction = "oauth.client_approved"
	// EventOAuthClientRevoked: an admin revoked a client and every grant
	// it held ("client", "client_id").
	EventOAuthClientRevoked EventAction = "oauth.client_revoked"
	// EventOAuthRevoked: a grant's tokens were revoked, by an admin or by
	// the client itself ("grant_id", "client_id", "by": "admin" or
	// "client"; "token": which one the client presented).
	EventOAuthRevoked EventAction = "oauth.token_revoked"
	// EventOAuthSettingChanged: an admin said whether unknown clients need
	// an approval before first use ("clients_need_approval").
	EventOAuthSettingChanged EventAction = "oauth.setting_changed"

	// EventAuditCheckpointSigned: an admin signed a checkpoint of the
	// audit trail from /admin/audit ("size" of the tree signed); the
	// console's own interval signing records none.
	EventAuditCheckpointSigned EventAction = "audit.checkpoint_signed"
	// EventAuditExported: an admin exported the audit trail from
	// /admin/audit ("from", "to" as dates, "filter" the system, action,
	// person and customer asked for, "lines" and "checkpoint_size").
	EventAuditExported EventAction = "audit.exported"
)

// EventActions lists every event action.
var EventActions = []EventAction{
	EventTaskCreated, EventTaskPaused, EventTaskActive, EventTaskCancelled, EventTaskClosed,
	EventInvocationProposed, EventInvocationSummaryDisagreed, EventInvocationAwaitingApproval,
	EventInvocationAwaitingConfirmation, EventInvocationApproved, EventInvocationFirstApproval,
	EventInvocationConfirmed, EventInvocationDeclined, EventInvocationRejected, EventInvocationSentBack,
	EventInvocationEdited, EventInvocationExpired, EventInvocationCompleted, EventInvocationFailed,
	EventInvocationUnverified, EventInvocationNotDispatched, EventInvocationReconciled,
	EventInvocationReconcileInconclusive, EventInvocationReversed, EventInvocationSuperseded,
	EventInvocationRequoted, EventInvocationRerouted,
	EventPermitGranted, EventDispatchStarted, EventDispatchWithheld, EventDispatchStoppedGlobally,
	EventDispatchResumedGlobally,
	EventProposalRefused, EventProposalBlockedAfterRefusal, EventTargetUnblocked,
	EventHandoffTaken, EventHandoffTakenOver, EventHandoffResolved, EventHandoffGivenBack,
	EventHandoffDraftSent, EventHandoffDraftDiscarded,
	EventPolicyChanged, EventAssistantGrantsChanged, EventWebhookTest, EventFactorRequirementChanged,
	EventFactorAdded, EventFactorRemoved, EventFactorReset,
	EventCustomerPasskeyAdded, EventCustomerPasskeyRemoved,
	EventOAuthConsented, EventOAuthClientApproved, EventOAuthClientRevoked, EventOAuthRevoked, EventOAuthSettingChanged,
	EventAuditCheckpointSigned, EventAuditExported,
}

// entered is the event that records an invocation moving into s: routed
// on proposal, or finished by dispatch. Every state but Dispatching has one.
func (s State) entered() EventAction { return EventAction("invocation." + string(s)) }

// entered is the event that records a task moving into s.
func (s TaskState) entered() EventAction { return EventAction("task." + string(s)) }
