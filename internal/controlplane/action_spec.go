package controlplane

import "countersign/internal/adapter"

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
