package confirmation

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"countersign/internal/controlplane"
)

// DemoLink is one pending confirmation of the demo customer, for the
// console to print at start.
type DemoLink struct {
	Action string
	Title  string
	// Path is the link on the console ("/c/…"); prefix it with the
	// console's address.
	Path string
}

// demoWindow is how long the demo's confirmations stay open, so the links
// printed at start still work after a coffee.
const demoWindow = 24 * time.Hour

// demoProposals are the writes a customer confirms in the demo, against
// the seeded shop's Jordan Lee (whose photo add-on is cancelled at the end
// of its period, so it can be reinstated).
var demoProposals = []struct {
	action  string
	args    map[string]any
	summary string
}{
	{"cancel_subscription", map[string]any{"subscription_id": "Pro plan for acme.example", "reason_code": "too_expensive",
		"effective": "end_of_period"}, "Cancel the Pro plan for acme.example at the end of the period."},
	{"reinstate_subscription", map[string]any{"subscription_id": "Photo add-on plan for acme.example"},
		"Keep the photo add-on for acme.example."},
	{"issue_refund", map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"},
		"Refund the damaged walnut lamp."},
	{"resend_receipt", map[string]any{"invoice_id": "paid Pro invoice"}, "Send the Pro plan receipt again."},
	{"change_shipping_address", map[string]any{"order_id": "standing desk mat", "address": map[string]any{
		"name": "Jordan Lee", "line1": "1 Harbour Way", "city": "Oakland", "postal_code": "94607", "country": "US"}},
		"Ship the desk mat to 1 Harbour Way, Oakland."},
}

// SeedDemo makes sure the demo customer has a confirmation waiting for
// each action a customer confirms in the demo, and returns a fresh link to
// each (links are stored hashed, so earlier ones cannot be printed again).
// It is for demo mode only: it puts those actions' policies of system
// "shop" on stage 4 (the customer confirms) with a 24-hour confirmation
// window, bumping their versions, so a real installation never calls it.
// A confirmation still pending from an earlier start is reused.
func (s *Service) SeedDemo(ctx context.Context, customerRef string) ([]DemoLink, error) {
	now := s.now()
	actions := make([]string, 0, len(demoProposals))
	for _, p := range demoProposals {
		actions = append(actions, p.action)
		if err := s.store.StagePolicyForDemo(ctx, "shop", p.action, int16(controlplane.StageAssisted), demoWindow, now); err != nil {
			return nil, err
		}
	}
	existing, err := s.cp.CustomerInvocations(ctx, customerRef, 200)
	if err != nil {
		return nil, err
	}
	pending := map[string]controlplane.Invocation{}
	for _, inv := range existing {
		if _, seen := pending[inv.Action]; !seen && inv.State == controlplane.AwaitingConfirmation &&
			inv.DeadlineAt != nil && inv.DeadlineAt.After(now.Add(time.Hour)) {
			pending[inv.Action] = inv
		}
	}
	var task *controlplane.Task
	assistant := controlplane.AssistantActor("demo", "Demo assistant")
	out := make([]DemoLink, 0, len(demoProposals))
	for _, p := range demoProposals {
		inv, ok := pending[p.action]
		if !ok {
			if task == nil {
				t, err := s.cp.CreateTask(ctx, assistant, controlplane.NewTask{CustomerRef: customerRef,
					ConversationID: fmt.Sprintf("demo-%d", now.UnixNano()), Systems: []string{"shop"}, AllowedActions: actions,
					WriteBudget: 10, InflightLimit: 2, RatePerMinute: 10, ExpiresAt: now.Add(7 * 24 * time.Hour)})
				if err != nil {
					return nil, fmt.Errorf("confirmation: demo task: %w", err)
				}
				task = &t
			}
			args, _ := json.Marshal(p.args)
			inv, err = s.cp.Propose(ctx, controlplane.Proposal{TaskID: task.ID, System: "shop", Action: p.action, Args: args,
				Summary: p.summary, Actor: assistant})
			if err != nil {
				return nil, fmt.Errorf("confirmation: demo %s: %w", p.action, err)
			}
		}
		if inv.State != controlplane.AwaitingConfirmation {
			return nil, fmt.Errorf("confirmation: demo %s was routed to %s, not to the customer", p.action, inv.State)
		}
		path, err := s.Link(ctx, inv, customerRef)
		if err != nil {
			return nil, err
		}
		out = append(out, DemoLink{Action: p.action, Title: inv.Quote.Title, Path: path})
	}
	return out, nil
}
