package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/store"
)

// compensationFor returns the action that Reverse proposes to undo action on
// system. An action has one only when its spec names a compensation that
// takes nothing but the target: Reverse knows the target and nothing else,
// so a compensation that needs other values (the earlier description, the
// old address, a reason) is proposed by hand, not by Reverse. Otherwise
// the error is Invalid with code no_compensation and a hint saying what to
// do instead.
func (s *Service) compensationFor(system, action string) (adapter.ActionSpec, error) {
	_, spec, err := s.registry.Action(system, action)
	if err != nil {
		return adapter.ActionSpec{}, adapterErr(err)
	}
	noComp := func(hint string) error {
		return &apperr.Error{Kind: apperr.Invalid, Code: "no_compensation",
			Message: fmt.Sprintf("%s has no compensation that reverses it automatically.", spec.Name), Hint: hint}
	}
	if spec.Compensation == "" {
		return adapter.ActionSpec{}, noComp("This cannot be undone by the system; hand the case to a person.")
	}
	_, comp, err := s.registry.Action(system, spec.Compensation)
	if err != nil {
		return adapter.ActionSpec{}, adapterErr(err)
	}
	for _, p := range comp.Params {
		if p.Required && p.Name != comp.TargetParam {
			return adapter.ActionSpec{}, noComp(fmt.Sprintf("To undo it, propose %s yourself with the earlier values (%s), "+
				"or hand the case to a person.", comp.Name, p.Name))
		}
	}
	return comp, nil
}

// HasReversal reports whether inv, once completed, can be undone by
// Reverse: its quote said a compensation exists, and its action has one
// Reverse can propose from the target alone (compensationFor). It is the one
// rule behind the API's "reversible" and the console's "Propose the
// reversal", so neither offers a reversal Reverse would refuse. Reverse
// also needs inv completed and proposes in inv's own task, so a page that
// offers it checks those too (Task.TakesProposals).
func (s *Service) HasReversal(inv Invocation) bool {
	if !inv.Quote.Reversible {
		return false
	}
	_, err := s.compensationFor(inv.System, inv.Action)
	return err == nil
}

// Reverse proposes the compensation of a completed invocation as a new,
// linked invocation with its own approval. When it completes, the original
// becomes reversed. An original has at most one live compensation (not
// failed, rejected, expired or not dispatched): reversing it again returns
// that one, marked deduplicated, however long ago it was proposed.
func (s *Service) Reverse(ctx context.Context, actor Actor, id string) (Invocation, error) {
	inv, err := s.Invocation(ctx, id)
	if err != nil {
		return Invocation{}, err
	}
	if inv.State != Completed {
		return Invocation{}, &apperr.Error{Kind: apperr.IllegalTransition, Code: "illegal_transition",
			Message: fmt.Sprintf("Only a completed invocation can be reversed; this one is %s.", inv.State.Label())}
	}
	comp, err := s.compensationFor(inv.System, inv.Action)
	if err != nil {
		return Invocation{}, err
	}
	if live, found, err := s.liveCompensation(ctx, inv.ID); found || err != nil {
		return live, err
	}
	args, _ := json.Marshal(map[string]any{comp.TargetParam: inv.Target.ID})
	return s.Propose(ctx, Proposal{TaskID: inv.TaskID, System: inv.System, Action: comp.Name, Args: args,
		Actor: actor, Summary: "Reverse " + inv.Quote.Title, compensates: &inv})
}

func (s *Service) liveCompensation(ctx context.Context, originalID string) (Invocation, bool, error) {
	var out Invocation
	var found bool
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		row, err := tx.LiveCompensation(ctx, originalID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		out, err = fromRow(row)
		out.Deduplicated = true
		return err
	})
	return out, found, err
}
