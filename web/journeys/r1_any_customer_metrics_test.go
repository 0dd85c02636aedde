package journeys_test

import (
	"fmt"
	"net/http"
	"testing"

	"countersign/web/webtest"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/accounts"
)

// TestR1AnyCustomerTasksDoNotVouchForMetrics: an assistant an admin lets act
// for any customer (a staff-facing grant, not the business vouching for a
// customer, and not the "reports count without a task" grant) opens a task
// per made-up conversation, for made-up customers, and reports "answered"
// on each. Its claims must not move the business's headline figures.
func TestR1AnyCustomerTasksDoNotVouchForMetrics(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	webtest.LoadHistory(t, b, 300, 200)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])
	before := webtest.ShownMetrics(t, c.Get("/metrics").Doc(t))
	for i := range 40 {
		conv := fmt.Sprintf("made-up-%d", i)
		b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": fmt.Sprintf("nobody-%d@example.test", i),
			"conversation_id": conv, "allowed_actions": []string{"issue_refund"}, "write_budget": 1, "inflight_limit": 1,
			"rate_per_minute": 1}).Want(t, http.StatusCreated)
		b.Report(t, b.Key, conv, "informational", "answered")
	}
	b.RefreshMetrics(t)
	after := webtest.ShownMetrics(t, c.Get("/metrics").Doc(t))
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("40 made-up any-customer tasks with made-up events moved the business's figures (-before +after):\n%s", diff)
	}
}
