package controlplane_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
)

// staff makes a console user of role and returns them as an actor.
func (b *testBundle) staff(role accounts.Role, name string) controlplane.Actor {
	b.t.Helper()
	acc := accounts.NewService(b.store, b.clock.Now, accounts.DefaultThrottle)
	u, err := acc.Create(b.ctx, accounts.NewUser{Email: fmt.Sprintf("%s-%d@example.test", role, time.Now().UnixNano()),
		Name: name, Role: role, Password: "a long enough password"})
	if err != nil {
		b.t.Fatal(err)
	}
	return controlplane.UserActor(u.ID, string(role), u.Name)
}

// setApprovers has a manager change issue_refund's deciders to roles.
func (b *testBundle) setApprovers(roles ...string) {
	b.t.Helper()
	p, err := b.cp.Policy(b.ctx, "shop", "issue_refund")
	if err != nil {
		b.t.Fatal(err)
	}
	p.ApproverRoles = roles
	manager := controlplane.UserActor(b.owner, "manager", "Priya Owner")
	if _, err := b.cp.ChangePolicy(b.ctx, manager, p, p.Version, fmt.Sprintf("deciders %v", roles)); err != nil {
		b.t.Fatal(err)
	}
}

// wantRoleRefusal fails unless err is the one rule's refusal.
func wantRoleRefusal(t *testing.T, what string, err error) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.Forbidden || e.Code != controlplane.CodeRoleMayNotApprove {
		t.Errorf("%s: %v, want forbidden %s", what, err, controlplane.CodeRoleMayNotApprove)
	}
}

// TestApproverRolesAreAccountsRoles: the roles a policy may list as
// deciders are accounts' staff roles, in accounts' order, spelled the
// same; the control plane repeats them since it may not import accounts.
func TestApproverRolesAreAccountsRoles(t *testing.T) {
	t.Parallel()
	var staff []string
	for _, r := range accounts.Roles {
		if r != accounts.Customer {
			staff = append(staff, string(r))
		}
	}
	if !slices.Equal(controlplane.ApproverRoleChoices, staff) {
		t.Errorf("ApproverRoleChoices = %q, want accounts' staff roles %q", controlplane.ApproverRoleChoices, staff)
	}
	for _, c := range []struct{ got, want string }{
		{controlplane.RoleAgent, string(accounts.Agent)},
		{controlplane.RoleManager, string(accounts.Manager)},
		{controlplane.RoleAdmin, string(accounts.Admin)},
	} {
		if c.got != c.want {
			t.Errorf("controlplane role %q, want accounts' %q", c.got, c.want)
		}
	}
}

// TestWhoMayDecideACardIsThePolicys: every staff decision the control
// plane takes on a card (approve, reject, send back, edit, take) is
// allowed to exactly the roles the action's policy lists, agents only by
// default; anyone else is refused with role_may_not_approve and nothing
// changes.
func TestWhoMayDecideACardIsThePolicys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	people := map[string]controlplane.Actor{"agent": b.agent, "manager": b.staff(accounts.Manager, "Mo Manager"),
		"admin": b.staff(accounts.Admin, "Ada Admin")}
	task := b.task([]string{"issue_refund"}, 40, 2, 600)
	cents := int64(100)
	verbs := map[string]func(actor controlplane.Actor, inv controlplane.Invocation) error{
		"approve": func(a controlplane.Actor, inv controlplane.Invocation) error {
			_, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: a, InvocationID: inv.ID, Verb: controlplane.StaffApprove, Version: inv.Version, ArgsHash: inv.ArgsHash})
			return err
		},
		"reject": func(a controlplane.Actor, inv controlplane.Invocation) error {
			_, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: a, InvocationID: inv.ID, Verb: controlplane.StaffReject, Version: inv.Version, Reason: controlplane.OtherReason, Other: "not eligible"})
			return err
		},
		"send back": func(a controlplane.Actor, inv controlplane.Invocation) error {
			_, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: a, InvocationID: inv.ID, Verb: controlplane.StaffSendBack, Version: inv.Version, Reason: "which item?"})
			return err
		},
		"edit": func(a controlplane.Actor, inv controlplane.Invocation) error {
			var args map[string]any
			if err := json.Unmarshal(inv.Args.Proposed, &args); err != nil {
				t.Fatal(err)
			}
			args["amount_cents"] = args["amount_cents"].(float64) - 1
			_, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: a, InvocationID: inv.ID, Verb: controlplane.StaffEdit, Version: inv.Version, Args: mustJSON(t, args)})
			return err
		},
		"take": func(a controlplane.Actor, inv controlplane.Invocation) error {
			_, err := b.cp.Claim(b.ctx, a, inv.ID)
			return err
		},
	}
	for _, setting := range []struct {
		name  string
		roles []string
		may   map[string]bool
	}{
		{"default", nil, map[string]bool{"agent": true}},
		{"managers added", []string{"agent", "manager"}, map[string]bool{"agent": true, "manager": true}},
	} {
		if setting.roles != nil {
			b.setApprovers(setting.roles...)
		}
		for role, actor := range people {
			for verb, do := range verbs {
				cents++
				inv := b.propose(task, "issue_refund", refund(b.order(4).ID, cents, "damaged"), "")
				err := do(actor, inv)
				what := fmt.Sprintf("%s: %s by a person of role %s", setting.name, verb, role)
				if setting.may[role] {
					if err != nil {
						t.Errorf("%s: %v, want it allowed", what, err)
					}
					continue
				}
				wantRoleRefusal(t, what, err)
				if got := b.get(inv.ID); got.State != controlplane.AwaitingApproval || got.Version != inv.Version {
					t.Errorf("%s was refused but left the request %s v%d", what, got.State, got.Version)
				}
			}
		}
	}
}

// TestOnlyPeopleWhoMayApproveCountAsTheSecondApprover: above the
// second-approver amount, a manager's approval is refused while the
// policy lists agents only; with managers added it counts as one of the
// two different people; and once managers are taken off again, an
// approval a manager gave meanwhile counts no more, neither for the next
// approver nor at the permit.
func TestOnlyPeopleWhoMayApproveCountAsTheSecondApprover(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET second_approver_above_cents = 1000 WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	manager := b.staff(accounts.Manager, "Mo Manager")
	task := b.task([]string{"issue_refund"}, 20, 5, 600)
	approve := func(a controlplane.Actor, id string) (controlplane.Invocation, error) {
		inv := b.get(id)
		return invocationOf(b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: a, InvocationID: id, Verb: controlplane.StaffApprove, Version: inv.Version, ArgsHash: inv.ArgsHash}))
	}

	// Agents only: the manager is refused; two agents are needed.
	inv := b.propose(task, "issue_refund", refund(b.order(4).ID, 4200, "damaged"), "")
	_, err := approve(manager, inv.ID)
	wantRoleRefusal(t, "a manager approving under the default", err)
	if got, err := approve(b.agent, inv.ID); err != nil || got.State != controlplane.AwaitingApproval {
		t.Fatalf("the first agent: %v %v, want a first approval", got.State, err)
	}
	if got, err := approve(b.agent2, inv.ID); err != nil || got.State != controlplane.Approved {
		t.Fatalf("the second agent: %v %v, want approved", got.State, err)
	}

	// Managers added: a manager's approval is one of the two.
	b.setApprovers("agent", "manager")
	counted := b.propose(task, "issue_refund", refund(b.order(4).ID, 4100, "damaged"), "")
	if got, err := approve(manager, counted.ID); err != nil || got.State != controlplane.AwaitingApproval {
		t.Fatalf("the manager first: %v %v, want a first approval", got.State, err)
	}
	if got, err := approve(b.agent, counted.ID); err != nil || got.State != controlplane.Approved {
		t.Fatalf("an agent after the manager: %v %v, want approved", got.State, err)
	}
	// A manager's first approval while managers may, then managers taken
	// off: it no longer counts for the next approver.
	stale := b.propose(task, "issue_refund", refund(b.order(4).ID, 4000, "damaged"), "")
	if _, err := approve(manager, stale.ID); err != nil {
		t.Fatal(err)
	}
	b.setApprovers("agent")
	if got, err := approve(b.agent, stale.ID); err != nil || got.State != controlplane.AwaitingApproval {
		t.Fatalf("an agent after a manager who may no longer decide: %v %v, want still awaiting a second approver", got.State, err)
	}
	if got, err := approve(b.agent2, stale.ID); err != nil || got.State != controlplane.Approved {
		t.Fatalf("a second agent: %v %v, want approved", got.State, err)
	}
	// And at the permit: approved by a manager and an agent, then managers
	// taken off before it is sent: it is not sent.
	b.setApprovers("agent", "manager")
	late := b.propose(task, "issue_refund", refund(b.order(4).ID, 3900, "damaged"), "")
	if _, err := approve(manager, late.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := approve(b.agent, late.ID); err != nil || got.State != controlplane.Approved {
		t.Fatalf("manager then agent: %v %v, want approved", got.State, err)
	}
	b.setApprovers("agent")
	b.dispatchAll()
	if got := b.get(late.ID); got.State != controlplane.NotDispatched {
		t.Errorf("approved by a manager the policy no longer lists: %s, want not dispatched", got.State)
	}
	if got := b.get(stale.ID); got.State == controlplane.NotDispatched {
		t.Errorf("approved by two agents: %s, want it sent", got.State)
	}
}
