package handoffs_test

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
	return cp.CustomerDecide(ctx, controlplane.CustomerDecision{Actor: actor, InvocationID: id, Verb: controlplane.CustomerConfirm})
}
