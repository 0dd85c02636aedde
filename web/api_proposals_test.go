package web_test

import (
	"net/http"
	"testing"

	"countersign/internal/controlplane"
)

// TestAPIProposalsCountAgainstTheTask: over HTTP, a task with a budget of
// one write may make ProposalsPerWrite proposals; the next is 429
// proposal_budget_spent, and a repeat of an earlier one is still answered
// as the duplicate it is.
func TestAPIProposalsCountAgainstTheTask(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
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
