package web_test

import (
	"context"
	"net/http"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
)

// TestAPIProposalsCountAgainstTheTask: over HTTP, a task with a budget of
// one write may make ProposalsPerWrite proposals; the next is 429
// proposal_budget_spent, and a repeat of an earlier one is still answered
// as the duplicate it is.
func TestAPIProposalsCountAgainstTheTask(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withAssistant())
	order := b.damagedOrder(t)
	task := b.call(t, b.key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "customer@demo.countersign.test",
		"conversation_id": "conv-budget", "allowed_actions": []string{"issue_refund"}, "write_budget": 1, "inflight_limit": 1,
		"rate_per_minute": 30}).want(t, http.StatusCreated).json["id"].(string)
	path := "/api/v1/tasks/" + task + "/invocations"
	var first string
	for i := range controlplane.ProposalsPerWrite {
		res := b.call(t, b.key, http.MethodPost, path, map[string]any{"action": "issue_refund", "args": refundArgs(order, 100+i)}).
			want(t, http.StatusCreated)
		if i == 0 {
			first = res.json["id"].(string)
		}
	}
	over := b.call(t, b.key, http.MethodPost, path, map[string]any{"action": "issue_refund", "args": refundArgs(order, 99)}).
		want(t, http.StatusTooManyRequests)
	if over.json["code"] != "proposal_budget_spent" || over.json["hint"] == nil {
		t.Errorf("past the proposal budget: %s", over.body)
	}
	dup := b.call(t, b.key, http.MethodPost, path, map[string]any{"action": "issue_refund", "args": refundArgs(order, 100)}).
		want(t, http.StatusOK)
	if dup.json["id"] != first || dup.json["deduplicated"] != true {
		t.Errorf("a repeat past the budget: %s", dup.body)
	}
}

// TestQueueCardCountsExposureForTheSecondApprover: two $30.00 refunds for
// one customer under a $50.00 second-approver amount; the second card says
// it needs two approvers, as its approval will.
func TestQueueCardCountsExposureForTheSecondApprover(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop())
	f := newConsoleFixture(t, b)
	if _, err := b.store.Pool().Exec(context.Background(), `UPDATE policies SET second_approver_above_cents = 5000 WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	first := f.refund(t, f.newOrder(t), 3000)
	second := f.refund(t, f.newOrder(t), 3000)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	doc := c.get("/queue").doc(t)
	for inv, want := range map[string]int{first.ID: 0, second.ID: 1} {
		if got := doc.Find(`[data-testid="card-` + inv + `"] [data-testid="second-approver"]`).Length(); got != want {
			t.Errorf("card %s shows the two-approvers badge %d times, want %d", inv, got, want)
		}
	}
}
