package controlplane

import (
	"slices"

	"countersign/internal/adapter"
)

// ActionSpec returns the spec of a connected system's action: what the
// action is called when done, the reasons an agent may reject it with.
// An action whose system is no longer connected, or that its system no
// longer offers, gets the zero spec, whose words are the generic ones:
// its invocations still show and still end.
func (s *Service) ActionSpec(system, action string) adapter.ActionSpec {
	_, spec, err := s.registry.Action(system, action)
	if err != nil {
		return adapter.ActionSpec{Name: action}
	}
	return spec
}

// generalRejectReasons close every action's list of preset reject
// reasons; the action's own come first (adapter.ActionSpec.RejectReasons).
var generalRejectReasons = []string{
	"It repeats an earlier request.",
	"A person needs to handle this; nothing was changed.",
}

// RejectReasons lists the preset reasons an agent may reject an action
// with, wherever they decide (the console, Slack): the action's own, then
// the general ones. Besides these an agent may write their own words.
func (s *Service) RejectReasons(system, action string) []string {
	return append(slices.Clip(s.ActionSpec(system, action).RejectReasons), generalRejectReasons...)
}
