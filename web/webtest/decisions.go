package webtest

import (
	"sync"

	"countersign/internal/controlplane"
)

// DecisionLog keeps the customer decisions the pages made with a passkey,
// as they were handed to controlplane.CustomerDecide, for a test to check
// the evidence (consent.Evidence.Verify) before the consent record that
// keeps it exists on this branch.
type DecisionLog struct {
	mu   sync.Mutex
	list []controlplane.CustomerDecision
}

func (l *DecisionLog) add(d controlplane.CustomerDecision) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, d)
}

// All returns the decisions so far, oldest first.
func (l *DecisionLog) All() []controlplane.CustomerDecision {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]controlplane.CustomerDecision(nil), l.list...)
}
