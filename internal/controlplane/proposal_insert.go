package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"countersign/internal/adapter"
	"countersign/store"
)

// dryRun is a proposal after its dry run: what insertProposal records.
type dryRun struct {
	p     Proposal
	task  Task
	spec  adapter.ActionSpec
	quote adapter.Quote
	// canonical is the arguments as resolved, hash their sha256.
	canonical, hash []byte
	policy          Policy
	amount          *int64
	// disagrees says the summary disagrees with the quote, why how.
	disagrees bool
	why       string
}

// insertProposal records a proposal and routes it, in one transaction that
// holds the locks of its conversation's duplicates, of its customer's and
// target's exposure and of its task: it looks again for a duplicate and a
// block, applies the task's proposal budget and rate, and routes the amount
// together with the exposure counted under those locks.
func (s *Service) insertProposal(ctx context.Context, d dryRun) (Invocation, error) {
	quoteJSON, err := json.Marshal(d.quote)
	if err != nil {
		return Invocation{}, err
	}
	ownerName := ""
	if d.policy.Stage == StageAutonomous && d.policy.OwnerID != nil {
		// Read before the transaction: it must not wait for a second
		// connection while it holds locks others queue on.
		if owner, err := s.store.UserByID(ctx, *d.policy.OwnerID); err == nil {
			ownerName = owner.Name
		}
	}
	var direct *directSend
	if d.policy.Stage == StageAutonomous && d.p.compensates == nil {
		direct = s.reserveSend()
	}
	var out Invocation
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		locked, dup, err := s.recheckProposal(ctx, tx, d)
		if dup != nil {
			out = *dup
		}
		if err != nil || dup != nil {
			return err
		}
		out, err = s.recordRouted(ctx, tx, d, quoteJSON, locked, direct, ownerName)
		return err
	})
	if !direct.done(err) && err == nil && !out.Deduplicated && out.State == Approved {
		// Committed and approved by policy: this instance's dispatcher
		// claims it now, without waiting for its NOTIFY to come back.
		s.kick()
	}
	return out, err
}

// recheckProposal takes the proposal's locks in tx (its twins', its
// exposure's, then its task's) and looks again at what admitted it before
// its dry run. It returns the task as its grants leave it, or the live
// twin (a duplicate, or the original's live compensation) to answer with
// instead.
func (s *Service) recheckProposal(ctx context.Context, tx *store.Tx, d dryRun) (store.Task, *Invocation, error) {
	p, task, policy, spec := d.p, d.task, d.policy, d.spec
	// Serialise identical proposals, then look again: a twin may have
	// committed while this one was being dry-run.
	if s.hooks.beforeExposureLock != nil {
		s.hooks.beforeExposureLock()
	}
	// The twins' lock first, then the exposure's, in one statement.
	o := objectOf(policy.System, d.quote.Target)
	locks := append([]string{fmt.Sprintf("propose:%s:%s:%s:%x", task.ConversationID, policy.System, spec.Name, d.hash)},
		exposureLocks(o, spec.Name, task.CustomerRef, d.amount != nil)...)
	if err := tx.AdvisoryLocks(ctx, locks...); err != nil {
		return store.Task{}, nil, err
	}
	// The task's lock and what is checked under it, in one round trip.
	now := s.now()
	checks, err := tx.ProposalChecks(ctx, store.ProposalChecksQuery{TaskID: task.ID,
		Duplicate:   s.duplicateQuery(task, policy.System, spec, o, d.canonical, d.hash),
		CustomerRef: task.CustomerRef, TargetID: d.quote.Target.ID, ProposalsSince: now.Add(-time.Minute),
		Standing: store.StandingQuery{KeyID: p.Actor.KeyID, GrantID: p.Actor.GrantID, System: policy.System, Action: spec.Name}})
	if err != nil {
		return store.Task{}, nil, err
	}
	// What admitted the proposal before its dry run must still hold
	// now, under the task's lock: a cancel, a pause, a revoked key
	// that committed meanwhile is seen here, and one still to come
	// waits for this commit.
	if err := s.mayRecord(p.Actor, checks.Task, checks.Standing, write{system: policy.System, action: spec.Name,
		compensation: p.compensates != nil, policyVersion: policy.Version}); err != nil {
		return store.Task{}, nil, err
	}
	locked := withinGrants(checks.Task, checks.Standing)
	if p.compensates != nil {
		// One live compensation per original, whatever the window:
		// the lock above serialises reversals of the same original.
		if live, err := tx.LiveCompensation(ctx, p.compensates.ID); err == nil {
			out, err := fromRow(live)
			out.Deduplicated = true
			return locked, &out, err
		} else if !errors.Is(err, store.ErrNotFound) {
			return store.Task{}, nil, err
		}
	}
	if checks.Duplicate != nil {
		out, err := fromRow(*checks.Duplicate)
		out.Deduplicated = true
		return locked, &out, err
	}
	if checks.Block != nil {
		return store.Task{}, nil, blockedErr(d.quote.Target.Kind, &adapter.Error{Message: "it was refused in another request a moment ago."})
	}
	if err := proposalAllowed(locked, checks.RecentProposals); err != nil {
		return store.Task{}, nil, err
	}
	return locked, nil, nil
}

// recordRouted routes the proposal with the exposure counted under the
// locks recheckProposal took, inserts it, records its events and, when its
// policy approves it, grants its permit in tx.
func (s *Service) recordRouted(ctx context.Context, tx *store.Tx, d dryRun, quoteJSON []byte, locked store.Task,
	direct *directSend, ownerName string) (Invocation, error) {
	var prior int64
	var u unlike
	if d.amount != nil {
		var err error
		if prior, u, err = s.priorExposure(ctx, tx, d.policy, objectOf(d.policy.System, d.quote.Target), d.spec.Name, d.task.CustomerRef, "", d.quote.Currency); err != nil {
			return Invocation{}, err
		}
	}
	if s.hooks.exposureCounted != nil {
		s.hooks.exposureCounted()
	}
	route := routeOf(d.policy, d.amount, prior, u, d.p.compensates != nil)
	inserted, err := tx.InsertInvocation(ctx, s.proposalRow(d, quoteJSON, route, prior))
	if err != nil {
		return Invocation{}, err
	}
	if err := s.mintLink(ctx, tx, inserted, d.task.CustomerRef); err != nil {
		return Invocation{}, err
	}
	out, err := fromRow(inserted)
	if err != nil {
		return out, err
	}
	if err := s.recordProposal(ctx, tx, d.p, out, d.policy, ownerName, route, prior, d.disagrees, d.why); err != nil {
		return out, err
	}
	if route.State != Approved {
		return out, nil
	}
	// Approved by policy: its permit and lease in this transaction,
	// under the task's lock taken above, and its request leaves
	// right after the commit.
	if granted, err := direct.permit(ctx, tx, inserted, locked); err != nil || granted != nil {
		if granted != nil {
			out = *granted
		}
		return out, err
	}
	return out, tx.Notify(ctx, store.DispatchChannel, out.ID)
}

// proposalRow is the invocation row a routed proposal inserts.
func (s *Service) proposalRow(d dryRun, quoteJSON []byte, route Route, prior int64) store.Invocation {
	p, task, policy := d.p, d.task, d.policy
	now := s.now()
	id := newID("inv")
	row := store.Invocation{ID: id, TaskID: task.ID, ConversationID: task.ConversationID, System: policy.System,
		Action: d.spec.Name, TargetKind: d.quote.Target.Kind, TargetID: d.quote.Target.ID, TargetDisplay: d.quote.Target.Display,
		TargetVersion: d.quote.Target.Version, State: string(route.State), ProposedArgs: d.canonical, ArgsHash: d.hash,
		Quote: quoteJSON, Summary: p.Summary, SummaryDisagrees: d.disagrees, IdempotencyKey: idempotencyKey(task.ID, id),
		AmountCents: d.amount, PolicyStage: int16(policy.Stage), PolicyVersion: policy.Version,
		RouteReason: route.Reason, ExposureCents: prior, CreatedAt: now}
	if route.State == Approved {
		row.ApprovedArgs, row.ApprovedArgsHash, row.ApprovedAt = d.canonical, d.hash, &now
	} else {
		deadline := now.Add(route.Window)
		row.DeadlineAt = &deadline
	}
	if p.ClientKey != "" {
		row.ClientKey = &p.ClientKey
	}
	if p.compensates != nil {
		row.CompensatesID = &p.compensates.ID
	}
	return row
}

func (s *Service) recordProposal(ctx context.Context, tx *store.Tx, p Proposal, inv Invocation, policy Policy, ownerName string, route Route, prior int64, disagrees bool, why string) error {
	// The quote's title and currency as proposed: the timeline names the
	// request by what was proposed, not by what a later edit made of it.
	data := map[string]any{"action": inv.Action, "system": inv.System, "target": inv.Target.Display,
		"amount_cents": inv.AmountCents, "summary": inv.Summary, "title": inv.Quote.Title, "currency": inv.Quote.Currency}
	if inv.CompensatesID != "" {
		data["compensates"] = inv.CompensatesID
	}
	entries := []entry{{actor: p.Actor, action: EventInvocationProposed, taskID: inv.TaskID, invocation: inv.ID, data: data}}
	if disagrees {
		entries = append(entries, entry{actor: SystemActor, action: EventInvocationSummaryDisagreed, taskID: inv.TaskID, invocation: inv.ID,
			data: map[string]any{"summary": inv.Summary, "quote": inv.Quote.Title, "why": why}})
	}
	routeData := map[string]any{"reason": route.Reason, "stage": int(policy.Stage), "policy": policy.Name()}
	if prior > 0 {
		routeData["exposure_before_cents"] = prior
	}
	actor := SystemActor
	if route.State == Approved {
		actor = Actor{Kind: ActorPolicy, ID: policy.Name(), Name: policy.Name()}
		routeData["owner_id"], routeData["owner_name"] = *policy.OwnerID, ownerName
	}
	entries = append(entries, entry{actor: actor, action: route.State.entered(), taskID: inv.TaskID, invocation: inv.ID, data: routeData})
	return s.recordAll(ctx, tx, entries...)
}
