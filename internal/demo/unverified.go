package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/lists"
	"countersign/store"
)

// unverifiedConversation names the demo's lost-acknowledgement task, so it
// is made once.
const unverifiedConversation = "demo-lost-acknowledgement"

// seedUnverified leaves the demo one refund whose result needs checking,
// made the way it happens for real: the shop commits the refund and drops
// its answer (its drop-after-commit fault, switched on for that one call).
// An agent can then inspect the original call on the task page and
// reconcile it to completed — or watch the console do it by itself: its
// reconciliation looks the refund up 15 s after its answer was lost and
// completes it, which the task's timeline says. The demo agent approves it; it runs before
// the dispatcher starts, so this send is the only one, and only once.
// Without a shop in this process (shop nil) it does nothing.
func seedUnverified(ctx context.Context, cp *controlplane.Service, ls *lists.Service, agent controlplane.Actor, shop ShopFaults) error {
	existing, err := ls.Tasks(ctx, store.TaskFilter{Query: unverifiedConversation, Limit: 1})
	if err != nil || len(existing) > 0 || shop == nil {
		return err
	}
	const customer = "fatima@alsayed.example"
	task, err := cp.CreateTask(ctx, demoAssistant, controlplane.NewTask{CustomerRef: customer, ConversationID: unverifiedConversation,
		AllowedActions: []string{"issue_refund"}, WriteBudget: 3, InflightLimit: 1, RatePerMinute: 10,
		ExpiresAt: time.Now().Add(7 * 24 * time.Hour)})
	if err != nil {
		return err
	}
	args, _ := json.Marshal(map[string]any{"order_id": "skillet", "amount_cents": 3450, "reason_code": "damaged"})
	inv, err := cp.Propose(ctx, controlplane.Proposal{TaskID: task.ID, Action: "issue_refund", Args: args,
		Summary: "Refund $34.50 for the skillet whose handle snapped", Actor: demoAssistant})
	if err != nil {
		return fmt.Errorf("demo: propose the refund to lose: %w", err)
	}
	switch inv.State {
	case controlplane.AwaitingApproval:
		var d controlplane.StaffDecided
		d, err = cp.StaffDecide(ctx, controlplane.StaffDecision{Actor: agent, InvocationID: inv.ID, Verb: controlplane.StaffApprove,
			Version: inv.Version, ArgsHash: inv.ArgsHash})
		inv = d.Invocation
	case controlplane.AwaitingConfirmation:
		var d controlplane.CustomerDecided
		var shown controlplane.CustomerDecision
		// The demo's customer decides on the quote as proposed.
		shown, err = controlplane.CustomerDecision{Actor: controlplane.CustomerProvedOn(customer, "demo", inv.ID),
			InvocationID: inv.ID, Verb: controlplane.CustomerConfirm}.Showing(inv)
		if err == nil {
			d, err = cp.CustomerDecide(ctx, shown)
			inv = d.Invocation
		}
	}
	if err != nil {
		return fmt.Errorf("demo: approve the refund to lose: %w", err)
	}
	if err := shop.SetFault(demoshop.FaultRule{Route: "POST /refunds", DropAfterCommit: 1}); err != nil {
		return fmt.Errorf("demo: shop fault: %w", err)
	}
	defer shop.ClearFaults()
	if _, err := cp.Dispatch(ctx, inv.ID); err != nil {
		return fmt.Errorf("demo: dispatch the refund to lose: %w", err)
	}
	return nil
}
