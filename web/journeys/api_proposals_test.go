package journeys_test

import (
	"context"
	"net/http"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
)

// TestAPIProposalsCountAgainstTheTask: over HTTP, a task with a budget of
// one write may make ProposalsPerWrite proposals; the next is 429
// proposal_budget_spent, and a repeat of an earlier one is still answered
// as the duplicate it is.
func TestAPIProposalsCountAgainstTheTask(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	order := b.DamagedOrder(t)
	task := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "customer@demo.countersign.test",
		"conversation_id": "conv-budget", "allowed_actions": []string{"issue_refund"}, "write_budget": 1, "inflight_limit": 1,
		"rate_per_minute": 30}).Want(t, http.StatusCreated).JSON["id"].(string)
	path := "/api/v1/tasks/" + task + "/invocations"
	var first string
	for i := range controlplane.ProposalsPerWrite {
		res := b.Call(t, b.Key, http.MethodPost, path, map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 100+i)}).
			Want(t, http.StatusCreated)
		if i == 0 {
			first = res.JSON["id"].(string)
		}
	}
	over := b.Call(t, b.Key, http.MethodPost, path, map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 99)}).
		Want(t, http.StatusTooManyRequests)
	if over.JSON["code"] != "proposal_budget_spent" || over.JSON["hint"] == nil {
		t.Errorf("past the proposal budget: %s", over.Body)
	}
	dup := b.Call(t, b.Key, http.MethodPost, path, map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 100)}).
		Want(t, http.StatusOK)
	if dup.JSON["id"] != first || dup.JSON["deduplicated"] != true {
		t.Errorf("a repeat past the budget: %s", dup.Body)
	}
}

// TestQueueCardCountsExposureForTheSecondApprover: two $30.00 refunds for
// one customer under a $50.00 second-approver amount; the second card says
// it needs two approvers, as its approval will.
func TestQueueCardCountsExposureForTheSecondApprover(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	if _, err := b.Store.Pool().Exec(context.Background(), `UPDATE policies SET second_approver_above_cents = 5000 WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	first := f.Refund(t, f.NewOrder(t), 3000)
	second := f.Refund(t, f.NewOrder(t), 3000)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	doc := c.Get("/queue").Doc(t)
	for inv, want := range map[string]int{first.ID: 0, second.ID: 1} {
		if got := doc.Find(`[data-testid="card-` + inv + `"] [data-testid="second-approver"]`).Length(); got != want {
			t.Errorf("card %s shows the two-approvers badge %d times, want %d", inv, got, want)
		}
	}
}
