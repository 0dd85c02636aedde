package controlplane

import (
	"context"

	"countersign/internal/adapter"
	"countersign/internal/tracing"
)

// Inspection is the read-only record of an invocation's original call: the
// journal row and, for a call that may have left, what the business
// system's request ledger and evidence say about its key.
type Inspection struct {
	Invocation Invocation
	// Asked is true when the system was asked (the call may have left).
	Asked  bool
	Lookup adapter.LookupResult
	// LookupErr is set when the system could not be asked; the journal row
	// is still shown.
	LookupErr error
}

// Inspect reads an invocation and, when it got a permit, asks its system
// for the original call by idempotency key (adapter.Lookup). It changes
// nothing, here or in the system, and records no event: reconciling is
// Reconcile. It fails only when the invocation does not exist.
func (s *Service) Inspect(ctx context.Context, id string) (Inspection, error) {
	inv, err := s.Invocation(ctx, id)
	if err != nil {
		return Inspection{}, err
	}
	out := Inspection{Invocation: inv}
	if inv.PermitAt == nil {
		return out, nil
	}
	sys, err := s.registry.System(inv.System)
	if err != nil {
		out.LookupErr = adapterErr(err)
		return out, nil
	}
	principal, err := s.principalOf(ctx, inv.TaskID)
	if err != nil {
		return Inspection{}, err
	}
	ctx, span := tracing.Stage(ctx, "inspect", inv.ID, inv.TaskID)
	defer span.End()
	callCtx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	out.Asked = true
	out.Lookup, out.LookupErr = sys.Lookup(callCtx, principal, inv.Call())
	return out, nil
}
