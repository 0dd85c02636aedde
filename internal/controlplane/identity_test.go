package controlplane_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/httpadapter"
	"countersign/internal/shopadapter"
	"countersign/store/dbtest"
)

// The demo shop connected twice: by its Go adapter ("shop") and by its
// description file ("shop-http"), both against one shop, both declaring
// the orders' number as their business key ("order_number"). One order is
// then one business object whichever system a proposal names.

// setupTwice is a bundle whose registry holds the shop twice.
func setupTwice(t *testing.T) *testBundle {
	t.Helper()
	return setupWith(t, dbtest.New(t), func(b *testBundle, ledger *adapter.Ledger) []adapter.System {
		file, err := httpadapter.LoadFile("../httpadapter/testdata/shop-http.json", httpadapter.Config{Ledger: ledger,
			Now: b.clock.Now, HTTPClient: &http.Client{Timeout: 5 * time.Second},
			Getenv: func(name string) string {
				switch name {
				case "SHOP_URL":
					return b.shopURL
				case "SHOP_TOKEN":
					return b.shop.Token()
				}
				return ""
			}})
		if err != nil {
			t.Fatal(err)
		}
		return []adapter.System{file}
	})
}

// both is a task of the bundle's customer that may refund through both
// connections of the shop.
func (b *testBundle) both(who controlplane.Actor, conversation string) controlplane.Task {
	b.t.Helper()
	return b.taskIn(who, conversation, []string{"shop/issue_refund", "shop-http/issue_refund"}, 10, 60)
}

// proposeOn proposes a refund through the named system.
func (b *testBundle) proposeOn(task controlplane.Task, system string, args map[string]any) (controlplane.Invocation, error) {
	raw, _ := json.Marshal(args)
	return b.cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, System: system, Action: "issue_refund", Args: raw, Actor: b.assistant})
}

func (b *testBundle) mustProposeOn(task controlplane.Task, system string, args map[string]any) controlplane.Invocation {
	b.t.Helper()
	inv, err := b.proposeOn(task, system, args)
	if err != nil {
		b.t.Fatalf("propose through %s: %v", system, err)
	}
	return inv
}

func conv(name string) string { return fmt.Sprintf("conv-%s-%d", name, time.Now().UnixNano()) }

// TestASplitAcrossTwoSystemsRoutesLikeTheWhole: halves of one refund, one
// through each connection of the shop, route as the whole would, against
// the approval threshold, the automatic ceiling and, for the customer's
// money across systems, the second-approver amount.
func TestASplitAcrossTwoSystemsRoutesLikeTheWhole(t *testing.T) {
	t.Parallel()
	b := setupTwice(t)

	// Threshold ($200.00, stage 4): $169.15 + $169.13 is $338.28.
	b.newCustomer()
	b.setStage("issue_refund", controlplane.StageAssisted)
	o := b.bigOrder()
	first := b.mustProposeOn(b.both(b.assistant, conv("split")), "shop", refund(o.ID, 16915, "damaged"))
	second := b.mustProposeOn(b.both(b.assistant, conv("split")), "shop-http", refund(o.ID, 16913, "damaged"))
	if first.State != controlplane.AwaitingConfirmation || second.State != controlplane.AwaitingApproval {
		t.Errorf("split across the systems routed to %s and %s, want the customer then an agent", first.State, second.State)
	}
	if !strings.Contains(second.RouteReason, "$338.28 in all") {
		t.Errorf("the second part's route reason does not give the total: %q", second.RouteReason)
	}

	// Stage-5 ceiling ($25.00): one part runs on its own, the other part
	// through the other system waits for a person.
	b.newCustomer()
	b.setStage("issue_refund", controlplane.StageAutonomous)
	o = b.bigOrder()
	auto := b.mustProposeOn(b.both(b.assistant, conv("auto")), "shop-http", refund(o.ID, 2500, "damaged"))
	if auto.State != controlplane.Approved {
		t.Fatalf("$25.00 at stage 5 routed to %s (%s)", auto.State, auto.RouteReason)
	}
	if part := b.mustProposeOn(b.both(b.assistant, conv("auto")), "shop", refund(o.ID, 2499, "damaged")); part.State != controlplane.AwaitingApproval {
		t.Errorf("$24.99 through the shop after $25.00 through its file routed to %s (%s), want an agent", part.State, part.RouteReason)
	}
	b.dispatchAll()

	// Second approver ($500.00, stage 3): $300.00 on each of two orders of
	// one customer, one through each system; the second needs two people.
	b.newCustomer()
	b.setStage("issue_refund", controlplane.StagePropose)
	one := b.mustProposeOn(b.both(b.assistant, conv("two")), "shop", refund(b.bigOrder().ID, 30000, "damaged"))
	if got, err := staffApprove(b.ctx, b.cp, b.agent, one.ID, one.Version); err != nil || got.State != controlplane.Approved {
		t.Fatalf("$300.00 with one approver: %v %v", got.State, err)
	}
	two := b.mustProposeOn(b.both(b.assistant, conv("two")), "shop-http", refund(b.bigOrder().ID, 30000, "damaged"))
	if got, err := staffApprove(b.ctx, b.cp, b.agent, two.ID, two.Version); err != nil || got.State != controlplane.AwaitingApproval {
		t.Errorf("the second $300.00, through the other system, after one approval: %v %v, want a first approval only", got.State, err)
	}
}

// TestABlockInOneSystemHoldsInTheOther: a policy refusal through the Go
// adapter blocks the order for the customer through the description file
// too, whatever the reason; a person's lift frees it in both.
func TestABlockInOneSystemHoldsInTheOther(t *testing.T) {
	t.Parallel()
	b := setupTwice(t)
	o := b.order(45)
	if _, err := b.proposeOn(b.both(b.assistant, conv("block")), "shop", refund(o.ID, 4200, "damaged")); err == nil {
		t.Fatal("a refund outside the window was not refused")
	}
	other := b.both(controlplane.AssistantActor("asst_other", "Other assistant"), conv("block"))
	_, err := b.proposeOn(other, "shop-http", refund(o.ID, 4200, "not_received"))
	if e, ok := apperr.As(err); !ok || e.Code != "blocked_after_refusal" {
		t.Fatalf("the same order through the other system: %v, want blocked_after_refusal", err)
	}
	if err := b.cp.LiftBlock(b.ctx, b.agent, other.ID, "shop", o.ID, "Delivery note received."); err != nil {
		t.Fatal(err)
	}
	_, err = b.proposeOn(other, "shop-http", refund(o.ID, 1000, "damaged"))
	if e, ok := apperr.As(err); !ok || e.Code != "outside_refund_window_store_credit" {
		t.Errorf("after a person lifted the block: %v, want the policy's own refusal", err)
	}
}

// TestEurosAndDollarsToOneCustomerAreNeverSummedAcrossSystems: euros
// pending on the customer through the file (whose policy has no amount
// limits) are not added to dollars proposed through the Go adapter
// (limits in dollars): the dollar request goes to a person, as it does
// within one system, rather than being compared without them; it counts
// only the dollars before it.
func TestEurosAndDollarsToOneCustomerAreNeverSummedAcrossSystems(t *testing.T) {
	t.Parallel()
	b := setupTwice(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET auto_max_cents = NULL, approval_above_cents = NULL,
		second_approver_above_cents = NULL, step_up_above_cents = NULL, version = version + 1
		WHERE system = 'shop-http' AND action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	task := b.both(b.assistant, conv("currencies"))
	euros := b.mustProposeOn(task, "shop-http", refund(b.orderIn("eur").ID, 15000, "damaged"))
	if euros.ExposureCents != 0 {
		t.Errorf("the euro refund counted %d of prior exposure", euros.ExposureCents)
	}
	dollars := b.mustProposeOn(task, "shop", refund(b.orderIn("usd").ID, 10000, "damaged"))
	wantPerson(t, "dollars through the shop with euros pending through its file", dollars, usdWithEUR)
	if dollars.ExposureCents != 0 {
		t.Errorf("the dollar refund counted %d of prior exposure: euros were added to dollars", dollars.ExposureCents)
	}
}

// TestTheSameRequestThroughTheOtherSystemIsADuplicate: in one
// conversation, the refund proposed again through the other connection of
// the shop is the first invocation.
func TestTheSameRequestThroughTheOtherSystemIsADuplicate(t *testing.T) {
	t.Parallel()
	b := setupTwice(t)
	o := b.order(3)
	c := conv("dup")
	first := b.mustProposeOn(b.both(b.assistant, c), "shop", refund(o.ID, 500, "wrong_item"))
	again := b.mustProposeOn(b.both(b.assistant, c), "shop-http", refund(o.ID, 500, "wrong_item"))
	if !again.Deduplicated || again.ID != first.ID {
		t.Errorf("the same refund through the other system: %s (deduplicated %v), want %s", again.ID, again.Deduplicated, first.ID)
	}
	if other := b.mustProposeOn(b.both(b.assistant, c), "shop-http", refund(o.ID, 400, "wrong_item")); other.Deduplicated {
		t.Errorf("another amount through the other system was taken for the first request")
	}
}

// TestTheBusinessKeyIsTheSystemsNotTheAssistants: the key an invocation
// counts under is the one the shop read for the order its arguments name;
// an argument that tries to name another key is refused, and the summary
// naming another order's number moves nothing.
func TestTheBusinessKeyIsTheSystemsNotTheAssistants(t *testing.T) {
	t.Parallel()
	b := setupTwice(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	mine, theirs := b.bigOrder(), b.bigOrder()
	task := b.both(b.assistant, conv("key"))
	for _, sys := range []string{"shop", "shop-http"} {
		args := refund(mine.ID, 1000, "damaged")
		args["order_number"] = theirs.Number
		if _, err := b.proposeOn(task, sys, args); err == nil {
			t.Errorf("%s: a proposal naming an order number of its own was recorded", sys)
		}
	}
	raw, _ := json.Marshal(refund(mine.ID, 1000, "damaged"))
	inv, err := b.cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, System: "shop-http", Action: "issue_refund", Args: raw,
		Summary: "Refund $10.00 on order " + theirs.Number, Actor: b.assistant})
	if err != nil {
		t.Fatal(err)
	}
	want := adapter.BusinessKey{Name: shopadapter.IdentityOrderNumber, Value: mine.Number}
	if k := inv.Quote.Target.BusinessKey; k == nil || *k != want {
		t.Fatalf("the invocation counts under %v, want the shop's %v", k, want)
	}
	if theirs.Number == "" || theirs.Number == mine.Number {
		t.Fatalf("the shop numbered the orders %q and %q", mine.Number, theirs.Number)
	}
}

// TestADecisionCountsTheOtherSystemAgain: the route checked again at a
// decision counts the business object across systems as the proposal
// did: once the second-approver amount is lowered to $340.00, $50.00
// through the file on top of $300.00 through the Go adapter needs two
// people.
func TestADecisionCountsTheOtherSystemAgain(t *testing.T) {
	t.Parallel()
	b := setupTwice(t)
	b.setStage("issue_refund", controlplane.StagePropose)
	o := b.bigOrder()
	one := b.mustProposeOn(b.both(b.assistant, conv("again")), "shop", refund(o.ID, 30000, "damaged"))
	if got, err := staffApprove(b.ctx, b.cp, b.agent, one.ID, one.Version); err != nil || got.State != controlplane.Approved {
		t.Fatalf("$300.00 with one approver: %v %v", got.State, err)
	}
	two := b.mustProposeOn(b.both(b.assistant, conv("again")), "shop-http", refund(o.ID, 5000, "damaged"))
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET second_approver_above_cents = 34000, version = version + 1
		WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	if got, err := staffApprove(b.ctx, b.cp, b.agent, two.ID, two.Version); err != nil || got.State != controlplane.AwaitingApproval {
		t.Errorf("$50.00 through the file after $300.00 through the shop, under a $340.00 second-approver amount: %v %v, want a first approval only", got.State, err)
	}
}

// TestConcurrentSplitsAcrossSystemsRouteAsOne races ten $20.00 refunds on
// one order, each through its own task, alternately through the Go
// adapter and the file, under a $25.00 stage-5 ceiling: each proposal
// counts its exposure only once all of them are in their transactions, so
// only a lock that spans the two systems lets exactly one run
// automatically.
func TestConcurrentSplitsAcrossSystemsRouteAsOne(t *testing.T) {
	t.Parallel()
	b := setupTwice(t)
	b.setStage("issue_refund", controlplane.StageAutonomous)
	o := b.bigOrder()
	const n = 10
	tasks := make([]controlplane.Task, n)
	for i := range tasks {
		tasks[i] = b.both(b.assistant, conv("race"))
	}
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
			invs[i], errs[i] = b.proposeOn(tasks[i], []string{"shop", "shop-http"}[i%2], refund(o.ID, 2000, "damaged"))
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
		t.Errorf("concurrent splits across the systems routed %v, want 1 approved by the policy and %d awaiting an agent", states, n-1)
	}
}
