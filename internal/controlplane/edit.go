package controlplane

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/tracing"
	"countersign/store"
)

// editLoaded records an edit of inv, loaded and authorised by StaffDecide
// (StaffEdit), after its dry run. The new arguments are validated against
// the action's spec, the target must stay the same object, and the
// adapter dry-runs them again: the new quote replaces the shown one, and
// the edited arguments and their hash become the invocation's approved
// arguments (the proposed ones are kept). The invocation stays awaiting
// approval: an approval must then name the edited hash, so a later change
// is refused. The event invocation.edited keeps the quote that was
// replaced. Who may edit is who may approve (approvers.go): asked before
// the dry run, so nobody else makes the system quote, and again here,
// under the locks of the change, where the transition is guarded by
// expectedVersion. The edit is recorded only if its task still takes
// writes and the action's policy is still on after the dry run
// (mayRecord).
func (s *Service) editLoaded(ctx context.Context, actor Actor, inv Invocation, expectedVersion int32, raw json.RawMessage) (Invocation, error) {
	id := inv.ID
	e, err := s.dryRunEdit(ctx, inv, raw)
	if err != nil {
		return Invocation{}, err
	}
	canonical, hash, quote, principal := e.canonical, e.hash, e.quote, e.principal
	quoteJSON, err := json.Marshal(quote)
	if err != nil {
		return Invocation{}, err
	}
	var out Invocation
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		// The request's lock, then the task's (lockWaitingFirst). The
		// fresh quote is recorded only if what admits a write still holds
		// after the dry run, under the task's lock (mayRecord).
		current, _, err := s.lockForChange(ctx, tx, actor, inv, "edit", true)
		if err != nil {
			return err
		}
		now := s.now()
		if inv.DeadlineAt != nil && now.After(*inv.DeadlineAt) {
			return apperr.New(apperr.IllegalTransition, "This request expired before it was decided.")
		}
		version := quote.Target.Version
		ch := store.InvocationChange{ApprovedArgs: canonical, ApprovedArgsHash: hash[:], Quote: quoteJSON, TargetVersion: &version,
			AmountCents: quote.AmountCents}
		// The edited amount is routed again with the exposure, under the
		// policy in force: the card says what its approval needs now (the
		// approval itself checks the second-approver rule again).
		if _, _, err := mayDecideIn(ctx, tx, actor, current, "edit"); err != nil {
			return err
		}
		current.AmountCents = quote.AmountCents
		if rc, found, err := s.recheckRow(ctx, tx, current, principal.CustomerRef); err != nil {
			return err
		} else if found {
			ch.ExposureCents = &rc.prior
			if rc.route.State == AwaitingApproval {
				ch.RouteReason = &rc.route.Reason
			}
		}
		updated, err := tx.TransitionInvocation(ctx, id, []string{string(AwaitingApproval)}, expectedVersion, string(AwaitingApproval), now, ch)
		if err != nil {
			return s.transitionErr(ctx, tx, id, expectedVersion, "edit", err)
		}
		if out, err = fromRow(updated); err != nil {
			return err
		}
		before := inv.Args.Approved
		if before == nil {
			before = inv.Args.Proposed
		}
		return s.record(ctx, tx, actor, EventInvocationEdited, inv.TaskID, id, map[string]any{
			"args_before": json.RawMessage(before), "args_after": json.RawMessage(canonical),
			"args_hash": hex.EncodeToString(hash[:]), "quote_before": inv.Quote, "quote_after": quote})
	})
	return out, err
}

// editQuote is an edit's arguments after their dry run.
type editQuote struct {
	principal adapter.Principal
	canonical []byte
	hash      [sha256.Size]byte
	quote     adapter.Quote
}

// dryRunEdit validates an edit's arguments against inv's action, resolves
// its target (which must stay inv's) and dry-runs them.
func (s *Service) dryRunEdit(ctx context.Context, inv Invocation, raw json.RawMessage) (editQuote, error) {
	ctx, span := tracing.Stage(ctx, "quote", inv.ID, inv.TaskID, "edit", "true")
	defer span.End()
	sys, spec, err := s.registry.Action(inv.System, inv.Action)
	if err != nil {
		return editQuote{}, adapterErr(err)
	}
	args, err := spec.Validate(raw)
	if err != nil {
		return editQuote{}, adapterErr(err)
	}
	principal, err := s.principalOf(ctx, inv.TaskID)
	if err != nil {
		return editQuote{}, err
	}
	target, err := sys.Resolve(ctx, principal, spec.TargetKind, fmt.Sprint(args[spec.TargetParam]))
	if err != nil {
		return editQuote{}, adapterErr(err)
	}
	if target.ID != inv.Target.ID {
		return editQuote{}, apperr.InvalidFields(map[string]string{spec.TargetParam: "an edit cannot change which " +
			spec.TargetKind + " is acted on; reject the request and let the assistant propose again"})
	}
	args[spec.TargetParam] = target.ID
	canonical := adapter.Canonical(args)
	quote, err := sys.DryRun(ctx, principal, spec.Name, canonical)
	if err != nil {
		return editQuote{}, adapterErr(err)
	}
	return editQuote{principal: principal, canonical: canonical, hash: sha256.Sum256(canonical), quote: quote}, nil
}

// lockForChange takes, in tx, the locks of a change to inv made after a
// dry run (an edit, a fresh quote's successor), in the one lock order: the
// request's row, then its task's, read with what admits a write. An
// exposure lock, when the change takes one, comes before and is the
// caller's. When newWrite is set, what admitted the write must still hold
// under the task's lock (mayRecord); path names the change to the tests'
// changeLocked hook. It returns the request's locked row
// and the standing of what admits the write (its policy among them).
func (s *Service) lockForChange(ctx context.Context, tx *store.Tx, actor Actor, inv Invocation, path string,
	newWrite bool) (store.Invocation, store.Standing, error) {
	current, err := tx.LockInvocation(ctx, inv.ID)
	if err != nil {
		return store.Invocation{}, store.Standing{}, err
	}
	task, st, err := tx.WriteChecks(ctx, inv.TaskID, store.StandingQuery{OwnerTask: inv.TaskID, System: inv.System, Action: inv.Action})
	if err != nil {
		return store.Invocation{}, store.Standing{}, err
	}
	if s.hooks.changeLocked != nil {
		s.hooks.changeLocked(path)
	}
	if newWrite {
		if err := s.mayRecord(actor, task, st, write{system: inv.System, action: inv.Action,
			compensation: inv.CompensatesID != ""}); err != nil {
			return store.Invocation{}, store.Standing{}, err
		}
	}
	return current, st, nil
}

// ProposedQuote returns the quote the assistant's own arguments produced:
// the invocation's quote, unless an agent edited the arguments, in which
// case the one the first edit replaced. It is what an edit is compared to.
func (s *Service) ProposedQuote(ctx context.Context, inv Invocation) (adapter.Quote, error) {
	if inv.Args.Approved == nil {
		return inv.Quote, nil
	}
	events, err := s.store.EventsForInvocation(ctx, inv.ID)
	if err != nil {
		return adapter.Quote{}, err
	}
	for _, e := range events {
		if EventAction(e.Action) != EventInvocationEdited {
			continue
		}
		var data struct {
			QuoteBefore adapter.Quote `json:"quote_before"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil {
			return adapter.Quote{}, fmt.Errorf("controlplane: decode edit of %s: %w", inv.ID, err)
		}
		return data.QuoteBefore, nil
	}
	return inv.Quote, nil
}

// IsQuestion reports whether a decision reason is an agent's question sent
// back to the assistant, and returns the question.
func IsQuestion(reason string) (string, bool) {
	return strings.CutPrefix(reason, "question: ")
}
