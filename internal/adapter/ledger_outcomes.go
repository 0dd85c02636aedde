package adapter

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// LedgerOutcome is one call's outcome as the Ledger would record it
// (FinishAdapterRequest's values).
type LedgerOutcome struct {
	System, Key, State string
	Result, Error      json.RawMessage
	At                 time.Time
}

// LedgerOutcomes collects the outcomes a Ledger records during one call
// made with a context from WithLedgerOutcomes, instead of writing each in
// a commit of its own: the caller records them in the transaction that
// records its own outcome (the console's dispatcher, with the invocation's
// completion), so a write costs one commit after its request, not two. A
// caller that never records them leaves the calls "sending" in the
// ledger, which repeats and limits already treat as possibly applied.
type LedgerOutcomes struct {
	mu   sync.Mutex
	list []LedgerOutcome
}

type ledgerOutcomesKey struct{}

// WithLedgerOutcomes returns ctx carrying o: a Ledger's Finish under it
// appends to o and writes nothing.
func WithLedgerOutcomes(ctx context.Context, o *LedgerOutcomes) context.Context {
	return context.WithValue(ctx, ledgerOutcomesKey{}, o)
}

// Take returns the outcomes collected so far and forgets them.
func (o *LedgerOutcomes) Take() []LedgerOutcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.list
	o.list = nil
	return out
}

// collect appends an outcome to the collector ctx carries, if any, and
// reports whether it did.
func collect(ctx context.Context, lo LedgerOutcome) bool {
	o, _ := ctx.Value(ledgerOutcomesKey{}).(*LedgerOutcomes)
	if o == nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.list = append(o.list, lo)
	return true
}
