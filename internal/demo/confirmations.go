package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/lists"
)

// Link is one pending confirmation of the demo customer, for the console
// to print at start.
type Link struct {
	Action string
	Title  string
	// Path is the link on the console ("/c/…"); prefix it with the
	// console's address.
	Path string
}

// confirmationWindow is how long the demo's confirmations stay open, so
// the links printed at start still work after a coffee.
const confirmationWindow = 24 * time.Hour

// proposal is a write a customer confirms in the demo.
type proposal struct {
	action  string
	args    map[string]any
	summary string
}

// customerProposals are the writes a customer confirms in the demo, against
// the seeded shop's Jordan Lee (whose photo add-on is cancelled at the end
// of its period, so it can be reinstated).
var customerProposals = []proposal{
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

// seedConfirmations makes sure the customer has a confirmation waiting for
// each action a customer confirms in the demo, and returns a fresh link to
// each (links are stored hashed, so earlier ones cannot be printed again).
// The demo manager first puts those actions of system "shop" on stage 4
// (the customer confirms) with a 24-hour confirmation window, through the
// policy change a manager makes on the policies page, so the audit trail
// says who staged them and why. A confirmation still pending from an
// earlier start is reused.
func seedConfirmations(ctx context.Context, cp *controlplane.Service, ls *lists.Service, links *confirmation.Service, manager controlplane.Actor,
	customerRef string) ([]Link, error) {
	for _, p := range customerProposals {
		if err := stageForCustomer(ctx, cp, manager, "shop", p.action); err != nil {
			return nil, err
		}
	}
	return seedPending(ctx, cp, ls, links, customerRef, customerProposals)
}

// seedPending makes sure customerRef has a confirmation waiting for each of
// proposals (on stage 4 already), reusing one still pending from an
// earlier start, and returns a fresh link to each.
func seedPending(ctx context.Context, cp *controlplane.Service, ls *lists.Service, links *confirmation.Service, customerRef string,
	proposals []proposal) ([]Link, error) {
	actions := make([]string, 0, len(proposals))
	for _, p := range proposals {
		actions = append(actions, p.action)
	}
	now := time.Now()
	existing, err := ls.CustomerInvocations(ctx, customerRef, 200)
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
	out := make([]Link, 0, len(proposals))
	for _, p := range proposals {
		inv, ok := pending[p.action]
		if !ok {
			if task == nil {
				t, err := cp.CreateTask(ctx, demoAssistant, controlplane.NewTask{CustomerRef: customerRef,
					ConversationID: fmt.Sprintf("demo-%d", now.UnixNano()), Systems: []string{"shop"}, AllowedActions: actions,
					WriteBudget: 10, InflightLimit: 2, RatePerMinute: 10, ExpiresAt: now.Add(7 * 24 * time.Hour)})
				if err != nil {
					return nil, fmt.Errorf("demo: confirmation task: %w", err)
				}
				task = &t
			}
			args, _ := json.Marshal(p.args)
			inv, err = cp.Propose(ctx, controlplane.Proposal{TaskID: task.ID, System: "shop", Action: p.action, Args: args,
				Summary: p.summary, Actor: demoAssistant})
			if err != nil {
				return nil, fmt.Errorf("demo: propose %s for %s: %w", p.action, customerRef, err)
			}
		}
		if inv.State != controlplane.AwaitingConfirmation {
			return nil, fmt.Errorf("demo: %s for %s was routed to %s, not to the customer", p.action, customerRef, inv.State)
		}
		path, err := links.Link(ctx, inv, customerRef)
		if err != nil {
			return nil, err
		}
		out = append(out, Link{Action: p.action, Title: inv.Quote.Title, Path: path})
	}
	return out, nil
}

// stageForCustomer has the manager put an action on stage 4 with the
// demo's confirmation window, unless it is there already (so restarts
// leave the policy and its version alone).
func stageForCustomer(ctx context.Context, cp *controlplane.Service, manager controlplane.Actor, system, action string) error {
	p, err := cp.Policy(ctx, system, action)
	if err != nil {
		return fmt.Errorf("demo: policy %s/%s: %w", system, action, err)
	}
	if p.Stage == controlplane.StageAssisted && p.ConfirmationWindow == confirmationWindow {
		return nil
	}
	draft := p
	draft.Stage, draft.ConfirmationWindow = controlplane.StageAssisted, confirmationWindow
	if _, err := cp.ChangePolicy(ctx, manager, draft, p.Version,
		"Demo: the customer confirms this action, so the demo has a confirmation of every kind to show."); err != nil {
		return fmt.Errorf("demo: stage %s/%s for the customer: %w", system, action, err)
	}
	return nil
}
