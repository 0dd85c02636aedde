package controlplane

import (
	"context"
	"errors"
	"strings"
	"time"

	"countersign/internal/apperr"
	"countersign/store"
)

// ChangePolicy replaces an action's policy with draft when its version is
// still expectedVersion, and records who changed it and why in the same
// transaction (the event keeps the policy before and after, who may
// decide its cards included). Only managers and admins may; a reason is required. The new
// policy routes proposals made after the change and holds for what is
// pending: each decision and each permit routes an invocation again under
// the policy in force (routeNow), so a tightened policy stops what its
// deciders no longer cover. Errors: Forbidden, Invalid with field messages, NotFound,
// Conflict when someone changed the policy meanwhile.
func (s *Service) ChangePolicy(ctx context.Context, actor Actor, draft Policy, expectedVersion int32, reason string) (Policy, error) {
	if actor.Kind != ActorUser || (actor.Role != "manager" && actor.Role != "admin") {
		return Policy{}, apperr.New(apperr.Forbidden, "Only a manager or an admin can change a policy.")
	}
	reason = strings.TrimSpace(reason)
	money := false
	if _, spec, err := s.registry.Action(draft.System, draft.Action); err == nil {
		money = spec.AmountParam != ""
	}
	if fields := validateDraft(draft, reason, money); len(fields) > 0 {
		return Policy{}, apperr.InvalidFields(fields)
	}
	var out Policy
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		before, err := tx.PolicyForShare(ctx, draft.System, draft.Action)
		if errors.Is(err, store.ErrNotFound) {
			return apperr.Wrap(err, apperr.NotFound, "This action has no policy.")
		}
		if err != nil {
			return err
		}
		row := store.Policy{System: draft.System, Action: draft.Action, Stage: int16(draft.Stage), Enabled: draft.Enabled,
			AutoMaxCents: draft.AutoMaxCents, ApprovalAboveCents: draft.ApprovalAboveCents,
			SecondApproverAboveCents: draft.SecondApproverAboveCents, ApprovalWindow: draft.ApprovalWindow,
			ConfirmationWindow: draft.ConfirmationWindow, OwnerID: draft.OwnerID, ReviewOn: draft.ReviewOn, UpdatedAt: s.now(),
			ApproverRoles: approverRoles(draft.ApproverRoles), StepUpEvery: draft.StepUpEvery, StepUpAboveCents: draft.StepUpAboveCents,
			LimitCurrency: draft.Currency()}
		after, err := tx.UpdatePolicy(ctx, row, expectedVersion)
		if errors.Is(err, store.ErrConflict) {
			return apperr.Wrap(err, apperr.Conflict, "Someone changed this policy while you were editing it. Reload it and make your change again.")
		}
		if err != nil {
			return err
		}
		out = policyFromRow(after)
		return s.record(ctx, tx, actor, EventPolicyChanged, "", "", map[string]any{
			"system": draft.System, "action": draft.Action, "reason": reason,
			"from_version": before.Version, "to_version": after.Version,
			"before": policyFromRow(before).summary(), "after": out.summary()})
	})
	return out, err
}

func validateDraft(p Policy, reason string, money bool) map[string]string {
	fields := map[string]string{}
	if reason == "" {
		fields["reason"] = "say why you change this policy; the audit trail keeps it"
	} else if len(reason) > 1000 {
		fields["reason"] = "use at most 1000 characters"
	}
	if p.Stage != StagePropose && p.Stage != StageAssisted && p.Stage != StageAutonomous {
		fields["stage"] = "choose stage 3, 4 or 5"
	}
	if p.Stage == StageAutonomous && p.OwnerID == nil {
		fields["owner"] = "bounded autonomy needs a named owner"
	}
	if p.Stage == StageAutonomous && money && p.AutoMaxCents == nil {
		fields["auto_max"] = "stage 5 moves money on its own only up to a ceiling: enter the most it may pay without a person, or choose stage 3 or 4"
	}
	for name, v := range map[string]*int64{"auto_max": p.AutoMaxCents, "approval_above": p.ApprovalAboveCents,
		"second_approver_above": p.SecondApproverAboveCents, "step_up_above": p.StepUpAboveCents} {
		if v != nil && *v < 0 {
			fields[name] = "use an amount of zero or more"
		}
	}
	if msg := ValidLimitCurrency(p.Currency()); msg != "" {
		fields["currency"] = msg
	}
	if !money && p.StepUpAboveCents != nil {
		fields["step_up_above"] = "this action moves no amount: leave it blank, or ask for a passkey on every approval"
	}
	// A draft that says nothing of its deciders (nil) keeps the default.
	if msg := ApproverRolesProblem(p.ApproverRoles); p.ApproverRoles != nil && msg != "" {
		fields["approvers"] = msg
	}
	if p.ApprovalWindow < time.Minute {
		fields["approval_window"] = "give agents at least a minute"
	}
	if p.ConfirmationWindow < time.Minute {
		fields["confirmation_window"] = "give customers at least a minute"
	}
	return fields
}

// summary is the policy as the audit event records it.
func (p Policy) summary() map[string]any {
	m := map[string]any{"stage": int(p.Stage), "enabled": p.Enabled, "auto_max_cents": p.AutoMaxCents,
		"approval_above_cents": p.ApprovalAboveCents, "second_approver_above_cents": p.SecondApproverAboveCents,
		"approval_window": p.ApprovalWindow.String(), "confirmation_window": p.ConfirmationWindow.String(), "owner_id": p.OwnerID,
		"approver_roles": approverRoles(p.ApproverRoles), "step_up_every": p.StepUpEvery, "step_up_above_cents": p.StepUpAboveCents,
		"limit_currency": p.Currency()}
	if p.ReviewOn != nil {
		m["review_on"] = p.ReviewOn.Format(time.DateOnly)
	}
	return m
}

// WhatIf is how the last days' proposals of an action would have been
// routed under a draft policy.
type WhatIf struct {
	Since     time.Time
	Proposals int
	// Auto, Approval, Confirmation and Refused count the proposals that
	// would have been approved by the policy, sent to an agent, sent to the
	// customer, or refused because the action is switched off.
	Auto, Approval, Confirmation, Refused int
	// The money involved in each of those, in minor units of Currency,
	// the draft's limit currency (Policy.Currency).
	AutoCents, ApprovalCents, ConfirmationCents, RefusedCents int64
	Currency                                                  string
	// OtherCurrency counts the proposals with an amount in another
	// currency than the draft's limits: under amount limits they would
	// go to a person (counted in Approval), and their amounts are in
	// none of the sums.
	OtherCurrency int
}

// PolicyWhatIf replays the proposals of the draft's action made in the last
// days days through RouteProposal under the draft, without changing
// anything. A proposal in another currency than the draft's limits is
// routed as a proposal is (routeOf): to a person when the draft has
// amount limits.
func (s *Service) PolicyWhatIf(ctx context.Context, draft Policy, days int) (WhatIf, error) {
	since := s.now().AddDate(0, 0, -days)
	rows, err := s.store.ProposalsSince(ctx, draft.System, draft.Action, since)
	if err != nil {
		return WhatIf{}, err
	}
	w := WhatIf{Since: since, Proposals: len(rows), Currency: draft.Currency()}
	for _, r := range rows {
		var cents int64
		var u unlike
		if r.AmountCents != nil {
			cents = *r.AmountCents
			if cur := exposureCode(r.Currency); cur != draft.Currency() {
				w.OtherCurrency++
				cents = 0
				u = unlikeAmount(draft, cur, "")
			}
		}
		if !draft.Enabled {
			w.Refused++
			w.RefusedCents += cents
			continue
		}
		switch routeOf(draft, r.AmountCents, 0, u, r.Reversal).State {
		case Approved:
			w.Auto++
			w.AutoCents += cents
		case AwaitingConfirmation:
			w.Confirmation++
			w.ConfirmationCents += cents
		default:
			w.Approval++
			w.ApprovalCents += cents
		}
	}
	return w, nil
}

// Policies lists every action's policy.
func (s *Service) Policies(ctx context.Context) ([]Policy, error) {
	rows, err := s.store.Policies(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Policy, len(rows))
	for i, r := range rows {
		out[i] = policyFromRow(r)
	}
	return out, nil
}
