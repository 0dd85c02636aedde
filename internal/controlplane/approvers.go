package controlplane

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"countersign/internal/apperr"
	"countersign/store"
)

// Who may decide a card is one rule, and this file holds it. An action's
// policy lists the console roles whose people may decide its requests
// awaiting approval (Policy.ApproverRoles): approve, reject, send back,
// edit the arguments, and take the card to decide it. One rule for every
// staff decision, not only approval: a rejection or a question is what
// the assistant and the customer read, an edit changes what the approval
// sends, and a card held by someone who may not approve it keeps it from
// those who may. Agents always may (so every sentence that says "an agent
// approves" stays true); a business adds managers or admins per action.
// The console's card and bulk approval, Slack's buttons and these calls
// all ask it, and the second-approver rule and the permit count only the
// approvals of people whose role the policy lists now.

// The console roles a policy can let decide its cards, in the order the
// console shows them. They repeat accounts.Agent, Manager and Admin
// because the control plane may not import accounts: the console's lists
// import the control plane and may reach no other service (the layer
// rules of internal/depcheck). TestApproverRolesAreAccountsRoles holds
// the two to the same words.
const (
	RoleAgent   = "agent"
	RoleManager = "manager"
	RoleAdmin   = "admin"
)

// ApproverRoleChoices are the roles a policy may list as deciders.
var ApproverRoleChoices = []string{RoleAgent, RoleManager, RoleAdmin}

// DefaultApproverRoles is what a policy lists unless a manager changes it:
// agents only.
func DefaultApproverRoles() []string { return []string{RoleAgent} }

// CodeRoleMayNotApprove is the code of the refusal of a decision by a
// person whose role the action's policy does not let decide its cards.
const CodeRoleMayNotApprove = "role_may_not_approve"

// approverRoles is roles as a policy stores them: known roles only, each
// once, in ApproverRoleChoices' order; none at all is the default.
func approverRoles(roles []string) []string {
	var out []string
	for _, r := range ApproverRoleChoices {
		if slices.Contains(roles, r) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return DefaultApproverRoles()
	}
	return out
}

// The faults of a policy's list of deciders (ApproverRolesFault).
const (
	FaultUnknownRole   = "unknown_role"
	FaultAgentsMissing = "agents_missing"
)

// ApproverRolesFault is what is wrong with roles a policy would list: an
// unknown role (FaultUnknownRole), support agents left out
// (FaultAgentsMissing), or "" when it can list them. Each caller words
// it: ApproverRolesProblem for the API, the console from its catalogue.
func ApproverRolesFault(roles []string) string {
	for _, r := range roles {
		if !slices.Contains(ApproverRoleChoices, r) {
			return FaultUnknownRole
		}
	}
	if !slices.Contains(roles, RoleAgent) {
		return FaultAgentsMissing
	}
	return ""
}

// ApproverRolesProblem is the field message for roles a policy cannot
// list (an unknown role, or support agents left out), or "" when it can.
func ApproverRolesProblem(roles []string) string {
	switch ApproverRolesFault(roles) {
	case FaultUnknownRole:
		return "choose from support agents, managers and admins"
	case FaultAgentsMissing:
		return "support agents always decide cards; keep them, and add managers or admins if they should decide too"
	}
	return ""
}

// MayDecide reports whether actor may decide this action's cards: a
// console user whose role the policy lists.
func (p Policy) MayDecide(actor Actor) bool {
	return actor.Kind == ActorUser && slices.Contains(approverRoles(p.ApproverRoles), actor.Role)
}

// roleCounts reports whether an approval given by a person of role
// counts under p (the second-approver rule and the permit ask).
func (p Policy) roleCounts(role string) bool {
	return slices.Contains(approverRoles(p.ApproverRoles), role)
}

// DecidersWords says who decides the policy's cards: "support agents",
// "support agents and managers", "support agents, managers and admins".
func (p Policy) DecidersWords() string {
	words := map[string]string{RoleAgent: "support agents", RoleManager: "managers", RoleAdmin: "admins"}
	var out []string
	for _, r := range approverRoles(p.ApproverRoles) {
		out = append(out, words[r])
	}
	if len(out) == 1 {
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
}

// refuseRole is the refusal of verb ("approve", "reject", …) by actor on
// a card of p: Forbidden, code role_may_not_approve, naming who may.
func refuseRole(p Policy, actor Actor, verb string) error {
	role := actor.Role
	if role == "" {
		role = string(actor.Kind)
	}
	return &apperr.Error{Kind: apperr.Forbidden, Code: CodeRoleMayNotApprove,
		Message: fmt.Sprintf("Your role (%s) may not %s requests of %s/%s: its policy lets %s decide them.",
			role, verb, p.System, p.Action, p.DecidersWords()),
		Hint: "Leave it for one of them, or ask a manager to add your role to the policy's deciders."}
}

// decisionPolicy returns the policy that decides who may decide the
// cards of system/action: its policy, or, for an action without one, a
// policy of the defaults (agents only).
func (s *Service) decisionPolicy(ctx context.Context, system, action string) (Policy, error) {
	p, err := s.Policy(ctx, system, action)
	if apperr.Is(err, apperr.NotFound) {
		return Policy{System: system, Action: action, ApproverRoles: DefaultApproverRoles()}, nil
	}
	return p, err
}

// MayDecide reports whether actor may decide the cards of system/action
// under its policy now; pages ask it before they offer a decision, and
// the decision itself asks again (mayDecideIn).
func (s *Service) MayDecide(ctx context.Context, actor Actor, system, action string) (bool, Policy, error) {
	p, err := s.decisionPolicy(ctx, system, action)
	if err != nil {
		return false, p, err
	}
	return p.MayDecide(actor), p, nil
}

// mayDecideIn checks, in the transaction that records the decision, that
// actor may verb row under its action's policy, read FOR SHARE so that a
// policy change waits for the decision that read it. It returns the
// policy (found false when the action has none: the defaults apply).
func mayDecideIn(ctx context.Context, tx *store.Tx, actor Actor, row store.Invocation, verb string) (p Policy, found bool, err error) {
	r, err := tx.PolicyForShare(ctx, row.System, row.Action)
	switch {
	case errors.Is(err, store.ErrNotFound):
		p = Policy{System: row.System, Action: row.Action, ApproverRoles: DefaultApproverRoles()}
	case err != nil:
		return Policy{}, false, err
	default:
		p, found = policyFromRow(r), true
	}
	if !p.MayDecide(actor) {
		return p, found, refuseRole(p, actor, verb)
	}
	return p, found, nil
}

// staffOnCard refuses anyone but a console user before anything is read:
// customers and assistants never decide a card (the role rule comes with
// the policy, in the transaction).
func staffOnCard(actor Actor, verb string) error {
	if actor.Kind != ActorUser || actor.Role == "customer" {
		return apperr.New(apperr.Forbidden, "Only a person of the business's staff can %s a request awaiting approval.", verb)
	}
	return nil
}
