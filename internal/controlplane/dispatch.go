package controlplane

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/tracing"
	"countersign/store"
)

// permit is the outcome of asking for a dispatch permit.
type permit int

const (
	permitGranted  permit = iota
	permitRefused         // the invocation became not_dispatched
	permitDeferred        // in-flight or rate limit: try again later
)

// DispatchOnce claims approved invocations from PostgreSQL and dispatches
// each one that gets a permit, up to Config.Workers at a time, until none
// is left that can go now; it returns when those sends have finished.
// Several console instances may run it at once: each invocation is claimed
// by one (FOR UPDATE SKIP LOCKED) and leaves at most once. It returns how
// many were sent (the adapter was called). RunDispatcher does not use it:
// its workers keep claiming while sends are in flight (dispatchWorker).
func (s *Service) DispatchOnce(ctx context.Context) (int, error) {
	total := 0
	for {
		sent, deferred, err := s.dispatchPass(ctx)
		total += sent
		// Work deferred by an in-flight limit may go now that this pass's
		// sends have finished; work deferred by another instance's sends is
		// woken by that instance's NOTIFY instead.
		if err != nil || deferred == 0 || sent == 0 {
			return total, err
		}
	}
}

// dispatchPass grants every permit it can, sends those writes concurrently
// and waits for them; it reports how many it sent and deferred.
func (s *Service) dispatchPass(ctx context.Context) (sent, deferredCount int, err error) {
	w := newWorkers(s.cfg.Workers)
	defer func() {
		w.wg.Wait()
		sent = int(w.calls.Load())
	}()
	deferredCount, err = s.claimAll(ctx, w)
	return 0, deferredCount, err
}

// workers bounds how many writes one dispatcher sends at once.
type workers struct {
	sem   chan struct{}
	wg    sync.WaitGroup
	calls atomic.Int64
}

func newWorkers(n int) *workers { return &workers{sem: make(chan struct{}, n)} }

// claimAll asks for permits one at a time, each only once a worker is
// free, and hands each granted write to a worker that sends it; it returns
// when nothing approved is left that can go now, without waiting for the
// sends it started. Work deferred by an in-flight or rate limit is skipped
// for the rest of the scan and counted.
func (s *Service) claimAll(ctx context.Context, w *workers) (int, error) {
	var deferred []string
	for {
		// A permit starts a lease, so it is asked for only once a worker is
		// free to send at once: a queued write never waits for a slot while
		// its lease runs out.
		if !s.takeSlot(ctx, w.sem) {
			return len(deferred), ctx.Err()
		}
		g, p, err := s.nextPermit(ctx, deferred)
		if err != nil || g == nil {
			<-w.sem
			return len(deferred), err
		}
		if p != permitGranted {
			<-w.sem
			if p == permitDeferred {
				deferred = append(deferred, g.inv.ID)
			}
			continue
		}
		w.wg.Add(1)
		go func() {
			defer func() { <-w.sem; w.wg.Done() }()
			if s.send(ctx, *g) {
				w.calls.Add(1)
			}
		}()
	}
}

// takeSlot waits for a free worker slot; it reports false when ctx ended
// first.
func (s *Service) takeSlot(ctx context.Context, sem chan<- struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	default:
		if s.hooks.slotWait != nil {
			s.hooks.slotWait()
		}
		select {
		case sem <- struct{}{}:
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// Dispatch tries to dispatch one invocation now, if it is approved and no
// one else holds it. It reports whether it was sent (the adapter was
// called); the outcome is on the invocation.
func (s *Service) Dispatch(ctx context.Context, id string) (bool, error) {
	g, p, err := s.permitFor(ctx, func(tx *store.Tx) ([]store.Invocation, error) { return tx.ClaimApprovedByID(ctx, id) })
	if err != nil || g == nil || p != permitGranted {
		return false, err
	}
	return s.send(ctx, *g), nil
}

// grant is a claimed invocation with what its send needs: the lease token
// of a granted permit and the task's customer, read under the task's lock
// (so the send needs no query of its own for them).
type grant struct {
	inv       Invocation
	lease     string
	principal adapter.Principal
	// started says the permit's own transaction started the send (a
	// direct send): no startSend follows.
	started bool
}

func (s *Service) nextPermit(ctx context.Context, skip []string) (*grant, permit, error) {
	return s.permitFor(ctx, func(tx *store.Tx) ([]store.Invocation, error) { return tx.ClaimApproved(ctx, skip) })
}

// permitFor claims one invocation and, in the same transaction holding the
// task's lock, decides its permit: the task active and unexpired, the
// global stop off, the policy still enabled and its route (checked again
// with the exposure) satisfied by who approved, the budget not spent, the
// in-flight and rate limits open. A granted permit spends one write of the
// budget and moves the row to dispatching before anything is sent, under a
// lease whose token it returns: only the holder of that token may send the
// request (startSend) and record its outcome (finish).
func (s *Service) permitFor(ctx context.Context, claim func(*store.Tx) ([]store.Invocation, error)) (*grant, permit, error) {
	var out *grant
	var result permit
	began := time.Now()
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		rows, err := claim(tx)
		if err != nil || len(rows) == 0 {
			return err
		}
		row := rows[0]
		task, err := tx.LockTask(ctx, row.TaskID)
		if err != nil {
			return err
		}
		now := s.now()
		reason, defer_, err := s.permitCheck(ctx, tx, row, task, now)
		if err != nil {
			return err
		}
		switch {
		case defer_:
			inv, err := fromRow(row)
			out, result = &grant{inv: inv}, permitDeferred
			return err
		case reason != "":
			inv, err := fromRow(row)
			if err != nil {
				return err
			}
			out, result = &grant{inv: inv}, permitRefused
			r := string(reason)
			if _, err := tx.TransitionInvocation(ctx, row.ID, []string{string(Approved)}, row.Version, string(NotDispatched), now,
				store.InvocationChange{NotDispatchedReason: &r, FinishedAt: &now}); err != nil {
				return err
			}
			return s.record(ctx, tx, SystemActor, EventInvocationNotDispatched, row.TaskID, row.ID, map[string]any{"reason": r})
		}
		out, err = s.grantPermit(ctx, tx, row, task, now, false)
		result = permitGranted
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	if result == permitRefused {
		tracing.Done(ctx, "permit", out.inv.ID, out.inv.TaskID, began, "permit", "refused", "state", string(NotDispatched))
	}
	return out, result, nil
}

// grantPermit grants row's permit, in the transaction holding its task's
// lock, once permitCheck found nothing against it: it spends one write of
// the budget and moves the row to dispatching under a new lease, whose
// token only the returned grant holds. started says the request leaves
// right after this commit, from the same process (a direct send): the
// lease is then the one it leaves under, and dispatch.started is
// journaled here rather than by startSend.
func (s *Service) grantPermit(ctx context.Context, tx *store.Tx, row store.Invocation, task store.Task, now time.Time, started bool) (*grant, error) {
	if err := tx.UseWrite(ctx, task.ID, now); err != nil {
		return nil, err
	}
	lease := now.Add(s.lease())
	leaseToken := newID("lease")
	updated, err := tx.TransitionInvocation(ctx, row.ID, []string{string(Approved)}, row.Version, string(Dispatching), now,
		store.InvocationChange{PermitAt: &now, LeaseUntil: &lease, LeaseToken: &leaseToken, EffectiveArgs: row.ApprovedArgs})
	if err != nil {
		return nil, err
	}
	inv, err := fromRow(updated)
	if err != nil {
		return nil, err
	}
	entries := []entry{{actor: SystemActor, action: EventPermitGranted, taskID: row.TaskID, invocation: row.ID, data: map[string]any{
		"writes_used": task.WritesUsed + 1, "write_budget": task.WriteBudget, "lease_until": lease}}}
	if started {
		entries = append(entries, entry{actor: SystemActor, action: EventDispatchStarted, taskID: row.TaskID, invocation: row.ID,
			data: map[string]any{"lease_until": lease}})
	}
	if err := s.recordAll(ctx, tx, entries...); err != nil {
		return nil, err
	}
	return &grant{inv: inv, lease: leaseToken, principal: adapter.Principal{CustomerRef: task.CustomerRef}, started: started}, nil
}

func (s *Service) permitCheck(ctx context.Context, tx *store.Tx, row store.Invocation, task store.Task, now time.Time) (NotDispatchedReason, bool, error) {
	if reason := taskStateReason(TaskState(task.State)); reason != "" {
		return reason, false, nil
	}
	if !now.Before(task.ExpiresAt) {
		return ReasonTaskExpired, false, nil
	}
	// The stop, the policy (both share-locked) and the task's load, in one
	// round trip.
	reads, err := tx.PermitReads(ctx, row.System, row.Action, task.ID, now.Add(-time.Minute))
	if err != nil {
		return "", false, err
	}
	if reads.Stopped {
		return ReasonGlobalStop, false, nil
	}
	if reads.Policy == nil || !reads.Policy.Enabled {
		return ReasonPolicyDisabled, false, nil
	}
	// The route is checked again under the policy in force now: who
	// approved must be enough for what the route needs today, counting
	// only the people the policy lets decide now.
	rc, err := s.routeNow(ctx, tx, row, task.CustomerRef, policyFromRow(*reads.Policy))
	if err != nil {
		return "", false, err
	}
	if rc.need > byPolicy {
		got, err := decided(ctx, tx, row, rc.policy)
		if err != nil {
			return "", false, err
		}
		if got < rc.need {
			return ReasonRouteChanged, false, nil
		}
	}
	if _, err := s.registry.System(row.System); err != nil {
		return ReasonNotConnected, false, nil
	}
	if task.WritesUsed >= task.WriteBudget {
		return ReasonBudgetSpent, false, nil
	}
	if reads.Inflight >= int(task.InflightLimit) || reads.PermitsSince >= int(task.RatePerMinute) {
		return "", true, nil
	}
	return "", false, nil
}

// taskStateReason is why nothing of a task in state st may be sent, or ""
// for an active task.
func taskStateReason(st TaskState) NotDispatchedReason {
	switch st {
	case TaskPaused:
		return ReasonTaskPaused
	case TaskCancelled:
		return ReasonTaskCancelled
	case TaskClosed:
		return ReasonTaskClosed
	}
	return ""
}

// send makes the one call this invocation gets, as the holder of lease,
// and records its outcome; it reports whether the adapter was called. Nothing
// here retries a write: a refusal is failed, a stale target or a request
// that never left is not dispatched, anything else unknown is unverified.
// A worker that no longer holds a current lease when the request would
// leave sends nothing (startSend).
func (s *Service) send(ctx context.Context, g grant) bool {
	inv, lease, principal := g.inv, g.lease, g.principal
	tracing.Done(ctx, "permit", inv.ID, inv.TaskID, time.Now(), "permit", "granted")
	ctx, span := tracing.Stage(ctx, "send", inv.ID, inv.TaskID, "system", inv.System, "action", inv.Action)
	defer span.End()
	sys, err := s.registry.System(inv.System)
	if err != nil {
		s.finish(ctx, inv, lease, NotDispatched, outcome{reason: ReasonNotConnected})
		return false
	}
	if !g.started {
		if s.hooks.beforeStart != nil {
			s.hooks.beforeStart(inv.ID)
		}
		if !s.startSend(ctx, inv, lease) {
			return false
		}
	}
	// The adapter's request ledger hands its record of the call's outcome
	// to finish, which writes it with the invocation's: one commit after
	// the request, not two.
	var ledger adapter.LedgerOutcomes
	callCtx, cancel := context.WithTimeout(adapter.WithLedgerOutcomes(ctx, &ledger), s.cfg.CallTimeout)
	result, err := sys.Execute(callCtx, principal, inv.Call())
	cancel()
	if err != nil {
		o := outcome{ledger: ledger.Take()}
		ae, ok := adapter.AsError(err)
		switch {
		case ok && ae.Code == adapter.CodeStaleTarget:
			o.reason, o.err = ReasonTargetChanged, ae
			s.finish(ctx, inv, lease, NotDispatched, o)
		case ok && ae.Outcome == adapter.NotSent:
			o.reason, o.err = ReasonUnreachable, ae
			s.finish(ctx, inv, lease, NotDispatched, o)
		case ok && ae.Outcome == adapter.Refused:
			o.err = ae
			s.finish(ctx, inv, lease, Failed, o)
		case ok:
			o.err = ae
			s.finish(ctx, inv, lease, Unverified, o)
		default:
			o.err = adapter.Unknowable(err)
			s.finish(ctx, inv, lease, Unverified, o)
		}
		return true
	}
	recorded := ledger.Take()
	verifyCtx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	verifyCtx, verifySpan := tracing.Stage(verifyCtx, "verify", inv.ID, inv.TaskID)
	v, err := sys.Verify(verifyCtx, principal, inv.Call(), &result)
	verifySpan.End()
	cancel()
	if err != nil {
		v = adapter.Verification{Evidence: "The read-back failed: " + err.Error(), At: s.now()}
	}
	if !v.Verified {
		s.finish(ctx, inv, lease, Unverified, outcome{result: &result, verification: &v, ledger: recorded, err: &adapter.Error{
			Code: "not_verified", Outcome: adapter.Unknown, Message: "The system accepted the request, but reading back did not find the change.",
			Hint: "Do not retry. A person will check the original request."}})
		return true
	}
	s.finish(ctx, inv, lease, Completed, outcome{result: &result, verification: &v, ledger: recorded})
	return true
}

type outcome struct {
	result       *adapter.Result
	verification *adapter.Verification
	err          *adapter.Error
	reason       NotDispatchedReason
	// ledger is what the adapter's request ledger would have recorded of
	// the call on its own (adapter.LedgerOutcomes).
	ledger []adapter.LedgerOutcome
	// notApplied: reconcile settles a call the system's authoritative
	// record never took (adapter.LookupResult.NotApplied) and records it
	// in the request ledger.
	notApplied bool
}

// finish records a dispatch's outcome, for the holder of lease only. It
// also accepts an invocation the sweeper already made unverified: a
// definite outcome found by the worker is evidence. A completed
// compensation reverses what it compensates.
func (s *Service) finish(ctx context.Context, inv Invocation, lease string, to State, o outcome) {
	ctx = context.WithoutCancel(ctx)
	tracing.Outcome(ctx, string(to))
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		now := s.now()
		ch := store.InvocationChange{FinishedAt: &now}
		data := map[string]any{"system": inv.System}
		if o.result != nil {
			ch.Result, _ = json.Marshal(o.result)
			data["reference"], data["short_reference"] = o.result.Reference, o.result.ShortReference
		}
		if o.verification != nil {
			ch.Verification, _ = json.Marshal(o.verification)
			data["evidence"] = o.verification.Evidence
		}
		if o.err != nil {
			ch.Error, _ = json.Marshal(o.err)
			data["code"], data["retryable"], data["message"] = o.err.Code, o.err.Retryable, o.err.Message
		}
		if o.reason != "" {
			r := string(o.reason)
			ch.NotDispatchedReason = &r
			data["reason"] = r
		}
		from := []string{string(Dispatching)}
		if to != Unverified {
			from = append(from, string(Unverified))
		}
		updated, err := tx.TransitionHeldInvocation(ctx, inv.ID, lease, from, string(to), now, ch)
		if err != nil {
			return err
		}
		for _, l := range o.ledger {
			if err := tx.FinishAdapterRequest(ctx, l.System, l.Key, l.State, l.Result, l.Error, l.At); err != nil {
				return err
			}
		}
		if err := s.record(ctx, tx, SystemActor, to.entered(), inv.TaskID, inv.ID, data); err != nil {
			return err
		}
		// A slot of the task's in-flight limit is free again: wake the
		// dispatchers for work they deferred.
		if err := tx.Notify(ctx, store.DispatchChannel, inv.TaskID); err != nil {
			return err
		}
		if to == Completed && updated.CompensatesID != nil {
			return s.markReversed(ctx, tx, *updated.CompensatesID, inv.ID)
		}
		return nil
	})
	if err != nil {
		s.log.Error("dispatch: record outcome", "invocation", inv.ID, "state", to, "error", err)
		// The ledger's record stands on its own: whatever became of the
		// invocation's, the call's outcome is evidence for reconciling it.
		for _, l := range o.ledger {
			if err := s.store.FinishAdapterRequest(ctx, l.System, l.Key, l.State, l.Result, l.Error, l.At); err != nil {
				s.log.Error("dispatch: record the call's outcome in the request ledger", "invocation", inv.ID, "error", err)
			}
		}
	}
}

func (s *Service) principalOf(ctx context.Context, taskID string) (adapter.Principal, error) {
	t, err := s.store.Task(ctx, taskID)
	if err != nil {
		return adapter.Principal{}, err
	}
	return adapter.Principal{CustomerRef: t.CustomerRef}, nil
}
