package console

import (
	"context"
	"strings"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/views"
)

// Who may decide a card is the action's policy's (controlplane/approvers.go):
// the queue, a card's page and a bulk approval ask it here, and the control
// plane asks again in the decision's transaction.

// cardDeciders says whether u may decide a card of system's action under
// its policy p, and who may, in words; an action without a policy (p nil)
// has the defaults.
func cardDeciders(p *controlplane.Policy, system, action string, u accounts.User) (may bool, words string) {
	deciders := controlplane.Policy{System: system, Action: action}
	if p != nil {
		deciders = *p
	}
	return deciders.MayDecide(controlplane.UserActor(u.ID, string(u.Role), u.Name)), decidersWords(deciders)
}

// decidersWords says who may decide a policy's cards, in the console's
// words: one message for each set of roles (console.words.deciders.<the
// roles, in their order, joined by "_">), so no list is glued from pieces.
func decidersWords(p controlplane.Policy) string {
	var roles []string
	for _, r := range controlplane.ApproverRoleChoices {
		if p.MayDecide(controlplane.UserActor(0, r, "")) {
			roles = append(roles, r)
		}
	}
	return say("console.words.deciders."+strings.Join(roles, "_"), nil)
}

// bulkPick is what bulk approval does with a card.
type bulkPick int

const (
	// bulkNo: not pending, not low-risk, or not the person's to decide.
	bulkNo bulkPick = iota
	// bulkYes: approved with the others.
	bulkYes
	// bulkStepUp: it would be, but its policy asks for the approver's
	// passkey for each approval: it is left out, linked to its step-up
	// page (a passkey signs one approval, never a batch).
	bulkStepUp
)

// bulkChoice is the bulk filter: a card may be approved with others only
// while it is pending, low-risk (reversible, within the automatic limit,
// one approver), the person's to decide, and needs no step-up.
func bulkChoice(card controlplane.QueueCard, cv views.QueueCard) bulkPick {
	switch {
	case card.State != controlplane.AwaitingApproval || !cv.LowRisk || !cv.MayDecide:
		return bulkNo
	case cv.NeedsStepUp:
		return bulkStepUp
	}
	return bulkYes
}

// policyCache keeps the policies read while building one page: they say
// who may decide each card, and its limits.
type policyCache map[string]*controlplane.Policy

// loadPolicies reads every action's policy in one statement for a page of
// more than one card (the table holds a row per action), instead of one
// read per action on the page; should that read fail, the cache reads
// them one by one as before.
func loadPolicies(ctx context.Context, cp *controlplane.Service, cards int) policyCache {
	pc := policyCache{}
	if cards < 2 {
		return pc
	}
	ps, err := cp.Policies(ctx)
	if err != nil {
		return pc
	}
	for i := range ps {
		pc[ps[i].System+"/"+ps[i].Action] = &ps[i]
	}
	return pc
}

func (pc policyCache) get(ctx context.Context, cp *controlplane.Service, system, action string) *controlplane.Policy {
	key := system + "/" + action
	if p, ok := pc[key]; ok {
		return p
	}
	p, err := cp.Policy(ctx, system, action)
	if err != nil {
		pc[key] = nil
		return nil
	}
	pc[key] = &p
	return &p
}
