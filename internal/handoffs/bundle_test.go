package handoffs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/clocktest"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/handoffs"
	"countersign/internal/shopadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// testBundle is the hand-offs service and its control plane over a fresh
// console database, connected to a real demo shop (its own database) over
// real HTTP.
type testBundle struct {
	t         *testing.T
	ctx       context.Context
	store     *store.Store
	cp        *controlplane.Service
	ho        *handoffs.Service
	shop      *demoshop.Shop
	shopURL   string
	clock     *clocktest.Clock
	customer  demoshop.Customer
	owner     int64
	agent     controlplane.Actor
	agent2    controlplane.Actor
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
	b := &testBundle{t: t, ctx: ctx, store: st, shop: shop, clock: clk}
	srv := httptest.NewServer(shop.Handler())
	t.Cleanup(srv.Close)
	b.shopURL = srv.URL

	reg := adapter.NewRegistry(b.shopSystem("shop"))
	b.cp = controlplane.New(st, reg, controlplane.Config{CallTimeout: 5 * time.Second, LeaseMargin: time.Second}, clk.Now, nil)
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
	manager := mk(accounts.Manager, "Priya Owner")
	b.owner = manager.ID
	a1, a2 := mk(accounts.Agent, "Sam Agent"), mk(accounts.Agent, "Kim Agent")
	b.agent = controlplane.UserActor(a1.ID, "agent", a1.Name)
	b.agent2 = controlplane.UserActor(a2.ID, "agent", a2.Name)
	b.assistant = controlplane.AssistantActor("asst_test", "Test assistant")
	if err := b.cp.EnsurePolicies(ctx, &b.owner); err != nil {
		t.Fatal(err)
	}
	cust, err := shop.CreateCustomer(ctx, demoshop.CustomerFixture{Name: "Ada Buyer", Email: fmt.Sprintf("ada-%d@example.test", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	b.customer = cust
	return b
}

// shopSystem is the demo shop's adapter, connected under name.
func (b *testBundle) shopSystem(name string) adapter.System {
	ledger := adapter.NewLedger(b.store, b.clock.Now)
	return shopadapter.New(shopadapter.Config{Name: name, BaseURL: b.shopURL, Token: b.shop.Token(), Ledger: ledger, Now: b.clock.Now})
}

func (b *testBundle) task(actions []string, budget, inflight, rate int) controlplane.Task {
	b.t.Helper()
	task, err := b.cp.CreateTask(b.ctx, b.assistant, controlplane.NewTask{CustomerRef: b.customer.Email,
		ConversationID: fmt.Sprintf("conv-%d", time.Now().UnixNano()), AllowedActions: actions,
		WriteBudget: budget, InflightLimit: inflight, RatePerMinute: rate, ExpiresAt: b.clock.Now().Add(24 * time.Hour)})
	if err != nil {
		b.t.Fatal(err)
	}
	return task
}

// order makes a delivered order of the test customer: two items of $42.00
// and $8.00 with $6.50 shipping, delivered daysAgo days before now.
func (b *testBundle) order(daysAgo int) demoshop.Order {
	b.t.Helper()
	at := b.clock.Now().AddDate(0, 0, -daysAgo)
	o, err := b.shop.CreateOrder(b.ctx, demoshop.OrderFixture{CustomerID: b.customer.ID, DeliveredAt: &at, ShippingCents: 650,
		Items: []demoshop.ItemFixture{{Name: "Walnut lamp", UnitPriceCents: 4200, Quantity: 1}, {Name: "Bulb", UnitPriceCents: 800, Quantity: 1}}})
	if err != nil {
		b.t.Fatal(err)
	}
	return o
}

func (b *testBundle) setStage(action string, stage controlplane.Stage) {
	b.t.Helper()
	_, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET stage = $2, version = version + 1 WHERE action = $1`, action, int(stage))
	if err != nil {
		b.t.Fatal(err)
	}
}

func (b *testBundle) tryPropose(task controlplane.Task, action string, args any, summary string) (controlplane.Invocation, error) {
	raw, _ := json.Marshal(args)
	return b.cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: action, Args: raw, Summary: summary, Actor: b.assistant})
}

// effects returns the shop's ledger entries, optionally for one request id.
func (b *testBundle) effects(requestID string) []demoshop.LedgerEntry {
	b.t.Helper()
	u := b.shopURL + "/_ledger"
	if requestID != "" {
		u += "?request_id=" + url.QueryEscape(requestID)
	}
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer "+b.shop.Token())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	var out []demoshop.LedgerEntry
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		b.t.Fatal(err)
	}
	return out
}

func refund(orderID string, cents int64, reason string) map[string]any {
	return map[string]any{"order_id": orderID, "amount_cents": cents, "reason_code": reason}
}

// shopPost calls the shop directly, as its own staff would, with its
// token.
func (b *testBundle) shopPost(path, contentType string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, b.shopURL+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+b.shop.Token())
	return http.DefaultClient.Do(req)
}
