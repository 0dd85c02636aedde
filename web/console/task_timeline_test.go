package console_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

func lineOf(kinds, lines []string, kind string) string {
	for i, k := range kinds {
		if k == kind {
			return lines[i]
		}
	}
	return ""
}

// TestTimelineSaysWhatEachEventRecordedAtTheTime records events of many
// kinds on one task — a proposal an agent then edits, approves and sends;
// a refusal the shop makes without a block and one with a block; a
// proposal stopped by that block; a rejection; a pause — and checks each
// line says what its event recorded, by whom. Then it rewrites every
// request's quote and target in the database, as if they had changed
// since: no line of the timeline may change, because each is written from
// its own event, never from the request as it is now.
func TestTimelineSaysWhatEachEventRecordedAtTheTime(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	ctx := context.Background()
	agent := b.Users[accounts.Agent]
	agentActor := controlplane.UserActor(agent.ID, "agent", agent.Name)
	assistant := controlplane.AssistantActor("asst_test", "Test assistant")
	propose := func(order string, cents int64) (controlplane.Invocation, error) {
		raw, _ := json.Marshal(map[string]any{"order_id": order, "amount_cents": cents, "reason_code": "damaged"})
		return b.Control.Propose(ctx, controlplane.Proposal{TaskID: f.Task.ID, Action: "issue_refund", Args: raw, Actor: assistant})
	}

	// Proposed at $12.50, edited by the agent to $20.00, approved, sent.
	a := f.Refund(t, f.Order, 1250)
	edited, _ := json.Marshal(map[string]any{"order_id": f.Order.ID, "amount_cents": 2000, "reason_code": "damaged"})
	a, err := invocationOf(b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: agentActor, InvocationID: a.ID, Verb: controlplane.StaffEdit, Version: 0, Args: edited}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: agentActor, InvocationID: a.ID, Verb: controlplane.StaffApprove, Version: 0, ArgsHash: a.ArgsHash}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Control.Dispatch(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	// The shop refuses more than is refundable (no block), then an order
	// outside the refund window (its policy: a block), then Countersign
	// stops the next proposal on that blocked order.
	if _, err := propose(f.NewOrder(t).ID, 999_999); err == nil {
		t.Fatal("a refund above what was paid was not refused")
	}
	long := b.Clock.Now().AddDate(0, -6, 0)
	old, err := b.Shop.CreateOrder(ctx, demoshop.OrderFixture{CustomerID: f.Customer.ID, DeliveredAt: &long,
		Items: []demoshop.ItemFixture{{Name: "Old lamp", UnitPriceCents: 3000, Quantity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := propose(old.ID, 1000); err == nil {
			t.Fatal("a refund outside the window was not refused")
		}
	}
	// Rejected with a reason, then the task paused.
	r := f.Refund(t, f.NewOrder(t), 700)
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: agentActor, InvocationID: r.ID, Verb: controlplane.StaffReject, Version: 0, Reason: controlplane.OtherReason, Other: "The customer asked for store credit instead"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Control.ChangeTask(ctx, agentActor, f.Task.ID, controlplane.TaskPause, 0); err != nil {
		t.Fatal(err)
	}

	c := b.Client(t)
	c.MustSignIn(agent)
	kinds, lines := webtest.TimelineRows(t, c, f.Task.ID)
	all := strings.Join(lines, "\n")
	want := map[string][]string{
		"invocation.proposed":  {"Test assistant (assistant) proposed “Refund $12.50 on order "},
		"invocation.edited":    {agent.Name + " edited the arguments of it: Amount $12.50 → $20.00", "The system quoted the edit again."},
		"invocation.approved":  {agent.Name + " approved “Refund $20.00 on order "},
		"invocation.completed": {"The shop confirmed "},
		"proposal.refused":     {"The shop refused a proposal by Test assistant (assistant) to issue refund on "},
		"proposal.blocked_after_refusal": {"Countersign refused a proposal by Test assistant (assistant) to issue refund on ",
			"is blocked after an earlier refusal"},
		"invocation.rejected": {agent.Name + " rejected it: The customer asked for store credit instead."},
		"task.paused":         {agent.Name + " paused the task"},
	}
	for kind, parts := range want {
		line := lineOf(kinds, lines, kind)
		for _, p := range parts {
			if !strings.Contains(line, p) {
				t.Errorf("%s reads %q, want it to say %q\n%s", kind, line, p, all)
			}
		}
	}
	if strings.Contains(lineOf(kinds, lines, "invocation.proposed"), "$20.00") {
		t.Errorf("the proposal is named by the edited quote: %q", lineOf(kinds, lines, "invocation.proposed"))
	}
	// Of the two refusals by the shop, only the one that made a block says
	// the target is blocked; neither says the assistant refused.
	var refusals []string
	for i, k := range kinds {
		if k == "proposal.refused" {
			refusals = append(refusals, lines[i])
		}
	}
	if len(refusals) != 2 || strings.Contains(refusals[0], "blocked") || !strings.Contains(refusals[1], "is blocked for this customer, in all their tasks, until a person lifts the block") {
		t.Errorf("refusals without and with a block read:\n%s", strings.Join(refusals, "\n"))
	}
	for _, l := range refusals {
		if strings.Contains(l, "(assistant) refused") {
			t.Errorf("the shop's refusal is told as the assistant's: %q", l)
		}
	}

	// Everything a request is now is rewritten; the trail stays as it was.
	if _, err := b.Store.Pool().Exec(ctx, `UPDATE invocations SET quote = jsonb_set(jsonb_set(quote, '{title}', '"Rewritten title"'),
		'{amount_cents}', '99999'), amount_cents = 99999, target_display = 'Rewritten target' WHERE task_id = $1`, f.Task.ID); err != nil {
		t.Fatal(err)
	}
	kinds2, lines2 := webtest.TimelineRows(t, c, f.Task.ID)
	if len(lines2) != len(lines) {
		t.Fatalf("%d lines after the rewrite, %d before", len(lines2), len(lines))
	}
	seen := map[string]bool{}
	for i := range lines {
		seen[kinds[i]] = true
		if kinds2[i] != kinds[i] || lines2[i] != lines[i] {
			t.Errorf("a %s line changed with the request's current quote:\nwas %q\nnow %q", kinds[i], lines[i], lines2[i])
		}
	}
	if len(seen) < 12 {
		t.Errorf("only %d kinds of event were recorded; the rewrite check covers too few", len(seen))
	}
}

// invocationOf is the request a staff decision left, for tests that go on
// with it.
func invocationOf(d controlplane.StaffDecided, err error) (controlplane.Invocation, error) {
	return d.Invocation, err
}
