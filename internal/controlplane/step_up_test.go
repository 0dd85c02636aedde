package controlplane_test

import (
	"encoding/base64"
	"errors"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/stepup"
	"countersign/internal/stepup/stepuptest"
)

// passkeyOf registers a passkey for the console user behind actor.
func (b *testBundle) passkeyOf(actor controlplane.Actor) *stepuptest.Passkey {
	b.t.Helper()
	u := accounts.User{ID: actor.UserID, Email: actor.ID + "@example.test", Name: actor.Name, Role: accounts.Role(actor.Role)}
	return stepuptest.Register(b.t, b.store, accounts.NewService(b.store, b.clock.Now, accounts.DefaultThrottle), u)
}

// approveWith is actor's approval of inv as it stands, carrying up.
func (b *testBundle) approveWith(actor controlplane.Actor, inv controlplane.Invocation, up *stepup.Assertion) (controlplane.Invocation, error) {
	d, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: actor, InvocationID: inv.ID, Verb: controlplane.StaffApprove,
		Version: inv.Version, ArgsHash: inv.ArgsHash, StepUp: up})
	return d.Invocation, err
}

func (b *testBundle) setPolicy(sql string) {
	b.t.Helper()
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET `+sql+` WHERE action = 'issue_refund'`); err != nil {
		b.t.Fatal(err)
	}
}

func wantStepUpCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.Forbidden || e.Code != code {
		t.Fatalf("%s: %v, want forbidden %s", what, err, code)
	}
}

// TestStepUpIsRequiredAndMustBeForThisApproval: under a policy that asks
// every approval for step-up, an approval without an assertion is
// refused (ErrStepUpRequired); one made for another card, another
// version or other arguments, or with another person's passkey, is
// refused (step_up_invalid); the right one approves, is kept with the
// approval and named by its event.
func TestStepUpIsRequiredAndMustBeForThisApproval(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setPolicy(`step_up_every = true`)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	inv := b.propose(task, "issue_refund", refund(b.order(4).ID, 500, "damaged"), "")
	other := b.propose(task, "issue_refund", refund(b.order(3).ID, 600, "damaged"), "")
	mine, theirs := b.passkeyOf(b.agent), b.passkeyOf(b.agent2)

	_, err := b.approveWith(b.agent, inv, nil)
	if !errors.Is(err, controlplane.ErrStepUpRequired) {
		t.Fatalf("an approval without step-up: %v, want ErrStepUpRequired", err)
	}
	wantStepUpCode(t, "without step-up", err, "step_up_required")
	otherHash := append([]byte{}, inv.ArgsHash...)
	otherHash[0] ^= 1
	swapped := theirs.Assert(t, inv.ID, int64(inv.Version), inv.ArgsHash)
	swapped.CredentialID = mine.Assert(t, inv.ID, int64(inv.Version), inv.ArgsHash).CredentialID
	for what, up := range map[string]*stepup.Assertion{
		"made for another card":        mine.Assert(t, other.ID, int64(other.Version), other.ArgsHash),
		"made for another version":     mine.Assert(t, inv.ID, int64(inv.Version)+1, inv.ArgsHash),
		"made for other arguments":     mine.Assert(t, inv.ID, int64(inv.Version), otherHash),
		"made with a colleague's key":  theirs.Assert(t, inv.ID, int64(inv.Version), inv.ArgsHash),
		"my credential, another's key": swapped,
	} {
		_, err := b.approveWith(b.agent, inv, up)
		wantStepUpCode(t, what, err, controlplane.StepUpInvalidCode)
	}
	if got, _ := b.cp.Invocation(b.ctx, inv.ID); got.State != controlplane.AwaitingApproval || got.Version != inv.Version {
		t.Fatalf("after refusals: %s v%d, want untouched", got.State, got.Version)
	}

	up := mine.Assert(t, inv.ID, int64(inv.Version), inv.ArgsHash)
	got, err := b.approveWith(b.agent, inv, up)
	if err != nil || got.State != controlplane.Approved {
		t.Fatalf("approval with its step-up: %s, %v", got.State, err)
	}
	approvals, err := b.cp.StaffApprovals(b.ctx, b.wantState(inv.ID, controlplane.Approved))
	if err != nil || len(approvals) != 1 {
		t.Fatalf("approvals %+v, %v", approvals, err)
	}
	a := approvals[0]
	if a.UserID != b.agent.UserID || a.Version != inv.Version || a.StepUp == nil || a.Identified.StepUp == nil ||
		a.Identified.StepUp.CredentialID != base64.RawURLEncoding.EncodeToString(up.CredentialID) {
		t.Fatalf("the approval as kept: %+v", a)
	}
	if err := a.StepUp.Verify(inv.ID, int64(a.Version), a.ArgsHash); err != nil {
		t.Fatalf("the stored assertion: %v", err)
	}
}

// TestStepUpAboveAnAmountCountsTheExposure: step-up above an amount
// counts what already moved or is pending on the customer, as the second
// approver's amount does.
func TestStepUpAboveAnAmountCountsTheExposure(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setPolicy(`step_up_above_cents = 1000, second_approver_above_cents = NULL`)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	small := b.propose(task, "issue_refund", refund(b.order(5).ID, 600, "damaged"), "")
	if got, err := b.approveWith(b.agent, small, nil); err != nil || got.State != controlplane.Approved {
		t.Fatalf("below the amount no step-up is asked: %s, %v", got.State, err)
	}
	// 600 already approved: 500 more is 1100 in all, above 1000.
	next := b.propose(task, "issue_refund", refund(b.order(4).ID, 500, "damaged"), "")
	if _, err := b.approveWith(b.agent, next, nil); !errors.Is(err, controlplane.ErrStepUpRequired) {
		t.Fatalf("above the amount with the exposure: %v, want ErrStepUpRequired", err)
	}
	up := b.passkeyOf(b.agent).Assert(t, next.ID, int64(next.Version), next.ArgsHash)
	if got, err := b.approveWith(b.agent, next, up); err != nil || got.State != controlplane.Approved {
		t.Fatalf("with its step-up: %s, %v", got.State, err)
	}
}

// TestEachOfTwoApproversStepsUp: with separation of duties each approver
// needs their own step-up, made for the version they approve.
func TestEachOfTwoApproversStepsUp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setPolicy(`step_up_every = true, second_approver_above_cents = 1000`)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	inv := b.propose(task, "issue_refund", refund(b.order(4).ID, 4200, "damaged"), "")
	mine, theirs := b.passkeyOf(b.agent), b.passkeyOf(b.agent2)
	if _, err := b.approveWith(b.agent, inv, nil); !errors.Is(err, controlplane.ErrStepUpRequired) {
		t.Fatalf("first approval without step-up: %v", err)
	}
	first, err := b.approveWith(b.agent, inv, mine.Assert(t, inv.ID, int64(inv.Version), inv.ArgsHash))
	if err != nil || first.State != controlplane.AwaitingApproval {
		t.Fatalf("first approval: %s, %v", first.State, err)
	}
	if _, err := b.approveWith(b.agent2, first, nil); !errors.Is(err, controlplane.ErrStepUpRequired) {
		t.Fatalf("second approval without step-up: %v", err)
	}
	// The first approval moved the version: an assertion for the one
	// before is not for this decision.
	_, err = b.approveWith(b.agent2, first, theirs.Assert(t, inv.ID, int64(inv.Version), inv.ArgsHash))
	wantStepUpCode(t, "second approval for the old version", err, controlplane.StepUpInvalidCode)
	done, err := b.approveWith(b.agent2, first, theirs.Assert(t, first.ID, int64(first.Version), first.ArgsHash))
	if err != nil || done.State != controlplane.Approved {
		t.Fatalf("second approval: %s, %v", done.State, err)
	}
	approvals, err := b.cp.StaffApprovals(b.ctx, b.wantState(inv.ID, controlplane.Approved))
	if err != nil || len(approvals) != 2 {
		t.Fatalf("approvals %+v, %v", approvals, err)
	}
	for i, a := range approvals {
		if a.StepUp == nil || a.StepUp.Verify(inv.ID, int64(a.Version), a.ArgsHash) != nil {
			t.Errorf("approval %d (%s, v%d) keeps no valid step-up", i, a.Name, a.Version)
		}
	}
	if !approvals[0].First || approvals[0].UserID != b.agent.UserID || approvals[1].UserID != b.agent2.UserID {
		t.Fatalf("approvals %+v", approvals)
	}
}
