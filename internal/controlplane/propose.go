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
	// The resolve and the dry run come before the write's id, and so its
	// trace: their span is one of its own, which the proposal links.
	ctx, quoting := tracing.Start(ctx, "quote", "task.id", p.TaskID, "action", p.System+"/"+p.Action)
	defer func() {
		quoting.End()
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
	if dup, found, err := s.recentDuplicate(ctx, s.duplicateQuery(task, sys.Name(), spec, objectOf(sys.Name(), target), canonical, hash[:])); found || err != nil {
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
	return s.insertProposal(ctx, dryRun{p: p, task: task, spec: spec, quote: quote, canonical: canonical, hash: hash[:],
		policy: policy, amount: amount, disagrees: disagrees, why: why})
}

// actionFor finds the system and spec of an action the task may use. A
// compensation may use its action whatever the task lists: it is
// authorised by its own approval.
func (s *Service) actionFor(task Task, system, action string, compensation bool) (adapter.System, adapter.ActionSpec, error) {
	if system == "" {
		found := SystemsFor(s.registry, task, action)
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

// SystemsFor names the systems of reg offering action that task may use
// it on, sorted: where a proposal that names no system goes when there is
// exactly one. It is exported so that a hand-off draft, which names no
// system either, is bound by the same rule (internal/handoffs).
func SystemsFor(reg *adapter.Registry, task Task, action string) []string {
	return slices.DeleteFunc(reg.Offering(action), func(system string) bool { return !task.Allows(system, action) })
}

func notAllowed(action string) error {
	return &apperr.Error{Kind: apperr.Forbidden, Code: "action_not_allowed",
		Message: fmt.Sprintf("This task may not use %q.", action),
		Hint:    "List the tools for this task; propose only what it allows, or hand the request to a person."}
}

// recentDuplicate finds the same request made in the same conversation
// within the dedup window, through whichever of its tasks or whichever
// system reaches the same business object: a conversation belongs to one
// assistant, and opening a task or naming another system is not a new
// request. Only one that is live (its task can still send it) or
// completed holds a new proposal back.
func (s *Service) recentDuplicate(ctx context.Context, q store.DuplicateQuery) (Invocation, bool, error) {
	// One statement, no transaction: insertProposal looks again under its
	// lock before it inserts.
	row, err := s.store.RecentDuplicate(ctx, q)
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

// duplicateQuery is the proposal of action spec on o in task's
// conversation, with its arguments as resolved (canonical) and their hash,
// as its twin would have been recorded.
func (s *Service) duplicateQuery(task Task, system string, spec adapter.ActionSpec, o object, canonical, hash []byte) store.DuplicateQuery {
	now := s.now()
	return store.DuplicateQuery{ConversationID: task.ConversationID, System: system, Action: spec.Name, ArgsHash: hash,
		KeyName: o.key.Name, KeyValue: o.key.Value, TargetParam: spec.TargetParam, Args: canonical, Since: now.Add(-s.cfg.DedupWindow), Now: now}
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
