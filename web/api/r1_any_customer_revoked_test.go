package api_test

import (
	"context"
	"net/http"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
)

// TestR1AnyCustomerGrantWithdrawnStopsItsTasks: a task opened only on the
// admin's "act for any customer" grant (no assertion: nobody vouched for
// its customer) takes no new proposal once the admin withdraws that grant.
// The grant is what admitted the task's customer; mayRecord re-checks the
// assistant's maxima under the lock (withinGrants) but not this one.
func TestR1AnyCustomerGrantWithdrawnStopsItsTasks(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant()) // b.task opened on the any-customer grant
	order := b.DamagedOrder(t)
	admin := b.Users[accounts.Admin]
	g := b.Assistant.Grants
	g.AnyCustomer = false
	if _, err := b.Assistants.SetGrants(context.Background(), controlplane.UserActor(admin.ID, string(admin.Role), admin.Name), b.Assistant.ID, g); err != nil {
		t.Fatal(err)
	}
	res := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/invocations",
		map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 700), "summary": "Refund $7.00"})
	if res.Status == http.StatusCreated || res.Status == http.StatusOK {
		t.Errorf("a proposal on an unvouched task after the any-customer grant was withdrawn: %d %s", res.Status, res.Body)
	}
}
