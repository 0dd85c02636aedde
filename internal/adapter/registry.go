package adapter

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Registry holds the systems connected to this installation. A system can
// be disconnected at run time (its actions then leave every catalog).
type Registry struct {
	mu      sync.RWMutex
	systems map[string]System
	order   []string
}

// NewRegistry connects the given systems.
func NewRegistry(systems ...System) *Registry {
	r := &Registry{systems: map[string]System{}}
	for _, s := range systems {
		r.Connect(s)
	}
	return r
}

// Connect adds or replaces a system.
func (r *Registry) Connect(s System) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.systems[s.Name()]; !ok {
		r.order = append(r.order, s.Name())
	}
	r.systems[s.Name()] = s
}

// Disconnect removes a system; calls already holding it finish.
func (r *Registry) Disconnect(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.systems, name)
	r.order = slices.DeleteFunc(r.order, func(n string) bool { return n == name })
}

// System returns a connected system by name.
func (r *Registry) System(name string) (System, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, ok := r.systems[name]
	if !ok {
		return nil, &Error{Code: "system_not_connected", Message: fmt.Sprintf("No system %q is connected.", name),
			Outcome: Refused, Hint: "List the tools to see which systems are connected."}
	}
	return s, nil
}

// Systems lists the connected systems in connection order.
func (r *Registry) Systems() []System {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]System, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.systems[n])
	}
	return out
}

// Offering names the connected systems offering action, sorted: where an
// action named without its system can go. It is empty when none does; a
// task's own filter (which systems and actions it may use) is the caller's.
func (r *Registry) Offering(action string) []string {
	var out []string
	for _, s := range r.Systems() {
		if slices.ContainsFunc(s.Actions(), func(a ActionSpec) bool { return a.Name == action }) {
			out = append(out, s.Name())
		}
	}
	slices.Sort(out)
	return out
}

// OffersAction reports whether name ("action" or "system/action") is a
// write action of a connected system.
func (r *Registry) OffersAction(name string) bool {
	system, action, qualified := ParseActionName(name)
	offering := r.Offering(action)
	if qualified {
		return slices.Contains(offering, system)
	}
	return len(offering) > 0
}

// OffersReadTool reports whether name ("tool" or "system/tool") is a read
// tool of a connected system. Read tools work in every task, listed or not.
func (r *Registry) OffersReadTool(name string) bool {
	system, tool, qualified := ParseActionName(name)
	for _, s := range r.Systems() {
		if (!qualified || s.Name() == system) && slices.ContainsFunc(s.ReadTools(), func(t ReadToolSpec) bool { return t.Name == tool }) {
			return true
		}
	}
	return false
}

// ParseActionName splits an action's name as tasks, assistants and pages
// write it: "shop/issue_refund" names the action of one system (qualified),
// "issue_refund" names it on whichever system offers it (system empty,
// action the whole name). It cannot fail: anything holding a slash splits at
// the first one, so a malformed name ("shop/", "/issue_refund",
// "shop/a/b") gives an empty or slash-holding part that no connected system
// offers, and every lookup with it finds nothing.
func ParseActionName(name string) (system, action string, qualified bool) {
	system, action, qualified = strings.Cut(name, "/")
	if !qualified {
		return "", name, false
	}
	return system, action, true
}

// Action finds an action's spec on a connected system.
func (r *Registry) Action(system, action string) (System, ActionSpec, error) {
	s, err := r.System(system)
	if err != nil {
		return nil, ActionSpec{}, err
	}
	for _, a := range s.Actions() {
		if a.Name == action {
			return s, a, nil
		}
	}
	return nil, ActionSpec{}, &Error{Code: CodeUnknownAction, Message: fmt.Sprintf("System %q has no action %q.", system, action),
		Outcome: Refused, Hint: "List the tools to see the actions this assistant may use."}
}
