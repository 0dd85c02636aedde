package web_test

import (
	"context"
	"net/http"
	"testing"

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
	b := setup(t, withShop(), withAssistant()) // b.task opened on the any-customer grant
	order := b.damagedOrder(t)
	admin := b.users[accounts.Admin]
	g := b.a.Grants
	g.AnyCustomer = false
	if _, err := b.assistants.SetGrants(context.Background(), controlplane.UserActor(admin.ID, string(admin.Role), admin.Name), b.a.ID, g); err != nil {
		t.Fatal(err)
	}
	res := b.call(t, b.key, http.MethodPost, "/api/v1/tasks/"+b.taskID()+"/invocations",
		map[string]any{"action": "issue_refund", "args": refundArgs(order, 700), "summary": "Refund $7.00"})
	if res.status == http.StatusCreated || res.status == http.StatusOK {
		t.Errorf("a proposal on an unvouched task after the any-customer grant was withdrawn: %d %s", res.status, res.body)
	}
}
