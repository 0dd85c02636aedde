package controlplane_test

import (
	"encoding/json"
	"testing"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
)

// TestStaffDecideIsTheOneCheck: the one call of a staff decision refuses a
// form that must ask again with its field and the request as read,
// leaving the request as it was; refuses a stale version and changed
// arguments; refuses a customer before anything is read; and records a
// rejection with one of the action's own reasons.
func TestStaffDecideIsTheOneCheck(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StagePropose)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	inv := b.propose(task, "issue_refund", refund(b.order(3).ID, 1, "damaged"), "")
	if inv.State != controlplane.AwaitingApproval {
		t.Fatalf("proposed: %s, want awaiting approval", inv.State)
	}
	decide := func(d controlplane.StaffDecision) (controlplane.StaffDecided, error) {
		if d.Actor.Kind == "" {
			d.Actor = b.agent
		}
		if d.InvocationID == "" {
			d.InvocationID = inv.ID
		}
		return b.cp.StaffDecide(b.ctx, d)
	}

	forms := []struct {
		name  string
		d     controlplane.StaffDecision
		field string
	}{
		{"reject without a reason", controlplane.StaffDecision{Verb: controlplane.StaffReject}, "reason"},
		{"reject with a reason not the action's", controlplane.StaffDecision{Verb: controlplane.StaffReject, Reason: "because"}, "reason"},
		{"reject with Other and no words", controlplane.StaffDecision{Verb: controlplane.StaffReject, Reason: controlplane.OtherReason, Other: "  "}, "reason"},
		{"send back without a question", controlplane.StaffDecision{Verb: controlplane.StaffSendBack, Reason: " "}, "question"},
		{"edit with a form that does not read", controlplane.StaffDecision{Verb: controlplane.StaffEdit,
			FormArgs: func(got controlplane.Invocation) (json.RawMessage, error) {
				if got.ID != inv.ID {
					t.Errorf("the form was made from request %q, want %q", got.ID, inv.ID)
				}
				return nil, apperr.InvalidFields(map[string]string{"amount_cents": "write an amount like 34.50"})
			}}, "amount_cents"},
	}
	for _, f := range forms {
		d, err := decide(f.d)
		e, ok := apperr.As(err)
		if !ok || e.Kind != apperr.Invalid || e.Fields[f.field] == "" {
			t.Errorf("%s: %v, want invalid naming %s", f.name, err, f.field)
		}
		if d.Invocation.ID != inv.ID || d.Done {
			t.Errorf("%s: came back with request %q (done %v), want it for the form to ask again", f.name, d.Invocation.ID, d.Done)
		}
	}

	if _, err := decide(controlplane.StaffDecision{Verb: controlplane.StaffApprove, Version: inv.Version + 1, ArgsHash: inv.ArgsHash}); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("approve on a version not seen: %v, want conflict", err)
	}
	if _, err := decide(controlplane.StaffDecision{Verb: controlplane.StaffApprove, Version: inv.Version, ArgsHash: []byte("other")}); err == nil {
		t.Error("approve of arguments not seen: no error")
	} else if e, _ := apperr.As(err); e == nil || e.Code != "args_changed" {
		t.Errorf("approve of arguments not seen: %v, want args_changed", err)
	}
	if _, err := decide(controlplane.StaffDecision{Verb: controlplane.StaffApprove, Version: inv.Version}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("approve naming no arguments: %v, want invalid", err)
	}
	customer := controlplane.CustomerProvedOn(b.customer.Email, "code", inv.ID)
	if _, err := decide(controlplane.StaffDecision{Actor: customer, Verb: controlplane.StaffApprove, ArgsHash: inv.ArgsHash}); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("a customer approving a card: %v, want forbidden", err)
	}
	if _, err := decide(controlplane.StaffDecision{InvocationID: "no-such", Verb: controlplane.StaffReject, Reason: controlplane.OtherReason, Other: "no"}); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("an unknown request: %v, want not found", err)
	}
	if got := b.get(inv.ID); got.State != controlplane.AwaitingApproval || got.Version != inv.Version {
		t.Fatalf("after the refused decisions: %s v%d, want untouched v%d", got.State, got.Version, inv.Version)
	}

	reason := b.cp.RejectReasons(inv.System, inv.Action)[0]
	d, err := decide(controlplane.StaffDecision{Verb: controlplane.StaffReject, Version: inv.Version, Reason: reason})
	if err != nil || !d.Done || d.Invocation.State != controlplane.Rejected || d.Invocation.DecisionReason != reason {
		t.Fatalf("reject with the action's first reason: %+v, %v", d, err)
	}
}

// invocationOf is the request a staff decision left, for tests that go on
// with it.
func invocationOf(d controlplane.StaffDecided, err error) (controlplane.Invocation, error) {
	return d.Invocation, err
}
