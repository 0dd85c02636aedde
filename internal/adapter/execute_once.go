package adapter

import (
	"context"
	"fmt"
	"log/slog"
)

// ErrNoLedger refuses a write of an adapter configured without a request
// ledger: nothing was sent.
var ErrNoLedger = &Error{Code: "ledger_unavailable", Outcome: NotSent,
	Message: "This adapter has no request ledger, so it sends no writes.",
	Hint:    "Configure the adapter with the console's request ledger."}

// LedgerFailure wraps a ledger error that is not already structured:
// nothing was sent, and the same call may be tried again.
func LedgerFailure(err error) error {
	if _, ok := AsError(err); ok {
		return err
	}
	return &Error{Code: "ledger_unavailable", Outcome: NotSent, Retryable: true,
		Message: "The request ledger could not be read or written; nothing was sent.",
		Hint:    "Try again in a moment.", Err: fmt.Errorf("adapter: request ledger: %w", err)}
}

// Prepared is a write planned afresh from the system's current state and
// checked against the confirmed quote, ready to send once.
type Prepared struct {
	// TargetID is the object the write changes, as the ledger records it.
	TargetID string
	// Send makes the one request, carrying key.
	Send func(ctx context.Context, key string) (Result, error)
}

// ExecuteOnce carries a write through the request ledger so it leaves at
// most once per idempotency key, the protocol every adapter's Execute
// follows:
//   - a key seen before is answered from the ledger before anything is
//     re-read (after the first call the target has usually moved on, and a
//     repeat must replay that call, not be refused as stale);
//   - otherwise prepare plans the write again from fresh reads, with every
//     check of the dry run and the confirmed quote compared with the fresh
//     one; a refusal there sends nothing;
//   - the key is claimed (a concurrent call with it gets the first answer),
//     the request is sent, and its outcome recorded: the result of a
//     success, and of a failure too when keepFailed says so (a workflow's
//     steps, for Lookup).
//
// A ledger that cannot be written after the system answered is logged and
// leaves the call "sending", which repeats and limits treat as possibly
// applied; the caller still gets the real outcome.
func (l *Ledger) ExecuteOnce(ctx context.Context, system string, call Call, args []byte, log *slog.Logger,
	prepare func(context.Context) (Prepared, error), keepFailed func(Result) bool) (Result, error) {
	if l == nil {
		return Result{}, ErrNoLedger
	}
	if call.IdempotencyKey == "" {
		return Result{}, Invalid(map[string]string{"idempotency_key": "required for every write"})
	}
	finish := func(res Result, callErr error) {
		var recorded *Result
		if callErr == nil || (keepFailed != nil && keepFailed(res)) {
			recorded = &res
		}
		if err := l.Finish(ctx, system, call.IdempotencyKey, recorded, callErr); err != nil && log != nil {
			log.ErrorContext(ctx, "adapter: record outcome in the request ledger",
				slog.String("system", system), slog.String("idempotency_key", call.IdempotencyKey), slog.String("error", err.Error()))
		}
	}
	claimed := false
	if _, found, err := l.Get(ctx, system, call.IdempotencyKey); err != nil {
		return Result{}, LedgerFailure(err)
	} else if found {
		send, prior, err := l.Begin(ctx, system, call.IdempotencyKey, call.Action, call.Quote.Target.ID, args)
		if err != nil {
			return Result{}, LedgerFailure(err)
		}
		if !send {
			return *prior, nil
		}
		claimed = true // the earlier row is gone; this call owns the key now
	}
	p, err := prepare(ctx)
	if err != nil {
		if claimed {
			finish(Result{}, err)
		}
		return Result{}, err
	}
	if !claimed {
		send, prior, err := l.Begin(ctx, system, call.IdempotencyKey, call.Action, p.TargetID, args)
		if err != nil {
			return Result{}, LedgerFailure(err)
		}
		if !send {
			return *prior, nil
		}
	}
	res, err := p.Send(ctx, call.IdempotencyKey)
	finish(res, err)
	return res, err
}
