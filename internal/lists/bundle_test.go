package lists_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/clocktest"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/handoffs"
	"countersign/internal/lists"
	"countersign/internal/shopadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// testBundle is the lists and a control plane over a fresh console
// database, connected to a real demo shop (its own database) over real
// HTTP, so the work listed is made the way the console makes it.
type testBundle struct {
	t         *testing.T
	ctx       context.Context
	store     *store.Store
	cp        *controlplane.Service
	ho        *handoffs.Service
	lists     *lists.Service
	shop      *demoshop.Shop
	clock     *clocktest.Clock
	customer  demoshop.Customer
	agent     controlplane.Actor
	second    controlplane.Actor // another agent, for a second approval
	assistant controlplane.Actor
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	clk := clocktest.New(time.Date(2026, 4, 10, 12, 0, 0, 0, time.UTC))
	st := store.New(dbtest.New(t))
	shopPool := dbtest.NewBare(t)
	if err := demoshop.Migrate(ctx, shopPool); err != nil {
		t.Fatal(err)
	}
	shop := demoshop.New(shopPool, demoshop.Options{Now: clk.Now})
	srv := httptest.NewServer(shop.Handler())
	t.Cleanup(srv.Close)
	reg := adapter.NewRegistry(shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: srv.URL, Token: shop.Token(),
		Ledger: adapter.NewLedger(st, clk.Now), Now: clk.Now}))
	b := &testBundle{t: t, ctx: ctx, store: st, shop: shop, clock: clk,
		cp:    controlplane.New(st, reg, controlplane.Config{CallTimeout: 5 * time.Second}, clk.Now, nil),
		lists: lists.New(st, clk.Now), assistant: controlplane.AssistantActor("asst_test", "Test assistant")}
	b.ho = handoffs.New(st, b.cp, reg, clk.Now)
	acc := accounts.NewService(st, clk.Now, accounts.DefaultThrottle)
	mk := func(role accounts.Role, name string) accounts.User {
		u, err := acc.Create(ctx, accounts.NewUser{Email: fmt.Sprintf("%s-%d@example.test", role, time.Now().UnixNano()),
			Name: name, Role: role, Password: "a long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	owner := mk(accounts.Manager, "Priya Owner")
	agent := mk(accounts.Agent, "Sam Agent")
	b.agent = controlplane.UserActor(agent.ID, "agent", agent.Name)
	second := mk(accounts.Agent, "Lee Agent")
	b.second = controlplane.UserActor(second.ID, "agent", second.Name)
	if err := b.cp.EnsurePolicies(ctx, &owner.ID); err != nil {
		t.Fatal(err)
	}
	cust, err := shop.CreateCustomer(ctx, demoshop.CustomerFixture{Name: "Ada Buyer", Email: fmt.Sprintf("ada-%d@example.test", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	b.customer = cust
	return b
}

// task opens a task for the test customer in its own conversation.
func (b *testBundle) task(conversation string) controlplane.Task {
	b.t.Helper()
	task, err := b.cp.CreateTask(b.ctx, b.assistant, controlplane.NewTask{CustomerRef: b.customer.Email,
		ConversationID: conversation, AllowedActions: []string{"issue_refund"},
		WriteBudget: 10, InflightLimit: 2, RatePerMinute: 60, ExpiresAt: b.clock.Now().Add(24 * time.Hour)})
	if err != nil {
		b.t.Fatal(err)
	}
	return task
}

// refund proposes a refund of cents on a new delivered order of the test
// customer; the default policy routes it to an agent's approval.
func (b *testBundle) refund(task controlplane.Task, cents int64) controlplane.Invocation {
	b.t.Helper()
	at := b.clock.Now().AddDate(0, 0, -5)
	o, err := b.shop.CreateOrder(b.ctx, demoshop.OrderFixture{CustomerID: b.customer.ID, DeliveredAt: &at, ShippingCents: 650,
		Items: []demoshop.ItemFixture{{Name: "Walnut lamp", UnitPriceCents: 4200, Quantity: 1}}})
	if err != nil {
		b.t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"order_id": o.ID, "amount_cents": cents, "reason_code": "damaged"})
	inv, err := b.cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: "issue_refund", Args: raw, Actor: b.assistant})
	if err != nil {
		b.t.Fatalf("propose: %v", err)
	}
	if inv.State != controlplane.AwaitingApproval {
		b.t.Fatalf("a refund of %d cents routed to %s, want awaiting approval", cents, inv.State)
	}
	return inv
}

// handoff records a hand-off as the assistant would, at a time.
func (b *testBundle) handoff(conversation, intent, data string, at time.Time) int64 {
	b.t.Helper()
	if _, err := b.store.Pool().Exec(b.ctx, `INSERT INTO assistants (id, name, created_at) VALUES ('asst_h', 'Helper', now()) ON CONFLICT DO NOTHING`); err != nil {
		b.t.Fatal(err)
	}
	var id int64
	if err := b.store.Pool().QueryRow(b.ctx, `INSERT INTO conversation_events (conversation_id, assistant_id, intent, mode, at, data)
		VALUES ($1, 'asst_h', $2, 'handed_off', $3, $4) RETURNING id`, conversation, intent, at, data).Scan(&id); err != nil {
		b.t.Fatal(err)
	}
	return id
}
