package controlplane

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"countersign/internal/apperr"
	"countersign/store"
)

// ProposalsPerWrite is how many proposals a task may make for each write
// of its budget: a proposal is not free (each may mint a confirmation link
// that sends code mails, or a card an agent must read), so an assistant
// gets a few tries per write and then hands the case to a person.
const ProposalsPerWrite = 3

// lockExposure serialises the proposals of one customer that move money
// (in every system: exposure counts the customer's money across systems
// on business objects), those of the customer on one object (whatever the
// action: a refusal's block spans actions), and those on one object and
// action (an object some customers share), in that order, so two
// concurrent parts of a split cannot both be counted without the other,
// and a block is seen by every proposal on its object that commits after
// it. An object with a business key is locked both as its system's target
// and as the business object, so a proposal through another system that
// reaches it waits too. A proposal that moves no money (money false)
// counts no exposure and is counted in none, so it takes no customer
// lock: the customer's other writes do not queue behind it. The order is
// fixed, so two proposals never wait on each other's lock.
func lockExposure(ctx context.Context, tx *store.Tx, o object, action, customerRef string, money bool) error {
	return tx.AdvisoryLocks(ctx, exposureLocks(o, action, customerRef, money)...)
}

// exposureLocks are the keys lockExposure takes, in the order it takes
// them.
func exposureLocks(o object, action, customerRef string, money bool) []string {
	var keys []string
	if money {
		keys = append(keys, "exposure:customer:"+customerRef)
	}
	keys = append(keys, "block:"+o.system+"\x1f"+customerRef+"\x1f"+o.targetID)
	if o.key.Name != "" {
		keys = append(keys, "block:object:"+customerRef+"\x1f"+o.keyWord())
	}
	keys = append(keys, "exposure:target:"+o.system+"\x1f"+action+"\x1f"+o.targetID)
	if o.key.Name != "" {
		keys = append(keys, "exposure:object:"+o.keyWord())
	}
	return keys
}

// priorExposure is the money already moved or pending on the same action of
// a system, on the customer and on the object (for an object with a
// business key, on that business object and on the customer's objects with
// a key of that name, in every system and action), within the exposure
// window, across tasks and assistants: the larger of the two totals, in
// the minor units of the request's currency only, never converted nor
// added to another currency's. The unlike it returns says when p cannot
// compare the amount (exposure_currency.go): the request's currency is
// not p's limits', or another currency moved or is pending there. before,
// when set, is an invocation being decided again: only what was recorded
// before it counts, since every later proposal was routed with it counted.
func (s *Service) priorExposure(ctx context.Context, tx *store.Tx, p Policy, o object, action, customerRef, before, currency string) (int64, unlike, error) {
	cur := exposureCode(currency)
	e, err := tx.Exposure(ctx, store.ExposureQuery{System: o.system, Action: action, CustomerRef: customerRef,
		TargetID: o.targetID, KeyName: o.key.Name, KeyValue: o.key.Value, Since: s.now().Add(-s.cfg.ExposureWindow), Before: before, Currency: cur})
	if err != nil {
		return 0, unlike{}, err
	}
	return max(e.CustomerCents, e.TargetCents), unlikeAmount(p, cur, e.OtherCurrency), nil
}

// routeOf is where a proposal of amount (nil for none) goes under policy
// p with prior already moved or pending in its currency: RouteExposure,
// unless u says its amount cannot be compared with p's limits; then a
// person decides, whatever the stage, and the reason says why.
func routeOf(p Policy, amount *int64, prior int64, u unlike, reversal bool) Route {
	if amount != nil && u.code != "" {
		return Route{State: AwaitingApproval, Reason: u.reason(), Window: p.ApprovalWindow}
	}
	return RouteExposure(p, amount, prior, reversal)
}

// decider is who must say yes to a request, lowest first: a decision by a
// higher decider covers a lower one.
type decider int

const (
	byNobody decider = iota - 1
	byPolicy
	byCustomer
	byAgent
	byTwoAgents
)

// word names the decider for events and people.
func (d decider) word() string {
	switch d {
	case byPolicy:
		return "the policy"
	case byCustomer:
		return "the customer"
	case byAgent:
		return "an agent"
	case byTwoAgents:
		return "two different agents"
	}
	return "nobody"
}

// needs is who must decide a request routed r under policy p, whose amount
// together with its prior exposure is total. An amount u makes unlike is
// compared with no threshold, so it takes the strictest path p has: two
// different agents when p has a second-approver amount at all.
func (r Route) needs(p Policy, total *int64, u unlike) decider {
	switch r.State {
	case Approved:
		return byPolicy
	case AwaitingConfirmation:
		return byCustomer
	}
	if needsSecondApprover(p, total) || u.code != "" && p.SecondApproverAboveCents != nil {
		return byTwoAgents
	}
	return byAgent
}

// recheck is an invocation's route under the policy in force now and its
// exposure now: who must decide it, and why.
type recheck struct {
	route  Route
	policy Policy
	need   decider
	total  *int64
	prior  int64
	// unlike says the amount cannot be compared with the policy's limits.
	unlike unlike
}

// needsStepUp reports whether a staff approval of the rechecked request
// needs a passkey proof: as Policy.NeedsStepUp with the amount and its
// exposure, and, for an amount the limits cannot compare, whenever the
// policy asks one above any amount.
func (rc recheck) needsStepUp() bool {
	if rc.unlike.code != "" && rc.policy.StepUpAboveCents != nil {
		return true
	}
	return rc.policy.NeedsStepUp(rc.total)
}

// routeNow routes a recorded invocation again under policy p and the
// exposure recorded before it: a tightened policy, or money that moved on
// the same customer meanwhile, holds for what is pending.
func (s *Service) routeNow(ctx context.Context, tx *store.Tx, row store.Invocation, customerRef string, p Policy) (recheck, error) {
	amount := row.AmountCents
	var prior int64
	var u unlike
	if amount != nil {
		var err error
		o, currency := recordedObject(row)
		if prior, u, err = s.priorExposure(ctx, tx, p, o, row.Action, customerRef, row.ID, currency); err != nil {
			return recheck{}, err
		}
	}
	route := routeOf(p, amount, prior, u, row.CompensatesID != nil)
	total := amount
	if amount != nil {
		t := *amount + prior
		total = &t
	}
	return recheck{route: route, policy: p, need: route.needs(p, total, u), total: total, prior: prior, unlike: u}, nil
}

// decided is who already said yes to an invocation's approved arguments,
// read from its audit trail: a console user counts only while policy p
// lets their role decide (approvers.go).
func decided(ctx context.Context, tx *store.Tx, row store.Invocation, p Policy) (decider, error) {
	hash := row.ApprovedArgsHash
	if hash == nil {
		hash = row.ArgsHash
	}
	d, err := tx.Deciders(ctx, row.ID, hex.EncodeToString(hash), approverRoles(p.ApproverRoles))
	if err != nil {
		return byNobody, err
	}
	switch {
	case d.Users >= 2:
		return byTwoAgents, nil
	case d.Users == 1:
		return byAgent, nil
	case d.Customer:
		return byCustomer, nil
	case d.Policy:
		return byPolicy, nil
	}
	return byNobody, nil
}

// proposalAllowed applies the task's proposal budget and rate limit to
// the task as locked and its proposals of the last minute, both read
// under the task's lock (store.Tx.ProposalChecks): a proposal that would
// create an invocation counts, whether it is then confirmed, approved,
// refused by a person or left to expire.
func proposalAllowed(task store.Task, recent int) error {
	if budget := ProposalsPerWrite * int(task.WriteBudget); int(task.ProposalsMade) >= budget {
		return &apperr.Error{Kind: apperr.LimitReached, Code: "proposal_budget_spent",
			Message: fmt.Sprintf("This task has made all the %d proposals it may (%d for each write of its budget).", budget, ProposalsPerWrite),
			Hint:    "Do not open another request; hand the case to a person."}
	}
	if recent >= int(task.RatePerMinute) {
		// A minute is the most the oldest proposal of the window needs to
		// age out of it.
		return &apperr.Error{Kind: apperr.LimitReached, Code: "rate_limited", Retryable: true, RetryAfterSeconds: 60,
			Message: fmt.Sprintf("This task may make %d proposals a minute.", task.RatePerMinute),
			Hint:    "Wait for the number of seconds in Retry-After before proposing again."}
	}
	return nil
}

// recheckRow routes a recorded invocation again under the policy in force
// now; found is false when the action has no policy any more (the permit
// then refuses it).
func (s *Service) recheckRow(ctx context.Context, tx *store.Tx, row store.Invocation, customerRef string) (recheck, bool, error) {
	p, err := tx.PolicyForShare(ctx, row.System, row.Action)
	if errors.Is(err, store.ErrNotFound) {
		return recheck{}, false, nil
	}
	if err != nil {
		return recheck{}, false, err
	}
	rc, err := s.routeNow(ctx, tx, row, customerRef, policyFromRow(p))
	return rc, err == nil, err
}

// reroute records a customer's confirmation that is no longer enough: the
// route checked again needs an agent (the policy was tightened, or the
// exposure grew). Nothing is approved: the invocation moves to the agents'
// queue with the approval window, and the event says why.
func (s *Service) reroute(ctx context.Context, tx *store.Tx, actor Actor, row store.Invocation, expectedVersion int32,
	event EventAction, hash []byte, rc recheck, out *Invocation) error {
	now := s.now()
	deadline := now.Add(rc.policy.ApprovalWindow)
	stage, version := int16(rc.policy.Stage), rc.policy.Version
	updated, err := tx.TransitionInvocation(ctx, row.ID, []string{row.State}, expectedVersion, string(AwaitingApproval), now,
		store.InvocationChange{DeadlineAt: &deadline, RouteReason: &rc.route.Reason, PolicyStage: &stage, PolicyVersion: &version,
			ExposureCents: &rc.prior})
	if err != nil {
		return s.transitionErr(ctx, tx, row.ID, expectedVersion, "confirm", err)
	}
	if *out, err = fromRow(updated); err != nil {
		return err
	}
	if err := s.record(ctx, tx, actor, event, row.TaskID, row.ID, map[string]any{"args_hash": hex.EncodeToString(hash),
		"rerouted": true}); err != nil {
		return err
	}
	why := "what already moved or is pending on this customer or object now needs " + rc.need.word()
	switch {
	case rc.unlike.code != "":
		why = rc.route.Reason
	case rc.policy.Version != row.PolicyVersion:
		why = fmt.Sprintf("the policy changed after the proposal (v%d to v%d) and now needs %s", row.PolicyVersion, rc.policy.Version, rc.need.word())
	}
	return s.record(ctx, tx, SystemActor, EventInvocationRerouted, row.TaskID, row.ID, map[string]any{
		"from": row.State, "to": string(AwaitingApproval), "why": why, "reason": rc.route.Reason,
		"needs": rc.need.word(), "policy": rc.policy.Name()})
}
