package controlplane_test

import (
	"context"

	"countersign/internal/controlplane"
)

// staffApprove is a person's approval through the staff's one door
// (StaffDecide), of the arguments the request holds when it is called.
func staffApprove(ctx context.Context, cp *controlplane.Service, actor controlplane.Actor, id string, version int32) (controlplane.Invocation, error) {
	inv, err := cp.Invocation(ctx, id)
	if err != nil {
		return controlplane.Invocation{}, err
	}
	d, err := cp.StaffDecide(ctx, controlplane.StaffDecision{Actor: actor, InvocationID: id, Verb: controlplane.StaffApprove,
		Version: version, ArgsHash: inv.ArgsHash})
	return d.Invocation, err
}

// customerConfirm is the customer's confirmation through their one door
// (CustomerDecide).
func customerConfirm(ctx context.Context, cp *controlplane.Service, actor controlplane.Actor, id string) (controlplane.CustomerDecided, error) {
	return customerDecide(ctx, cp, controlplane.CustomerDecision{Actor: actor, InvocationID: id, Verb: controlplane.CustomerConfirm})
}

// customerDecline is the customer's refusal through their one door
// (CustomerDecide).
func customerDecline(ctx context.Context, cp *controlplane.Service, actor controlplane.Actor, id, reason string) (controlplane.CustomerDecided, error) {
	return customerDecide(ctx, cp, controlplane.CustomerDecision{Actor: actor, InvocationID: id, Verb: controlplane.CustomerDecline,
		Reason: reason})
}

// customerDecide is d through the customer's one door, on the quote the
// request holds when it is called, as a page rendering it now would show.
func customerDecide(ctx context.Context, cp *controlplane.Service, d controlplane.CustomerDecision) (controlplane.CustomerDecided, error) {
	if inv, err := cp.Invocation(ctx, d.InvocationID); err == nil {
		if d, err = d.Showing(inv); err != nil {
			return controlplane.CustomerDecided{}, err
		}
	}
	return cp.CustomerDecide(ctx, d)
}
