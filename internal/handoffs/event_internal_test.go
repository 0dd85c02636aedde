package handoffs

import (
	"slices"
	"testing"

	"countersign/internal/controlplane"
)

// TestHandoffOutcomesAreKnownEvents: the event recording a hand-off's end
// is composed from its outcome's name, and must be one of the control
// plane's event actions.
func TestHandoffOutcomesAreKnownEvents(t *testing.T) {
	for _, o := range []Outcome{Resolved, GivenBack} {
		if !slices.Contains(controlplane.EventActions, o.event()) {
			t.Errorf("hand-off outcome %s is recorded as %s, which controlplane.EventActions lacks", o, o.event())
		}
	}
}
