package controlplane_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// moneyCase makes a target and the arguments of one money action of the
// shop. Every action whose spec has an amount needs one (TestSplitRoutesLikeTheWhole
// fails for an action without): the split rule is the system's, not a refund's.
type moneyCase struct {
	target func(b *testBundle) string
	args   func(target string, cents int64) map[string]any
}

var moneyCases = map[string]moneyCase{
	"issue_refund": {
		target: func(b *testBundle) string { return b.bigOrder().ID },
		args:   func(target string, cents int64) map[string]any { return refund(target, cents, "damaged") },
	},
}

// bigOrder is a delivered order of the test customer with one $400.00 item.
func (b *testBundle) bigOrder() demoshop.Order {
	b.t.Helper()
	at := b.clock.Now().AddDate(0, 0, -3)
	o, err := b.shop.CreateOrder(b.ctx, demoshop.OrderFixture{CustomerID: b.customer.ID, DeliveredAt: &at,
		Items: []demoshop.ItemFixture{{Name: "Oak table", UnitPriceCents: 40000, Quantity: 1}}})
	if err != nil {
		b.t.Fatal(err)
	}
	return o
}

// newCustomer makes the bundle act for a fresh customer, with no exposure.
func (b *testBundle) newCustomer() {
	b.t.Helper()
	c, err := b.shop.CreateCustomer(b.ctx, demoshop.CustomerFixture{Name: "Bo Buyer", Email: fmt.Sprintf("bo-%d@example.test", time.Now().UnixNano())})
	if err != nil {
		b.t.Fatal(err)
	}
	b.customer = c
}

// taskIn opens a task of assistant for the bundle's customer in conversation.
func (b *testBundle) taskIn(assistant controlplane.Actor, conversation string, actions []string, budget, rate int) controlplane.Task {
	b.t.Helper()
	task, err := b.cp.CreateTask(b.ctx, assistant, controlplane.NewTask{CustomerRef: b.customer.Email,
		ConversationID: conversation, AllowedActions: actions, WriteBudget: budget, InflightLimit: 2,
		RatePerMinute: rate, ExpiresAt: b.clock.Now().Add(24 * time.Hour)})
	if err != nil {
		b.t.Fatal(err)
	}
	return task
}

func (b *testBundle) moneyActions() []string {
	var out []string
	for _, sys := range b.reg.Systems() {
		for _, a := range sys.Actions() {
			if a.AmountParam != "" {
				out = append(out, a.Name)
			}
		}
	}
	if len(out) == 0 {
		b.t.Fatal("the shop has no money action")
	}
	return out
}

// TestSplitRoutesLikeTheWhole: for every money action of the shop, parts
// of one amount proposed through new tasks (and another assistant) route by
// what moved or is pending on the customer and target, against the
// approval threshold, the stage-5 ceiling and the second-approver amount.
func TestSplitRoutesLikeTheWhole(t *testing.T) {
	t.Parallel()
	b := setup(t)
	other := controlplane.AssistantActor("asst_other", "Other assistant")
	for _, action := range b.moneyActions() {
		mc, ok := moneyCases[action]
		if !ok {
			t.Fatalf("money action %s has no case in moneyCases", action)
		}
		newTask := func(who controlplane.Actor) controlplane.Task {
			return b.taskIn(who, fmt.Sprintf("conv-%s-%d", action, time.Now().UnixNano()), []string{action}, 10, 60)
		}
		propose := func(who controlplane.Actor, target string, cents int64) controlplane.Invocation {
			t.Helper()
			return b.propose(newTask(who), action, mc.args(target, cents), "")
		}

		// Threshold ($200.00, stage 4): the whole goes to an agent; so does
		// the part that takes the total over it, in another task of
		// another assistant.
		b.newCustomer()
		b.setStage(action, controlplane.StageAssisted)
		target := mc.target(b)
		whole := propose(b.assistant, target, 33830)
		if whole.State != controlplane.AwaitingApproval {
			t.Fatalf("%s: whole $338.30 routed to %s", action, whole.State)
		}
		if _, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: whole.ID, Verb: controlplane.StaffReject, Version: whole.Version, Reason: controlplane.OtherReason, Other: "Split it, we will see"}); err != nil {
			t.Fatal(err)
		}
		first := propose(b.assistant, target, 16915)
		second := propose(other, target, 16913)
		if first.State != controlplane.AwaitingConfirmation || second.State != controlplane.AwaitingApproval {
			t.Errorf("%s: split $169.15 + $169.13 routed to %s and %s, want the customer then an agent", action, first.State, second.State)
		}
		if !strings.Contains(second.RouteReason, "$338.28 in all") {
			t.Errorf("%s: the second part's route reason does not give the total: %q", action, second.RouteReason)
		}

		// Stage-5 ceiling ($25.00): one part runs on its own; every later
		// part, on this target or another of the customer's, waits for a
		// person.
		b.newCustomer()
		b.setStage(action, controlplane.StageAutonomous)
		target = mc.target(b)
		auto := propose(b.assistant, target, 2500)
		if auto.State != controlplane.Approved {
			t.Fatalf("%s: $25.00 at stage 5 routed to %s (%s)", action, auto.State, auto.RouteReason)
		}
		b.dispatchAll()
		b.wantState(auto.ID, controlplane.Completed)
		for _, part := range []struct {
			target string
			cents  int64
		}{{target, 2499}, {target, 2498}, {target, 1403}, {mc.target(b), 100}} {
			inv := propose(other, part.target, part.cents)
			if inv.State != controlplane.AwaitingApproval {
				t.Errorf("%s: part of %d cents after $25.00 ran automatically routed to %s, want an agent", action, part.cents, inv.State)
			}
		}
		b.dispatchAll()
		// The window is 24 hours: what moved a day ago no longer counts.
		b.clock.Advance(24*time.Hour + time.Minute)
		if later := propose(b.assistant, target, 2500); later.State != controlplane.Approved {
			t.Errorf("%s: $25.00 a day later routed to %s (%s), want approved by the policy", action, later.State, later.RouteReason)
		}
		b.dispatchAll()

		// Second approver ($500.00, stage 3): $300.00 twice on two targets
		// of one customer; the second needs two different people.
		b.newCustomer()
		b.setStage(action, controlplane.StagePropose)
		one := propose(b.assistant, mc.target(b), 30000)
		if got, err := staffApprove(b.ctx, b.cp, b.agent, one.ID, one.Version); err != nil || got.State != controlplane.Approved {
			t.Fatalf("%s: $300.00 with one approver: %v %v", action, got.State, err)
		}
		two := propose(other, mc.target(b), 30000)
		got, err := staffApprove(b.ctx, b.cp, b.agent, two.ID, two.Version)
		if err != nil || got.State != controlplane.AwaitingApproval {
			t.Fatalf("%s: the second $300.00 after one approval: %v %v, want a first approval only", action, got.State, err)
		}
		if got, err = staffApprove(b.ctx, b.cp, b.agent2, two.ID, got.Version); err != nil || got.State != controlplane.Approved {
			t.Fatalf("%s: second approver: %v %v", action, got.State, err)
		}
	}
}

// TestConcurrentSplitsRouteAsOne races twenty $20.00 refunds on one order,
// each through its own task, under a $25.00 stage-5 ceiling: exactly one runs
// automatically, the rest wait for a person, and the shop sees one refund.
func TestConcurrentSplitsRouteAsOne(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAutonomous)
	o := b.bigOrder()
	const n = 20
	tasks := make([]controlplane.Task, n)
	for i := range tasks {
		tasks[i] = b.task([]string{"issue_refund"}, 5, 2, 60)
	}
	// Every proposal counts its exposure only once all of them are in
	// their transactions: without the exposure lock each would count
	// nothing and run automatically.
	var arrived sync.WaitGroup
	arrived.Add(n)
	b.cp.SetHooks(controlplane.Hooks{BeforeExposureLock: arrived.Done, ExposureCounted: arrived.Wait})
	var wg sync.WaitGroup
	invs := make([]controlplane.Invocation, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			invs[i], errs[i] = b.tryPropose(tasks[i], "issue_refund", refund(o.ID, 2000, "damaged"), "")
		}()
	}
	close(start)
	wg.Wait()
	states := map[controlplane.State]int{}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("proposal %d: %v", i, err)
		}
		states[invs[i].State]++
	}
	if states[controlplane.Approved] != 1 || states[controlplane.AwaitingApproval] != n-1 {
		t.Fatalf("concurrent splits routed %v, want 1 approved by the policy and %d awaiting an agent", states, n-1)
	}
	b.dispatchAll()
	if got := len(b.effects("")); got != 1 {
		t.Errorf("the shop recorded %d effects, want the one automatic refund", got)
	}
}

// TestBlockHoldsAcrossTasks: a policy refusal in one task blocks the target
// for the customer's next task too, whatever the reason code, until a
// person lifts it from that task's page.
func TestBlockHoldsAcrossTasks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	o := b.order(45)
	first := b.task([]string{"issue_refund"}, 10, 2, 60)
	if _, err := b.tryPropose(first, "issue_refund", refund(o.ID, 4200, "damaged"), ""); err == nil {
		t.Fatal("a refund outside the window was not refused")
	}
	second := b.taskIn(controlplane.AssistantActor("asst_other", "Other assistant"), "conv-next", []string{"issue_refund"}, 10, 60)
	_, err := b.tryPropose(second, "issue_refund", refund(o.ID, 4200, "not_received"), "")
	if e, ok := apperr.As(err); !ok || e.Code != "blocked_after_refusal" || e.Kind != apperr.IllegalTransition {
		t.Fatalf("retry in a new task with another reason: %v, want blocked_after_refusal", err)
	}
	blocks, err := b.cp.CustomerBlocks(b.ctx, second.CustomerRef)
	if err != nil || len(blocks) != 1 || blocks[0].TargetID != o.ID || blocks[0].TaskID != first.ID {
		t.Fatalf("the new task's page lists blocks %+v (%v), want the one made in the first task", blocks, err)
	}
	if err := b.cp.LiftBlock(b.ctx, b.agent, second.ID, "shop", o.ID, "Delivery note received."); err != nil {
		t.Fatal(err)
	}
	_, err = b.tryPropose(second, "issue_refund", refund(o.ID, 1000, "damaged"), "")
	if e, ok := apperr.As(err); !ok || e.Code != "outside_refund_window_store_credit" {
		t.Errorf("after a person lifted the block: %v, want the policy's own refusal", err)
	}
}

// TestDuplicateAcrossTasksOfOneConversation: the same refund proposed again
// through a second task of the conversation is the first invocation while
// that is live; once it ended with no effect (rejected), or its task can no
// longer send it (cancelled), it holds nothing back.
func TestDuplicateAcrossTasksOfOneConversation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	o := b.order(3)
	conv := fmt.Sprintf("conv-dup-%d", time.Now().UnixNano())
	one := b.taskIn(b.assistant, conv, []string{"issue_refund"}, 10, 60)
	two := b.taskIn(b.assistant, conv, []string{"issue_refund"}, 10, 60)
	first := b.propose(one, "issue_refund", refund(o.ID, 500, "wrong_item"), "")
	again := b.propose(two, "issue_refund", refund(o.ID, 500, "wrong_item"), "")
	if again.ID != first.ID || !again.Deduplicated {
		t.Fatalf("same refund through a second task of the conversation: %s (dedup %v), want %s", again.ID, again.Deduplicated, first.ID)
	}
	if _, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: first.ID, Verb: controlplane.StaffReject, Version: first.Version, Reason: controlplane.OtherReason, Other: "Not this one"}); err != nil {
		t.Fatal(err)
	}
	fresh := b.propose(two, "issue_refund", refund(o.ID, 500, "wrong_item"), "")
	if fresh.ID == first.ID || fresh.Deduplicated {
		t.Errorf("a rejected invocation held a new proposal back: got %s (dedup %v)", fresh.ID, fresh.Deduplicated)
	}
	// Pending in a task that was cancelled: it can never be sent, so it
	// holds nothing back either.
	if _, err := b.cp.ChangeTask(b.ctx, b.agent, two.ID, controlplane.TaskCancel, 0); err != nil {
		t.Fatal(err)
	}
	three := b.taskIn(b.assistant, conv, []string{"issue_refund"}, 10, 60)
	if again := b.propose(three, "issue_refund", refund(o.ID, 500, "wrong_item"), ""); again.ID == fresh.ID || again.Deduplicated {
		t.Errorf("a pending invocation of a cancelled task held a new proposal back")
	}
	elsewhere := b.propose(b.task([]string{"issue_refund"}, 10, 2, 60), "issue_refund", refund(o.ID, 500, "wrong_item"), "")
	if elsewhere.ID == fresh.ID || elsewhere.Deduplicated {
		t.Errorf("another conversation's proposal was deduplicated")
	}
}

// TestTightenedPolicyReroutesAPendingConfirmation: a refund awaiting the
// customer when the manager moves refunds to stage 3 is not sent on the
// customer's yes: it goes to the agents' queue, saying why.
func TestTightenedPolicyReroutesAPendingConfirmation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	inv := b.propose(task, "issue_refund", refund(b.order(3).ID, 1000, "damaged"), "")
	if inv.State != controlplane.AwaitingConfirmation {
		t.Fatalf("stage 4 routed to %s", inv.State)
	}
	b.setStage("issue_refund", controlplane.StagePropose)
	d, err := customerConfirm(b.ctx, b.cp, controlplane.CustomerProvedOn(b.customer.Email, "code", inv.ID), inv.ID)
	got := d.Invocation
	if err != nil || got.State != controlplane.AwaitingApproval {
		t.Fatalf("confirmed after the policy moved to stage 3: %s, %v, want awaiting approval", got.State, err)
	}
	b.dispatchAll()
	if n := len(b.effects(inv.IdempotencyKey)); n != 0 {
		t.Fatalf("the confirmation sent the refund (%d effects)", n)
	}
	events, err := b.cp.Timeline(b.ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var why string
	for _, e := range events {
		if e.InvocationID == inv.ID && e.Action == "invocation.rerouted" {
			why, _ = e.Data["why"].(string)
		}
	}
	if !strings.Contains(why, "policy changed") {
		t.Errorf("no rerouted event saying the policy changed (why %q)", why)
	}
	if got, err = staffApprove(b.ctx, b.cp, b.agent, inv.ID, got.Version); err != nil {
		t.Fatal(err)
	}
	b.dispatchAll()
	b.wantState(inv.ID, controlplane.Completed)
}

// TestTightenedPolicyStopsAnApprovedWriteAtThePermit: approved (by the
// policy, by the customer, by one agent), not yet permitted, then the
// policy is tightened: the permit refuses each, nothing reaches the shop.
func TestTightenedPolicyStopsAnApprovedWriteAtThePermit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)

	b.setStage("issue_refund", controlplane.StageAutonomous)
	auto := b.propose(task, "issue_refund", refund(b.order(3).ID, 500, "damaged"), "")
	b.setStage("issue_refund", controlplane.StageAssisted)
	confirmed := b.propose(task, "issue_refund", refund(b.order(3).ID, 600, "damaged"), "")
	d, err := customerConfirm(b.ctx, b.cp, controlplane.CustomerProvedOn(b.customer.Email, "code", confirmed.ID), confirmed.ID)
	if confirmed = d.Invocation; err != nil || auto.State != controlplane.Approved || confirmed.State != controlplane.Approved {
		t.Fatalf("setup: auto %s, confirmed %s, %v", auto.State, confirmed.State, err)
	}
	b.setStage("issue_refund", controlplane.StagePropose)
	agent := b.propose(task, "issue_refund", refund(b.order(3).ID, 700, "damaged"), "")
	if agent, err = staffApprove(b.ctx, b.cp, b.agent, agent.ID, agent.Version); err != nil || agent.State != controlplane.Approved {
		t.Fatalf("setup: agent approval %v %v", agent.State, err)
	}
	// Stage 3 now, and two approvers above $1.00.
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET second_approver_above_cents = 100, version = version + 1 WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	b.dispatchAll()
	for _, inv := range []controlplane.Invocation{auto, confirmed, agent} {
		got := b.wantState(inv.ID, controlplane.NotDispatched)
		if got.NotDispatchedReason != controlplane.ReasonRouteChanged {
			t.Errorf("%s not dispatched for %q, want route_changed", inv.ID, got.NotDispatchedReason)
		}
	}
	if n := len(b.effects("")); n != 0 {
		t.Errorf("%d refunds reached the shop after the policy was tightened", n)
	}
}

// TestProposalBudget: a task may make ProposalsPerWrite proposals for each
// write of its budget, and no more than its rate a minute; a duplicate is
// not a new proposal.
func TestProposalBudget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 1, 2, 60)
	o := b.order(3)
	var first controlplane.Invocation
	for i := range controlplane.ProposalsPerWrite {
		inv := b.propose(task, "issue_refund", refund(o.ID, int64(100+i), "damaged"), "")
		if i == 0 {
			first = inv
		}
	}
	_, err := b.tryPropose(task, "issue_refund", refund(o.ID, 99, "damaged"), "")
	if e, ok := apperr.As(err); !ok || e.Kind != apperr.LimitReached || e.Code != "proposal_budget_spent" {
		t.Fatalf("proposal past the budget: %v, want proposal_budget_spent", err)
	}
	if dup := b.propose(task, "issue_refund", refund(o.ID, 100, "damaged"), ""); dup.ID != first.ID || !dup.Deduplicated {
		t.Errorf("a duplicate past the budget: %s (dedup %v), want the first invocation", dup.ID, dup.Deduplicated)
	}

	slow := b.task([]string{"issue_refund"}, 10, 2, 2)
	b.propose(slow, "issue_refund", refund(o.ID, 200, "damaged"), "")
	b.propose(slow, "issue_refund", refund(o.ID, 201, "damaged"), "")
	_, err = b.tryPropose(slow, "issue_refund", refund(o.ID, 202, "damaged"), "")
	if e, ok := apperr.As(err); !ok || e.Code != "rate_limited" || !e.Retryable {
		t.Fatalf("third proposal within a minute at 2 a minute: %v, want rate_limited", err)
	}
	b.clock.Advance(time.Minute + time.Second)
	b.propose(slow, "issue_refund", refund(o.ID, 202, "damaged"), "")
}
