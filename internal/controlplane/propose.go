package controlplane

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/tracing"
	"countersign/store"
)

// Proposal is an assistant's request to make a write.
type Proposal struct {
	TaskID string
	// System may be empty when exactly one system the task may use offers
	// the action.
	System string
	Action string
	Args   json.RawMessage
	// Summary is the model's own description of what it proposes; the quote
	// wins when they disagree, and the disagreement is recorded.
	Summary string
	// ClientKey is the caller's Idempotency-Key, if it sent one.
	ClientKey string
	Actor     Actor
	// compensates is set by Reverse.
	compensates *Invocation
}

// Propose dry-runs a proposal through the adapter, records the invocation
// and its quote, and routes it by policy. The same action with the same
// arguments in the same conversation within the dedup window returns the
// existing invocation with Deduplicated set, whichever of the conversation's
// tasks it came through. A refusal by the adapter is returned as an apperr
// with the adapter's code, retryable flag and hint; a policy refusal also
// blocks further proposals by the customer on that target, in every task,
// until a person lifts it. Each new invocation counts against the task's
// proposal budget and rate (proposalAllowed). What admitted the proposal
// when it began (the task active and unexpired, the key, the switches,
// the policy) is checked again in the transaction that records it, after
// the dry run (mayRecord): a change that committed meanwhile refuses it
// and nothing is recorded.
func (s *Service) Propose(ctx context.Context, p Proposal) (inv Invocation, err error) {
	began := time.Now()
	defer func() {
		if err == nil && !inv.Deduplicated {
			tracing.Proposed(ctx, inv.ID, inv.TaskID, began, "action", inv.System+"/"+inv.Action, "state", string(inv.State))
		}
	}()
	task, err := s.Task(ctx, p.TaskID)
	if err != nil {
		return Invocation{}, err
	}
	if p.Actor.Kind != ActorAssistant && p.Actor.Kind != ActorUser {
		return Invocation{}, apperr.New(apperr.Forbidden, "Only an assistant or a console user can propose.")
	}
	// Answered fast here; what holds is mayRecord, made again under the
	// task's lock in the transaction that records the proposal.
	if err := taskTakesWrites(task.State, task.ExpiresAt, s.now()); err != nil {
		return Invocation{}, err
	}
	if p.ClientKey != "" {
		return s.proposeWithClientKey(ctx, task, p)
	}
	return s.propose(ctx, task, p)
}

func (s *Service) propose(ctx context.Context, task Task, p Proposal) (Invocation, error) {
	sys, spec, err := s.actionFor(task, p.System, p.Action, p.compensates != nil)
	if err != nil {
		return Invocation{}, err
	}
	args, err := spec.Validate(p.Args)
	if err != nil {
		return Invocation{}, adapterErr(err)
	}
	principal := adapter.Principal{CustomerRef: task.CustomerRef}
	target, err := sys.Resolve(ctx, principal, spec.TargetKind, fmt.Sprint(args[spec.TargetParam]))
	if err != nil {
		return Invocation{}, adapterErr(err)
	}
	// The resolved id replaces the words, so "my Pro plan" and its id are the
	// same request.
	args[spec.TargetParam] = target.ID
	canonical := adapter.Canonical(args)
	hash := sha256.Sum256(canonical)
	if dup, found, err := s.recentDuplicate(ctx, task.ConversationID, sys.Name(), spec.Name, hash[:]); found || err != nil {
		return dup, err
	}
	if err := s.checkBlock(ctx, task, sys.Name(), spec.Name, target, p.Actor); err != nil {
		return Invocation{}, err
	}
	quote, err := sys.DryRun(ctx, principal, spec.Name, canonical)
	if err != nil {
		return Invocation{}, s.refused(ctx, task, sys.Name(), spec.Name, target, p.Actor, err)
	}
	policy, err := s.Policy(ctx, sys.Name(), spec.Name)
	if err != nil {
		return Invocation{}, err
	}
	if !policy.Enabled {
		return Invocation{}, errActionDisabled()
	}
	amount := quote.AmountCents
	if spec.AmountParam != "" && amount == nil {
		// A money action routes as money even when its quote forgot the
		// amount: the arguments say how much.
		if n, ok := args[spec.AmountParam].(int64); ok {
			amount = &n
		}
	}
	disagrees, why := summaryDisagrees(p.Summary, quote)
	return s.insertProposal(ctx, p, task, spec, quote, canonical, hash[:], policy, amount, disagrees, why)
}

// actionFor finds the system and spec of an action the task may use. A
// compensation may use its action whatever the task lists: it is
// authorised by its own approval.
func (s *Service) actionFor(task Task, system, action string, compensation bool) (adapter.System, adapter.ActionSpec, error) {
	if system == "" {
		found := s.systemsFor(task, action)
		switch len(found) {
		case 0:
			return nil, adapter.ActionSpec{}, notAllowed(action)
		case 1:
			system = found[0]
		default:
			return nil, adapter.ActionSpec{}, apperr.InvalidFields(map[string]string{
				"system": "several systems offer " + action + "; name one of: " + strings.Join(found, ", ")})
		}
	}
	if !compensation && !task.Allows(system, action) {
		return nil, adapter.ActionSpec{}, notAllowed(action)
	}
	sys, spec, err := s.registry.Action(system, action)
	if err != nil {
		return nil, adapter.ActionSpec{}, adapterErr(err)
	}
	return sys, spec, nil
}

// systemsFor names the connected systems offering action that task may
// use it on, sorted: where a proposal or a hand-off draft that names no
// system goes when there is exactly one.
func (s *Service) systemsFor(task Task, action string) []string {
	return slices.DeleteFunc(s.registry.Offering(action), func(system string) bool { return !task.Allows(system, action) })
}

func notAllowed(action string) error {
	return &apperr.Error{Kind: apperr.Forbidden, Code: "action_not_allowed",
		Message: fmt.Sprintf("This task may not use %q.", action),
		Hint:    "List the tools for this task; propose only what it allows, or hand the request to a person."}
}

// recentDuplicate finds the same request made in the same conversation
// within the dedup window, through whichever of its tasks: a conversation
// belongs to one assistant, and opening a task is not a new request. Only
// one that is live (its task can still send it) or completed holds a new
// proposal back.
func (s *Service) recentDuplicate(ctx context.Context, conversationID, system, action string, hash []byte) (Invocation, bool, error) {
	// One statement, no transaction: insertProposal looks again under its
	// lock before it inserts.
	row, err := s.store.RecentDuplicate(ctx, conversationID, system, action, hash, s.now().Add(-s.cfg.DedupWindow), s.now())
	if errors.Is(err, store.ErrNotFound) {
		return Invocation{}, false, nil
	}
	if err != nil {
		return Invocation{}, false, err
	}
	out, err := fromRow(row)
	out.Deduplicated = true
	return out, true, err
}

// insertProposal records a proposal and routes it, in one transaction that
// holds the locks of its conversation's duplicates, of its customer's and
// target's exposure and of its task: it looks again for a duplicate and a
// block, applies the task's proposal budget and rate, and routes the amount
// together with the exposure counted under those locks.
func (s *Service) insertProposal(ctx context.Context, p Proposal, task Task, spec adapter.ActionSpec, quote adapter.Quote,
	canonical, hash []byte, policy Policy, amount *int64, disagrees bool, why string) (Invocation, error) {
	quoteJSON, err := json.Marshal(quote)
	if err != nil {
		return Invocation{}, err
	}
	ownerName := ""
	if policy.Stage == StageAutonomous && policy.OwnerID != nil {
		// Read before the transaction: it must not wait for a second
		// connection while it holds locks others queue on.
		if owner, err := s.store.UserByID(ctx, *policy.OwnerID); err == nil {
			ownerName = owner.Name
		}
	}
	var direct *directSend
	if policy.Stage == StageAutonomous && p.compensates == nil {
		direct = s.reserveSend()
	}
	var out Invocation
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		// Serialise identical proposals, then look again: a twin may have
		// committed while this one was being dry-run.
		if s.hooks.beforeExposureLock != nil {
			s.hooks.beforeExposureLock()
		}
		// The twins' lock first, then the exposure's, in one statement.
		locks := append([]string{fmt.Sprintf("propose:%s:%s:%s:%x", task.ConversationID, policy.System, spec.Name, hash)},
			exposureLocks(policy.System, spec.Name, task.CustomerRef, quote.Target.ID, amount != nil)...)
		if err := tx.AdvisoryLocks(ctx, locks...); err != nil {
			return err
		}
		// The task's lock and what is checked under it, in one round trip.
		now := s.now()
		checks, err := tx.ProposalChecks(ctx, store.ProposalChecksQuery{TaskID: task.ID, ConversationID: task.ConversationID,
			System: policy.System, Action: spec.Name, ArgsHash: hash, DuplicateSince: now.Add(-s.cfg.DedupWindow), Now: now,
			CustomerRef: task.CustomerRef, TargetID: quote.Target.ID, ProposalsSince: now.Add(-time.Minute),
			Standing: store.StandingQuery{KeyID: p.Actor.KeyID, System: policy.System, Action: spec.Name}})
		if err != nil {
			return err
		}
		// What admitted the proposal before its dry run must still hold
		// now, under the task's lock: a cancel, a pause, a revoked key
		// that committed meanwhile is seen here, and one still to come
		// waits for this commit.
		if err := s.mayRecord(p.Actor, checks.Task, checks.Standing, write{system: policy.System, action: spec.Name,
			compensation: p.compensates != nil, policyVersion: policy.Version}); err != nil {
			return err
		}
		locked := withinGrants(checks.Task, checks.Standing)
		if p.compensates != nil {
			// One live compensation per original, whatever the window:
			// the lock above serialises reversals of the same original.
			if live, err := tx.LiveCompensation(ctx, p.compensates.ID); err == nil {
				out, err = fromRow(live)
				out.Deduplicated = true
				return err
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		if checks.Duplicate != nil {
			out, err = fromRow(*checks.Duplicate)
			out.Deduplicated = true
			return err
		}
		if checks.Block != nil {
			return blockedErr(quote.Target.Kind, &adapter.Error{Message: "it was refused in another request a moment ago."})
		}
		if err := proposalAllowed(locked, checks.RecentProposals); err != nil {
			return err
		}
		var prior int64
		if amount != nil {
			if prior, err = s.priorExposure(ctx, tx, policy.System, spec.Name, task.CustomerRef, quote.Target.ID, ""); err != nil {
				return err
			}
		}
		if s.hooks.exposureCounted != nil {
			s.hooks.exposureCounted()
		}
		route := RouteExposure(policy, amount, prior, p.compensates != nil)
		now = s.now()
		id := newID("inv")
		row := store.Invocation{ID: id, TaskID: task.ID, ConversationID: task.ConversationID, System: policy.System,
			Action: spec.Name, TargetKind: quote.Target.Kind, TargetID: quote.Target.ID, TargetDisplay: quote.Target.Display,
			TargetVersion: quote.Target.Version, State: string(route.State), ProposedArgs: canonical, ArgsHash: hash,
			Quote: quoteJSON, Summary: p.Summary, SummaryDisagrees: disagrees, IdempotencyKey: idempotencyKey(task.ID, id),
			AmountCents: amount, PolicyStage: int16(policy.Stage), PolicyVersion: policy.Version,
			RouteReason: route.Reason, ExposureCents: prior, CreatedAt: now}
		if route.State == Approved {
			row.ApprovedArgs, row.ApprovedArgsHash, row.ApprovedAt = canonical, hash, &now
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
		inserted, err := tx.InsertInvocation(ctx, row)
		if err != nil {
			return err
		}
		if err := s.mintLink(ctx, tx, inserted, task.CustomerRef); err != nil {
			return err
		}
		if out, err = fromRow(inserted); err != nil {
			return err
		}
		if err := s.recordProposal(ctx, tx, p, out, policy, ownerName, route, prior, disagrees, why); err != nil {
			return err
		}
		if route.State != Approved {
			return nil
		}
		// Approved by policy: its permit and lease in this transaction,
		// under the task's lock taken above, and its request leaves
		// right after the commit.
		if granted, err := direct.permit(ctx, tx, inserted, locked); err != nil || granted != nil {
			if granted != nil {
				out = *granted
			}
			return err
		}
		return tx.Notify(ctx, store.DispatchChannel, out.ID)
	})
	if !direct.done(err) && err == nil && !out.Deduplicated && out.State == Approved {
		// Committed and approved by policy: this instance's dispatcher
		// claims it now, without waiting for its NOTIFY to come back.
		s.kick()
	}
	return out, err
}

func (s *Service) recordProposal(ctx context.Context, tx *store.Tx, p Proposal, inv Invocation, policy Policy, ownerName string, route Route, prior int64, disagrees bool, why string) error {
	// The quote's title and currency as proposed: the timeline names the
	// request by what was proposed, not by what a later edit made of it.
	data := map[string]any{"action": inv.Action, "system": inv.System, "target": inv.Target.Display,
		"amount_cents": inv.AmountCents, "summary": inv.Summary, "title": inv.Quote.Title, "currency": inv.Quote.Currency}
	if inv.CompensatesID != "" {
		data["compensates"] = inv.CompensatesID
	}
	entries := []entry{{actor: p.Actor, action: "invocation.proposed", taskID: inv.TaskID, invocation: inv.ID, data: data}}
	if disagrees {
		entries = append(entries, entry{actor: SystemActor, action: "invocation.summary_disagreed", taskID: inv.TaskID, invocation: inv.ID,
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
	entries = append(entries, entry{actor: actor, action: "invocation." + string(route.State), taskID: inv.TaskID, invocation: inv.ID, data: routeData})
	return s.recordAll(ctx, tx, entries...)
}

// proposeWithClientKey applies Stripe's rules to a caller's
// Idempotency-Key: the same key with the same request replays the first
// result (marked deduplicated); with another request it is an error; while
// the first request is still being processed it is a conflict. A claim
// left unfinished longer than Config.ClientKeyClaim (its request crashed)
// is taken over by the next request with the key, or bound to the
// invocation the dead request made, if it made one.
func (s *Service) proposeWithClientKey(ctx context.Context, task Task, p Proposal) (Invocation, error) {
	var raw map[string]any
	_ = json.Unmarshal(p.Args, &raw)
	reqHash := sha256.Sum256([]byte(p.System + "\x00" + p.Action + "\x00" + string(adapter.Canonical(raw))))
	now := s.now()
	claim, err := s.store.ClaimClientKey(ctx, task.ID, p.ClientKey, reqHash[:], now, now.Add(-s.cfg.ClientKeyClaim))
	if errors.Is(err, store.ErrConflict) {
		return Invocation{}, clientKeyConflict()
	}
	if err != nil {
		return Invocation{}, err
	}
	if !claim.Claimed {
		switch {
		case !claim.SameRequest:
			return Invocation{}, &apperr.Error{Kind: apperr.Invalid, Code: "idempotency_key_reused",
				Message: "This Idempotency-Key was used for a different request in this task.",
				Hint:    "Use a new key for a new request; reuse a key only to repeat the same request."}
		case claim.InvocationID == "":
			return Invocation{}, clientKeyConflict()
		}
		inv, err := s.Invocation(ctx, claim.InvocationID)
		inv.Deduplicated = true
		return inv, err
	}
	if claim.TookOver {
		s.log.Warn("idempotency key taken over from an unfinished request", "task_id", task.ID, "after", s.cfg.ClientKeyClaim)
	}
	// The claim outlives no proposal: past it, the key is someone else's.
	workCtx, cancel := context.WithTimeout(ctx, s.cfg.ClientKeyClaim)
	defer cancel()
	inv, err := s.propose(workCtx, task, p)
	if err != nil {
		if rerr := s.store.ReleaseClientKey(context.WithoutCancel(ctx), task.ID, p.ClientKey, claim.ClaimedAt); rerr != nil {
			s.log.Warn("release idempotency key", "error", rerr)
		}
		return inv, err
	}
	return inv, s.store.BindClientKey(context.WithoutCancel(ctx), task.ID, p.ClientKey, claim.ClaimedAt, inv.ID)
}

func clientKeyConflict() error {
	return &apperr.Error{Kind: apperr.Conflict, Code: "idempotency_key_in_use", Retryable: true,
		Message: "Another request with this Idempotency-Key is being processed.",
		Hint:    "Wait for it to finish, then repeat the request to get its result."}
}

// adapterErr turns an adapter's refusal into the console's error
// vocabulary, keeping its code, retryable flag, hint and fields.
func adapterErr(err error) error {
	ae, ok := adapter.AsError(err)
	if !ok {
		return err
	}
	kind := apperr.Invalid
	switch {
	case ae.Code == adapter.CodeNotFound:
		kind = apperr.NotFound
	case ae.Code == "system_not_connected" || ae.Code == adapter.CodeUnknownAction:
		kind = apperr.NotFound
	case ae.Outcome == adapter.NotSent || ae.Outcome == adapter.Unknown:
		kind = apperr.Upstream
	}
	out := &apperr.Error{Kind: kind, Code: ae.Code, Message: ae.Message, Hint: ae.Hint, Retryable: ae.Retryable,
		Fields: ae.Fields, Err: err}
	if len(ae.Candidates) > 0 {
		out.Details = map[string]any{"candidates": ae.Candidates}
	}
	return out
}
