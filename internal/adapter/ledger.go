package adapter

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"
)

// LedgerStore is where the ledger keeps its rows (*store.Store in the
// console). Its methods take plain values, so the contract needs nothing
// from the store package.
type LedgerStore interface {
	// BeginAdapterRequest inserts a "sending" row for (system, key) and
	// reports began; when the key was used before it changes nothing and
	// reports whether that call had the same action and arguments hash.
	BeginAdapterRequest(ctx context.Context, system, key, action, targetID string, argsHash []byte, at time.Time) (began, sameCall bool, err error)
	// FinishAdapterRequest records the outcome of a call still "sending"
	// or "unknown".
	FinishAdapterRequest(ctx context.Context, system, key, state string, result, errJSON json.RawMessage, at time.Time) error
	// AdapterRequest returns a call's row; found is false when there is none.
	AdapterRequest(ctx context.Context, system, key string) (state string, result, errJSON json.RawMessage, createdAt time.Time, found bool, err error)
	// CountAdapterRequests counts calls of action on target since a time
	// whose effect happened or may have happened.
	CountAdapterRequests(ctx context.Context, system, action, targetID string, since time.Time) (int, error)
}

// Ledger is the adapters' request ledger, keyed by (system, idempotency
// key): a row is written before a write leaves, so a repeated key sends
// nothing, and a call whose response was lost can be inspected later.
type Ledger struct {
	store LedgerStore
	now   func() time.Time
}

// NewLedger builds a ledger over the console's database.
func NewLedger(st LedgerStore, now func() time.Time) *Ledger {
	if now == nil {
		now = time.Now
	}
	return &Ledger{store: st, now: now}
}

// Entry is what the ledger knows of one call.
type Entry struct {
	State  string // "sending", "applied", "refused", "unknown"
	Result *Result
	Error  *Error
	At     time.Time
}

// Begin claims key for a call. When send is false the key was used before:
// the returned result or error is the first call's (Deduplicated set), and
// nothing may be sent. Reusing a key for other arguments is refused.
func (l *Ledger) Begin(ctx context.Context, system, key, action, targetID string, args []byte) (send bool, prior *Result, err error) {
	if key == "" {
		return false, nil, Invalid(map[string]string{"idempotency_key": "required for every write"})
	}
	hash := sha256.Sum256(args)
	began, sameCall, err := l.store.BeginAdapterRequest(ctx, system, key, action, targetID, hash[:], l.now())
	if err != nil {
		return false, nil, err
	}
	if began {
		return true, nil, nil
	}
	if !sameCall {
		return false, nil, &Error{Code: "idempotency_key_reused", Outcome: Refused,
			Message: "This idempotency key was already used for a different call.",
			Hint:    "Use a new key for a new request; reuse a key only to repeat the same call."}
	}
	entry, found, err := l.Get(ctx, system, key)
	if err != nil {
		return false, nil, err
	}
	if !found {
		return false, nil, fmt.Errorf("adapter: ledger row for %s/%s vanished", system, key)
	}
	switch entry.State {
	case "applied":
		entry.Result.Deduplicated = true
		return false, entry.Result, nil
	case "refused":
		return false, nil, entry.Error
	default: // sending or unknown: the first call's outcome is not known
		return false, nil, &Error{Code: CodeInProgress, Outcome: Unknown,
			Message: "A call with this key was already sent and its outcome is not known yet.",
			Hint:    "Do not retry. Inspect the original call (reconcile) instead."}
	}
}

// Finish records the outcome of a call begun with Begin, or hands it to
// the LedgerOutcomes ctx carries (WithLedgerOutcomes).
func (l *Ledger) Finish(ctx context.Context, system, key string, result *Result, callErr error) error {
	state := "applied"
	var resJSON, errJSON []byte
	if result != nil {
		resJSON, _ = json.Marshal(result)
	}
	if callErr != nil {
		ae, ok := AsError(callErr)
		if !ok {
			ae = Unknowable(callErr)
		}
		switch ae.Outcome {
		case Refused, NotSent:
			state = "refused"
		default:
			state = "unknown"
		}
		errJSON, _ = json.Marshal(ae)
	}
	if collect(ctx, LedgerOutcome{System: system, Key: key, State: state, Result: resJSON, Error: errJSON, At: l.now()}) {
		return nil // the caller records it with its own outcome
	}
	// Finishing must not be lost to a cancelled request context.
	return l.store.FinishAdapterRequest(context.WithoutCancel(ctx), system, key, state, resJSON, errJSON, l.now())
}

// Get returns what the ledger knows of a key; found is false when it has no
// record (which is not proof that nothing was sent elsewhere).
func (l *Ledger) Get(ctx context.Context, system, key string) (entry Entry, found bool, err error) {
	state, result, errJSON, at, found, err := l.store.AdapterRequest(ctx, system, key)
	if err != nil || !found {
		return Entry{}, false, err
	}
	entry, err = decodeEntry(state, result, errJSON, at)
	return entry, err == nil, err
}

// CountRecent counts calls of action on target since a time whose effect
// happened or may have happened.
func (l *Ledger) CountRecent(ctx context.Context, system, action, targetID string, since time.Time) (int, error) {
	return l.store.CountAdapterRequests(ctx, system, action, targetID, since)
}

func decodeEntry(state string, result, errJSON json.RawMessage, at time.Time) (Entry, error) {
	e := Entry{State: state, At: at}
	if len(result) > 0 {
		e.Result = &Result{}
		if err := json.Unmarshal(result, e.Result); err != nil {
			return e, fmt.Errorf("adapter: decode ledger result: %w", err)
		}
	}
	if len(errJSON) > 0 {
		e.Error = &Error{}
		if err := json.Unmarshal(errJSON, e.Error); err != nil {
			return e, fmt.Errorf("adapter: decode ledger error: %w", err)
		}
	}
	if e.State == "applied" && e.Result == nil {
		e.Result = &Result{}
	}
	return e, nil
}

// Lookup starts an adapter's Lookup of an earlier call by its key: what
// the ledger knows of it (Found, LedgerState, Error, and the Result of an
// applied call), with an empty list of effects for the adapter to fill from
// the system's evidence. A nil ledger knows nothing; a call without a key
// is invalid; a ledger that cannot be read fails as LedgerFailure says.
func (l *Ledger) Lookup(ctx context.Context, system, key string) (LookupResult, error) {
	if key == "" {
		return LookupResult{}, Invalid(map[string]string{"idempotency_key": "required to look a call up"})
	}
	out := LookupResult{Effects: []Effect{}}
	if l == nil {
		return out, nil
	}
	out.Kept = true
	entry, found, err := l.Get(ctx, system, key)
	if err != nil {
		return LookupResult{}, LedgerFailure(err)
	}
	if found {
		out.Found, out.LedgerState, out.Error, out.BegunAt = true, entry.State, entry.Error, entry.At
		if entry.State == "applied" {
			out.Result = entry.Result
		}
	}
	return out, nil
}
