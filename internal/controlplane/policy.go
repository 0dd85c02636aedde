package controlplane

import (
	"context"
	"errors"
	"fmt"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/money"
	"countersign/store"
)

// Stage is how far an action may go without a person: an action moves up
// one stage at a time (propose, assisted, bounded autonomy) as its record
// earns it, and a person decides each move.
type Stage int

// The stages a policy can put an action on.
const (
	// StagePropose: an agent approves every proposal.
	StagePropose Stage = 3
	// StageAssisted: the customer confirms; high amounts still go to an agent.
	StageAssisted Stage = 4
	// StageAutonomous: automatic within limits, authorised by a policy with a
	// named owner.
	StageAutonomous Stage = 5
)

// Label names the stage for people.
func (s Stage) Label() string {
	switch s {
	case StagePropose:
		return "3 · propose (an agent approves)"
	case StageAssisted:
		return "4 · assisted (the customer confirms)"
	case StageAutonomous:
		return "5 · bounded autonomy (automatic within limits)"
	}
	return fmt.Sprintf("stage %d", int(s))
}

// Policy is an action's routing and limits.
type Policy struct {
	System  string
	Action  string
	Stage   Stage
	Enabled bool
	// AutoMaxCents: stage 5 runs automatically only up to this amount.
	AutoMaxCents *int64
	// ApprovalAboveCents: at any stage, a larger amount needs an agent.
	ApprovalAboveCents *int64
	// SecondApproverAboveCents: above it, two different approvers.
	SecondApproverAboveCents *int64
	ApprovalWindow           time.Duration
	ConfirmationWindow       time.Duration
	OwnerID                  *int64
	ReviewOn                 *time.Time
	// ApproverRoles are the console roles whose people may decide the
	// action's cards (approvers.go): "agent" always, "manager" and "admin"
	// when the business adds them.
	ApproverRoles []string
	// StepUpEvery: every staff approval of the action needs a fresh
	// passkey proof made for that decision (stepup; for actions that
	// cannot be undone). StepUpAboveCents: approvals of a larger amount
	// need one. Either needs it (NeedsStepUp).
	StepUpEvery      bool
	StepUpAboveCents *int64
	// LimitCurrency is the ISO 4217 code (upper case) every amount limit
	// above is in, in its minor units; empty reads as US dollars
	// (Currency). An amount in another currency is never compared with
	// them: a person decides it (exposure_currency.go).
	LimitCurrency string
	Version       int32
	UpdatedAt     time.Time
}

// NeedsStepUp reports whether a staff approval of a request of amountCents
// (nil when the action moves no amount) needs a passkey assertion made
// for that decision.
func (p Policy) NeedsStepUp(amountCents *int64) bool {
	if p.StepUpEvery {
		return true
	}
	return p.StepUpAboveCents != nil && amountCents != nil && *amountCents > *p.StepUpAboveCents
}

// Name identifies the policy in events: "shop/issue_refund@v3".
func (p Policy) Name() string { return fmt.Sprintf("%s/%s@v%d", p.System, p.Action, p.Version) }

// EnsurePolicies gives every action of every connected system a policy,
// keeping the ones already set. A new policy starts at the stage the
// action's spec gives (DefaultStage), or at stage 3, an agent approves,
// when it gives none. owner, when not nil, owns the new ones.
func (s *Service) EnsurePolicies(ctx context.Context, owner *int64) error {
	for _, sys := range s.registry.Systems() {
		for _, a := range sys.Actions() {
			stage := Stage(a.DefaultStage)
			if stage == 0 {
				stage = StagePropose
			}
			p := store.Policy{System: sys.Name(), Action: a.Name, Stage: int16(stage), Enabled: true,
				ApprovalWindow: 24 * time.Hour, ConfirmationWindow: 30 * time.Minute, OwnerID: owner, UpdatedAt: s.now(),
				ApproverRoles: DefaultApproverRoles()}
			if a.AmountParam != "" {
				auto, above, second := int64(2500), int64(20000), int64(50000)
				p.AutoMaxCents, p.ApprovalAboveCents, p.SecondApproverAboveCents = &auto, &above, &second
			}
			review := s.now().AddDate(0, 3, 0)
			p.ReviewOn = &review
			if err := s.store.EnsurePolicy(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// Policy returns an action's policy.
func (s *Service) Policy(ctx context.Context, system, action string) (Policy, error) {
	row, err := s.store.Policy(ctx, system, action)
	if errors.Is(err, store.ErrNotFound) {
		return Policy{}, apperr.Wrap(err, apperr.NotFound, "This action has no policy yet.")
	}
	if err != nil {
		return Policy{}, err
	}
	return policyFromRow(row), nil
}

func policyFromRow(r store.Policy) Policy {
	return Policy{System: r.System, Action: r.Action, Stage: Stage(r.Stage), Enabled: r.Enabled, AutoMaxCents: r.AutoMaxCents,
		ApprovalAboveCents: r.ApprovalAboveCents, SecondApproverAboveCents: r.SecondApproverAboveCents,
		ApprovalWindow: r.ApprovalWindow, ConfirmationWindow: r.ConfirmationWindow, OwnerID: r.OwnerID,
		ReviewOn: r.ReviewOn, ApproverRoles: approverRoles(r.ApproverRoles), StepUpEvery: r.StepUpEvery,
		StepUpAboveCents: r.StepUpAboveCents, LimitCurrency: r.LimitCurrency, Version: r.Version, UpdatedAt: r.UpdatedAt}
}

// Route is where a policy sends a proposal, and why.
type Route struct {
	State  State
	Reason string
	// Window is how long the decision may take (zero for approved).
	Window time.Duration
}

// routeCustomerConfirms is the route reason of a proposal sent to the
// customer to confirm (stage 4). Route reasons are sentences a person
// reads as they are (cards, Slack, the API): no stage numbers.
const routeCustomerConfirms = "Its policy has the customer confirm every request of this kind."

// RouteProposal decides where a proposal goes under policy p, counting
// nothing else already moved or pending: RouteExposure with no prior
// exposure. The tool list's mode and the policy what-if use it.
func RouteProposal(p Policy, amountCents *int64, reversal bool) Route {
	return RouteExposure(p, amountCents, 0, reversal)
}

// RouteExposure decides where a proposal goes under policy p: to the
// customer, to an agent, or approved by the policy. Exposure decides, not
// the number of calls: the thresholds and the automatic ceiling are
// compared with amountCents plus prior, what already moved or is pending
// on the same customer or target and action within the exposure window
// (Config.ExposureWindow), so a split routes like the whole. A reversal
// never runs automatically, and neither does an amount (amountCents not
// nil) under a policy without an automatic ceiling, even if such a row was
// saved. It is a pure function of its inputs, so a what-if can replay
// history against a draft policy.
func RouteExposure(p Policy, amountCents *int64, prior int64, reversal bool) Route {
	approval := func(reason string) Route {
		return Route{State: AwaitingApproval, Reason: reason, Window: p.ApprovalWindow}
	}
	total, what := amountCents, "The amount"
	if amountCents != nil && prior > 0 {
		sum := *amountCents + prior
		total = &sum
		what = fmt.Sprintf("The amount with what already moved or is pending on this customer or object (%s in all)", money.Format(sum, p.Currency()))
	}
	if total != nil && p.ApprovalAboveCents != nil && *total > *p.ApprovalAboveCents {
		return approval(fmt.Sprintf("%s is above the approval threshold of %s.", what, money.Format(*p.ApprovalAboveCents, p.Currency())))
	}
	switch p.Stage {
	case StageAssisted:
		return Route{State: AwaitingConfirmation, Reason: routeCustomerConfirms, Window: p.ConfirmationWindow}
	case StageAutonomous:
		switch {
		case reversal:
			return approval("A reversal needs its own approval.")
		case p.OwnerID == nil:
			return approval("Automatic approval needs a policy owner, and this policy has none.")
		case total != nil && p.AutoMaxCents == nil:
			return approval("Automatic approval pays out only up to a ceiling, and this policy has none.")
		case total != nil && p.AutoMaxCents != nil && *total > *p.AutoMaxCents:
			return approval(fmt.Sprintf("%s is above the automatic ceiling of %s.", what, money.Format(*p.AutoMaxCents, p.Currency())))
		}
		return Route{State: Approved, Reason: "Within the policy's limits."}
	}
	return approval("Its policy has an agent approve every request of this kind.")
}
