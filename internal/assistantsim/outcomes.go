package assistantsim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"countersign/internal/controlplane"
	"countersign/internal/webhooks"
)

// Outcome is one outcome webhook the assistant received: the event and
// the invocation as it stood.
type Outcome struct {
	Event      string
	Invocation Invocation
}

// settles says whether an event ends the wait for a write's result.
func (o Outcome) settles() bool {
	switch controlplane.EventAction(o.Event) {
	case controlplane.EventInvocationCompleted, controlplane.EventInvocationFailed, controlplane.EventInvocationNotDispatched,
		controlplane.EventInvocationUnverified, controlplane.EventInvocationReconciled, controlplane.EventInvocationRejected,
		controlplane.EventInvocationDeclined, controlplane.EventInvocationExpired:
		return true
	}
	return false
}

// Outcomes is the assistant's webhook receiver: it verifies each
// delivery's signature with the endpoint's secret, drops repeats of a
// delivery it has already taken, and lets a conversation wait for its
// invocation's outcome instead of polling get_invocation.
type Outcomes struct {
	secret string
	now    func() time.Time
	mu     sync.Mutex
	seen   map[string]bool
	got    map[string][]Outcome // by invocation id
	wake   chan struct{}        // closed and replaced at each arrival
}

// NewOutcomes returns a receiver for deliveries signed with secret; now is
// the clock signatures are checked against (time.Now when nil).
func NewOutcomes(secret string, now func() time.Time) *Outcomes {
	if now == nil {
		now = time.Now
	}
	return &Outcomes{secret: secret, now: now, seen: map[string]bool{}, got: map[string][]Outcome{}, wake: make(chan struct{})}
}

// ServeHTTP takes one delivery: 204 when taken (or taken before), 401 when
// the signature does not verify, 400 when the body is not a delivery.
func (o *Outcomes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	if err := webhooks.VerifyStandard(o.secret, r.Header, body, o.now(), webhooks.DefaultTolerance); err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var p webhooks.Payload
	var inv Invocation
	if json.Unmarshal(body, &p) != nil || json.Unmarshal(p.Invocation, &inv) != nil || inv.ID == "" {
		http.Error(w, "not a delivery", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if id := r.Header.Get(webhooks.DeliveryHeader); id != "" {
		if o.seen[id] {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		o.seen[id] = true
	}
	o.got[inv.ID] = append(o.got[inv.ID], Outcome{Event: p.Event, Invocation: inv})
	close(o.wake)
	o.wake = make(chan struct{})
	w.WriteHeader(http.StatusNoContent)
}

// Wait returns the first outcome of the invocation that settles it (a
// result, or a decision that ends it), waiting for it until ctx ends;
// ok is false then.
func (o *Outcomes) Wait(ctx context.Context, invocationID string) (Outcome, bool) {
	for {
		o.mu.Lock()
		for _, out := range o.got[invocationID] {
			if out.settles() {
				o.mu.Unlock()
				return out, true
			}
		}
		wake := o.wake
		o.mu.Unlock()
		select {
		case <-ctx.Done():
			return Outcome{}, false
		case <-wake:
		}
	}
}
