package httpadapter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/demoshop/shoptest"
	"countersign/internal/httpadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestDescribedSystemEndToEnd runs a refund through the control plane
// against the shop connected by its description file alone: proposed
// (dry-run quote), approved by an agent, dispatched once with the
// invocation's key, verified by read-back, and completed; the shop's ledger
// holds exactly one effect for that key.
func TestDescribedSystemEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shop := shoptest.Start(t, testNow)
	st := store.New(dbtest.New(t))
	a, err := httpadapter.LoadFile("testdata/shop-http.json", httpadapter.Config{Ledger: adapter.NewLedger(st, clock), Now: clock,
		HTTPClient: &http.Client{Timeout: 10 * time.Second},
		Getenv: func(name string) string {
			switch name {
			case "SHOP_URL":
				return shop.URL
			case "SHOP_TOKEN":
				return shop.Token()
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	cp := controlplane.New(st, adapter.NewRegistry(a), controlplane.Config{CallTimeout: 5 * time.Second}, clock, nil)
	if err := cp.EnsurePolicies(ctx, nil); err != nil {
		t.Fatal(err)
	}
	agent, err := accounts.NewService(st, clock, accounts.DefaultThrottle).Create(ctx, accounts.NewUser{Email: "agent@example.test",
		Name: "Sam Agent", Role: accounts.Agent, Password: "a long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	asst := controlplane.AssistantActor("asst_e2e", "E2E assistant")
	task, err := cp.CreateTask(ctx, asst, controlplane.NewTask{CustomerRef: demoshop.DemoCustomerEmail, ConversationID: "e2e-1",
		AllowedActions: []string{"issue_refund"}, WriteBudget: 3, InflightLimit: 1, RatePerMinute: 10, ExpiresAt: testNow.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]any{"order_id": "walnut lamp", "amount_cents": 1500, "reason_code": "damaged"})
	inv, err := cp.Propose(ctx, controlplane.Proposal{TaskID: task.ID, System: a.Name(), Action: "issue_refund", Args: args, Actor: asst})
	if err != nil {
		t.Fatal(err)
	}
	if inv.Quote.Title == "" || inv.Quote.AmountCents == nil || *inv.Quote.AmountCents != 1500 {
		t.Fatalf("quote %+v, want a titled $15.00 refund", inv.Quote)
	}
	if n := shop.Effects(t, ""); n != 0 {
		t.Fatalf("proposing wrote %d effects to the shop", n)
	}
	if inv.State == controlplane.AwaitingApproval {
		d, err := cp.StaffDecide(ctx, controlplane.StaffDecision{Actor: controlplane.UserActor(agent.ID, "agent", agent.Name),
			InvocationID: inv.ID, Verb: controlplane.StaffApprove, Version: inv.Version, ArgsHash: inv.ArgsHash})
		if err != nil {
			t.Fatal(err)
		}
		inv = d.Invocation
	}
	if inv.State != controlplane.Approved {
		t.Fatalf("after approval: %s", inv.State)
	}
	if _, err := cp.Dispatch(ctx, inv.ID); err != nil {
		t.Fatal(err)
	}
	done, err := cp.Invocation(ctx, inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if done.State != controlplane.Completed || done.Verification == nil || !done.Verification.Verified || done.Result == nil || done.Result.Reference == "" {
		t.Fatalf("after dispatch: %s, verification %+v, result %+v", done.State, done.Verification, done.Result)
	}
	if n := shop.Effects(t, done.IdempotencyKey); n != 1 {
		t.Errorf("%d effects under the invocation's key, want 1", n)
	}
	if sent, err := cp.Dispatch(ctx, inv.ID); err != nil || sent {
		t.Errorf("a second dispatch of the completed write: sent %v, %v; want not sent", sent, err)
	}
	if n := shop.Effects(t, ""); n != 1 {
		t.Errorf("%d effects after a second dispatch round, want 1", n)
	}
}
