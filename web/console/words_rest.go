package console

import (
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
)

// stageLabel is a policy's stage as the console shows it
// (console.rest.stage.*): the words of controlplane's Stage.Label, which
// stays the API's; a stage the catalogue does not name is its number.
func stageLabel(s controlplane.Stage) string {
	switch s {
	case controlplane.StagePropose:
		return say("console.rest.stage.propose", nil)
	case controlplane.StageAssisted:
		return say("console.rest.stage.assisted", nil)
	case controlplane.StageAutonomous:
		return say("console.rest.stage.autonomous", nil)
	}
	return say("console.rest.stage.other", locale.Params{"N": int(s)})
}

// notDispatchedReasons are the reasons the console's catalogue words
// (console.rest.not_dispatched.<reason>).
var notDispatchedReasons = []controlplane.NotDispatchedReason{
	controlplane.ReasonTaskPaused, controlplane.ReasonTaskCancelled, controlplane.ReasonTaskClosed,
	controlplane.ReasonTaskExpired, controlplane.ReasonBudgetSpent, controlplane.ReasonGlobalStop,
	controlplane.ReasonPolicyDisabled, controlplane.ReasonRouteChanged, controlplane.ReasonTargetChanged,
	controlplane.ReasonUnreachable, controlplane.ReasonNotConnected, controlplane.ReasonCurrencyNotLimited,
	controlplane.ReasonMixedCurrency,
}

// notDispatchedWords says a recorded not-dispatched reason as the console
// shows it: the sentence controlplane gives the assistant
// (NotDispatchedReason.Sentence), from the console's catalogue; a reason
// the console does not know is shown as recorded.
func notDispatchedWords(code controlplane.NotDispatchedReason) string {
	for _, r := range notDispatchedReasons {
		if r == code {
			return say("console.rest.not_dispatched."+string(r), nil)
		}
	}
	return string(code)
}

// approverRolesProblem is the policy form's error for a list of deciders
// the policy cannot have, or "" when it can.
func approverRolesProblem(roles []string) string {
	if fault := controlplane.ApproverRolesFault(roles); fault != "" {
		return say("console.rest.policies.error.approvers."+fault, nil)
	}
	return ""
}

// joinWords joins phrases as a sentence does: "a", "a and b", "a, b and
// c" (console.rest.list.*).
func joinWords(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	out := items[0]
	for _, it := range items[1 : len(items)-1] {
		out = say("console.rest.list.series", locale.Params{"List": out, "Item": it})
	}
	return say("console.rest.list.last", locale.Params{"List": out, "Item": items[len(items)-1]})
}

// refusal is an error a console page (or its script) shows: its kind, and
// its message from the catalogue (console.rest.error.<id>), built when
// refused so an installation's override shows.
func refusal(kind apperr.Kind, id string, p locale.Params) *apperr.Error {
	return &apperr.Error{Kind: kind, Message: say("console.rest.error."+id, p)}
}
