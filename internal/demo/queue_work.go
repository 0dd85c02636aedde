package demo

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/lists"
	"countersign/internal/money"
	"countersign/store"
)

// queueConversation names the demo's own task, so it is made once.
const queueConversation = "demo-console-queue"

// demoAssistant is who proposes the demo's seeded work.
var demoAssistant = controlplane.AssistantActor("demo", "Demo assistant")

// seedQueueWork gives a fresh demo something to decide in the support
// agent's console: a task for the demo customer with refunds of her
// delivered orders and a cancellation awaiting approval. It runs once (the
// task's conversation marks it); a proposal the control plane refuses is
// logged and skipped.
func seedQueueWork(ctx context.Context, cp *controlplane.Service, reg *adapter.Registry, ls *lists.Service, log *slog.Logger) error {
	existing, err := ls.Tasks(ctx, store.TaskFilter{Query: queueConversation, Limit: 1})
	if err != nil || len(existing) > 0 {
		return err
	}
	sys, err := reg.System("shop")
	if err != nil {
		return err
	}
	customer := People[0].Email
	task, err := cp.CreateTask(ctx, demoAssistant, controlplane.NewTask{CustomerRef: customer, ConversationID: queueConversation,
		AllowedActions: []string{"issue_refund", "cancel_subscription"}, WriteBudget: 20, InflightLimit: 2, RatePerMinute: 30,
		ExpiresAt: time.Now().Add(7 * 24 * time.Hour)})
	if err != nil {
		return err
	}
	principal := adapter.Principal{CustomerRef: customer}
	read, err := sys.Read(ctx, principal, "list_orders", json.RawMessage(`{"status":"delivered"}`))
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(read.Data)
	var orders []struct {
		OrderID string `json:"order_id"`
	}
	if err := json.Unmarshal(raw, &orders); err != nil {
		return err
	}
	var proposals []controlplane.Proposal
	for i, o := range orders {
		if i == 2 {
			break // the older ones are outside the refund window
		}
		cents := []int64{1250, 800}[i]
		args, _ := json.Marshal(map[string]any{"order_id": o.OrderID, "amount_cents": cents, "reason_code": "damaged"})
		proposals = append(proposals, controlplane.Proposal{TaskID: task.ID, Action: "issue_refund", Args: args,
			Summary: "Refund " + money.Format(cents, "usd") + " for the damaged item", Actor: demoAssistant})
	}
	subs, err := sys.Read(ctx, principal, "list_subscriptions", nil)
	if err == nil {
		raw, _ := json.Marshal(subs.Data)
		var list []struct {
			SubscriptionID string `json:"subscription_id"`
			Status         string `json:"status"`
		}
		if json.Unmarshal(raw, &list) == nil {
			for _, s := range list {
				if s.Status == "active" {
					args, _ := json.Marshal(map[string]any{"subscription_id": s.SubscriptionID, "reason_code": "too_expensive", "effective": "end_of_period"})
					proposals = append(proposals, controlplane.Proposal{TaskID: task.ID, Action: "cancel_subscription", Args: args,
						Summary: "Cancel the plan at the end of the period", Actor: demoAssistant})
					break
				}
			}
		}
	}
	for _, p := range proposals {
		inv, err := cp.Propose(ctx, p)
		if err != nil {
			log.Warn("demo proposal refused", "action", p.Action, "error", err)
			continue
		}
		log.Info("demo work waiting in the approval queue", "invocation", inv.ID, "state", inv.State)
	}
	return nil
}
