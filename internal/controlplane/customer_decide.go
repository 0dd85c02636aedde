package controlplane

import (
	"context"
	"errors"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/consent"
	"countersign/internal/stepup"
	"countersign/internal/tracing"
	"countersign/store"
)

// CustomerVerb is what a customer decides on one of their requests.
type CustomerVerb string

// The customer's decisions.
const (
	// CustomerConfirm confirms the request after a fresh dry-run: a changed
	// target replaces it with a fresh quote instead (Requoted).
	CustomerConfirm CustomerVerb = "confirm"
	// CustomerDecline refuses it, with an optional reason.
	CustomerDecline CustomerVerb = "decline"
	// CustomerStop pauses the request's task as a person's pause.
	CustomerStop CustomerVerb = "stop"
)

// CustomerDecision is one decision of a customer on one request.
type CustomerDecision struct {
	// Actor is the customer (CustomerActor, CustomerProvedOn).
	Actor        Actor
	InvocationID string
	Verb         CustomerVerb
	// Reason is a decline's, for the assistant.
	Reason string
	// ProofAccepted, when set, says whether the request's system accepts
	// the actor's kind of proof (confirmation.Service.ProofAccepted).
	ProofAccepted func(system string) error
	// QuoteVersion and QuoteDigest are what the page showed the customer:
	// the request's version and consent.QuoteDigest of its quote. The
	// decision's consent evidence (internal/consent) records them.
	QuoteVersion int32
	QuoteDigest  []byte
	// Passkey is the customer's assertion made for this decision
	// (consent.Challenge of the id, QuoteVersion, QuoteDigest and the
	// verb), when they decided with a passkey; nil otherwise. It is
	// required of an Actor proven by "passkey" and refused from any other,
	// and checked in the decision's transaction against the passkey the
	// customer registered for the request's system (customerPasskeyProof).
	Passkey *stepup.Assertion
	// Locale and LocaleFrom are the language the page was in and why
	// (internal/locale.Choice); the decision's audit events record them
	// with the actor, so the audit says what language the customer read.
	Locale, LocaleFrom string
}

// CustomerDecided is what a customer's decision did.
type CustomerDecided struct {
	// Invocation is the request as it stands now: the fresh quote when one
	// replaced it (Requoted), else the one decided on.
	Invocation Invocation
	Task       Task
	// Done says the decision was made. It is false when there was nothing
	// to decide any more (decided, expired, stopped meanwhile, or
	// replaced by a fresh quote): the page shows what happened instead.
	Done bool
	// Requoted says a fresh quote replaced the request on confirm.
	Requoted bool
}

// CustomerDecide is the one call of every customer decision — confirm,
// decline, stop. It loads the invocation and its task once, checks once
// that the customer owns the request with a proof that may decide it
// (customerMayDecide, then d.ProofAccepted), and transitions. Another
// customer's request and an unknown id are apperr.NotFound alike; a proof
// made on another request is prove_for_this_request. A confirm re-runs
// the dry-run between the load and the transition, outside any
// transaction; the transition is then guarded by the version loaded, so
// nothing changed meanwhile is decided unseen. A request decided
// meanwhile is no error: Done is false.
func (s *Service) CustomerDecide(ctx context.Context, d CustomerDecision) (CustomerDecided, error) {
	began := time.Now()
	actor := d.Actor
	if actor.Kind != ActorCustomer || actor.Proof == "" {
		return CustomerDecided{}, apperr.New(apperr.Forbidden, "Only the customer, once they proved who they are, can decide this.")
	}
	actor.Locale, actor.LocaleFrom = d.Locale, d.LocaleFrom
	var out CustomerDecided
	var row store.Invocation
	var shown consent.Evidence
	var task store.Task
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		// A stop locks the task, as every change of a task does.
		if row, task, err = loadRequest(ctx, tx, d.InvocationID, d.Verb == CustomerStop); err != nil {
			return err
		}
		if err := customerMayDecide(ctx, tx, actor, row, task.CustomerRef); err != nil {
			return err
		}
		if d.ProofAccepted != nil {
			if err := d.ProofAccepted(row.System); err != nil {
				return err
			}
		}
		// A request that no longer awaits the customer has nothing to
		// decide (a second click is shown the outcome); one that does is
		// decided only on the quote the customer was shown. Checked before
		// out is set: decidedMeanwhile must not swallow the refusal.
		if d.Verb != CustomerStop && row.State == string(AwaitingConfirmation) {
			// A confirm records in the transaction after its dry run,
			// which checks the passkey again and records its use there.
			if d.Passkey, err = s.customerPasskeyProof(ctx, tx, actor, row, task.CustomerRef, d.Passkey, d.Verb == CustomerDecline); err != nil {
				return err
			}
			if shown, err = shownQuote(row, actor, d); err != nil {
				return err
			}
		}
		if out.Invocation, err = fromRow(row); err != nil {
			return err
		}
		out.Task = TaskFromRow(task)
		switch d.Verb {
		case CustomerConfirm:
			return nil // after the dry-run, below
		case CustomerDecline:
			if row.State != string(AwaitingConfirmation) {
				return nil
			}
			// Checked once the request is the customer's: the page asks
			// again, showing it.
			reason, err := declineReason(d.Reason)
			if err != nil {
				return err
			}
			inv, err := s.declineRow(ctx, tx, actor, row.ID, row.Version, AwaitingConfirmation, "decline", EventInvocationDeclined, reason)
			if err != nil {
				return err
			}
			if err := s.recordConsent(ctx, tx, actor, row, shown); err != nil {
				return err
			}
			out.Invocation, out.Done = inv, true
			return nil
		case CustomerStop:
			t, err := s.changeLockedTask(ctx, tx, actor, task, 0, "pause", TaskPaused, []TaskState{TaskActive}, ReasonTaskPaused)
			if err != nil {
				return err
			}
			out.Task, out.Done = t, true
			return nil
		}
		return apperr.New(apperr.Invalid, "A customer confirms, declines or stops a request.")
	})
	if err != nil {
		if decidedMeanwhile(err) && out.Invocation.ID != "" {
			return out, nil
		}
		if apperr.Is(err, apperr.Invalid) && out.Invocation.ID != "" {
			return out, err // the page asks again, with what the customer wrote
		}
		return CustomerDecided{}, err
	}
	if d.Verb == CustomerDecline && out.Done {
		tracing.Done(ctx, "decide", out.Invocation.ID, out.Invocation.TaskID, began, "decision", "decline", "actor", "customer", "state", string(out.Invocation.State))
	}
	if d.Verb != CustomerConfirm || !s.mayConfirm(row, task) {
		return out, nil
	}
	// A task that expired takes no confirmation (approveRow ends the
	// request task_expired): no fresh quote is asked of the system for it.
	var rq Requoted
	if s.now().Before(task.ExpiresAt) {
		if rq, err = s.requoteLoaded(ctx, actor, row, task); err != nil {
			return CustomerDecided{}, err
		}
	}
	if rq.Changed {
		out.Requoted = true
		if rq.Current.ID != "" {
			out.Invocation = rq.Current
		} else if rq.Previous != nil {
			out.Invocation = *rq.Previous
		}
		return out, nil
	}
	// The confirmation, the permit and the lease in one transaction; the
	// request leaves right after it commits.
	direct := s.reserveSend()
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		// The passkey is checked again in the transaction that confirms: one
		// removed since the first is refused here.
		if _, err := s.customerPasskeyProof(ctx, tx, actor, row, task.CustomerRef, d.Passkey, true); err != nil {
			return err
		}
		inv, err := s.approveRow(ctx, tx, actor, row, task, row.Version, AwaitingConfirmation, "confirm", EventInvocationConfirmed)
		if err != nil {
			return err
		}
		if err := s.recordConsent(ctx, tx, actor, row, shown); err != nil {
			return err
		}
		out.Invocation, err = direct.permitApproved(ctx, tx, inv)
		return err
	})
	sending := direct.done(err)
	if decidedMeanwhile(err) {
		// What happened meanwhile (a decision elsewhere, a cancellation),
		// for the page to show.
		if now, rerr := s.Invocation(ctx, row.ID); rerr == nil {
			out.Invocation = now
		} else {
			out.Invocation, _ = fromRow(row)
		}
		return out, nil
	}
	if err != nil {
		return CustomerDecided{}, err
	}
	if !sending {
		s.kick()
	}
	out.Done = true
	tracing.Done(ctx, "decide", out.Invocation.ID, out.Invocation.TaskID, began, "decision", "confirm", "actor", "customer", "state", string(out.Invocation.State))
	return out, nil
}

// mayConfirm says whether row still awaits its customer's confirmation:
// awaiting it, before its deadline, with its task still working.
func (s *Service) mayConfirm(row store.Invocation, task store.Task) bool {
	return row.State == string(AwaitingConfirmation) && task.State == string(TaskActive) &&
		(row.DeadlineAt == nil || s.now().Before(*row.DeadlineAt))
}

// decidedMeanwhile says err is a guarded transition that found the
// request or its task moved on.
func decidedMeanwhile(err error) bool {
	e, ok := apperr.As(err)
	return ok && (e.Kind == apperr.IllegalTransition || e.Kind == apperr.Conflict) || errors.Is(err, store.ErrConflict)
}
