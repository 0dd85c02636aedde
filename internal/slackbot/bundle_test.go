package slackbot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/clocktest"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/fakeslack"
	"countersign/internal/shopadapter"
	"countersign/internal/slackbot"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const (
	botToken = "xoxb-test-token"
	secret   = "8f2c0d1e5a7b4c3d9e0f1a2b3c4d5e6f"
)

// testBundle is a bot over a fresh console database and a control plane
// connected to a real demo shop, talking to a fake Slack over real HTTP;
// its interactions go to a server that answers them as the console does.
type testBundle struct {
	t        *testing.T
	ctx      context.Context
	store    *store.Store
	cp       *controlplane.Service
	acc      *accounts.Service
	shop     *demoshop.Shop
	clock    *clocktest.Clock
	customer demoshop.Customer
	slack    *fakeslack.Slack
	bot      *slackbot.Bot
	// hook is the interactivity request URL.
	hook      string
	assistant controlplane.Actor
	// refuse, when set, is the message the shop's dry runs are refused
	// with (refusingSystem).
	refuse *atomic.Pointer[string]
}

// refusingSystem is a connected system whose dry runs are refused with
// the message refuse holds, when it holds one.
type refusingSystem struct {
	adapter.System
	refuse *atomic.Pointer[string]
}

func (s refusingSystem) DryRun(ctx context.Context, p adapter.Principal, action string, args json.RawMessage) (adapter.Quote, error) {
	if msg := s.refuse.Load(); msg != nil {
		return adapter.Quote{}, &adapter.Error{Code: "refused_by_system", Message: *msg, Hint: *msg, Outcome: adapter.Refused}
	}
	return s.System.DryRun(ctx, p, action, args)
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
	shopSrv := httptest.NewServer(shop.Handler())
	t.Cleanup(shopSrv.Close)
	refuse := &atomic.Pointer[string]{}
	reg := adapter.NewRegistry(refusingSystem{refuse: refuse, System: shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: shopSrv.URL,
		Token: shop.Token(), Ledger: adapter.NewLedger(st, clk.Now), Now: clk.Now})})
	b := &testBundle{t: t, ctx: ctx, store: st, shop: shop, clock: clk, refuse: refuse,
		cp:  controlplane.New(st, reg, controlplane.Config{CallTimeout: 5 * time.Second}, clk.Now, nil),
		acc: accounts.NewService(st, clk.Now, accounts.DefaultThrottle), assistant: controlplane.AssistantActor("asst_test", "Test assistant")}
	owner := b.user(accounts.Manager, "Priya Owner")
	if err := b.cp.EnsurePolicies(ctx, &owner.ID); err != nil {
		t.Fatal(err)
	}
	cust, err := shop.CreateCustomer(ctx, demoshop.CustomerFixture{Name: "Ada Buyer", Email: fmt.Sprintf("ada-%d@example.test", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	b.customer = cust

	b.slack = fakeslack.New(botToken, secret)
	slackSrv := httptest.NewServer(b.slack.Handler())
	t.Cleanup(slackSrv.Close)
	b.bot = slackbot.New(slackbot.Config{Token: botToken, SigningSecret: secret, Channel: "#approvals", APIURL: slackSrv.URL + "/api/",
		BaseURL: "https://console.example"}, b.cp, st, b.acc, clk.Now, nil)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		reply, err := b.bot.HandleInteraction(r.Context(), r.Header, body)
		if err != nil {
			http.Error(w, err.Error(), statusOf(err))
			return
		}
		w.WriteHeader(reply.Status)
		if reply.Body != nil {
			_ = json.NewEncoder(w).Encode(reply.Body)
		}
	}))
	t.Cleanup(hook.Close)
	b.hook = hook.URL
	return b
}

func statusOf(err error) int {
	switch apperr.KindOf(err) {
	case apperr.Unauthenticated:
		return http.StatusUnauthorized
	case apperr.BadRequest:
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// user makes a console account.
func (b *testBundle) user(role accounts.Role, name string) accounts.User {
	b.t.Helper()
	u, err := b.acc.Create(b.ctx, accounts.NewUser{Email: fmt.Sprintf("%s-%d@example.test", role, time.Now().UnixNano()),
		Name: name, Role: role, Password: "a long enough password"})
	if err != nil {
		b.t.Fatal(err)
	}
	return u
}

// agent makes an agent's console account and a Slack user linked to it.
func (b *testBundle) agent(name string) (accounts.User, fakeslack.User) {
	b.t.Helper()
	u := b.user(accounts.Agent, name)
	su := b.slack.AddUser(fakeslack.User{ID: fmt.Sprintf("U%d", u.ID), Name: name})
	if err := b.store.LinkSlackUser(b.ctx, store.SlackLink{Team: su.Team, User: su.ID, UserID: u.ID, How: "code", LinkedAt: b.clock.Now()}); err != nil {
		b.t.Fatal(err)
	}
	return u, su
}

// refund proposes a refund of cents on order (a new one when zero); the
// default policy routes it to an agent's approval.
func (b *testBundle) refund(order string, cents int64) controlplane.Invocation {
	b.t.Helper()
	if order == "" {
		order = b.order()
	}
	task, err := b.cp.CreateTask(b.ctx, b.assistant, controlplane.NewTask{CustomerRef: b.customer.Email,
		ConversationID: fmt.Sprintf("conv-%d", time.Now().UnixNano()), AllowedActions: []string{"issue_refund"},
		WriteBudget: 10, InflightLimit: 2, RatePerMinute: 60, ExpiresAt: b.clock.Now().Add(24 * time.Hour)})
	if err != nil {
		b.t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"order_id": order, "amount_cents": cents, "reason_code": "damaged"})
	inv, err := b.cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: "issue_refund", Args: raw, Actor: b.assistant})
	if err != nil {
		b.t.Fatalf("propose: %v", err)
	}
	if inv.State != controlplane.AwaitingApproval {
		b.t.Fatalf("a refund of %d cents routed to %s, want awaiting approval", cents, inv.State)
	}
	return inv
}

// order makes a delivered order of the test customer: a $42.00 lamp and
// $6.50 shipping.
func (b *testBundle) order() string {
	b.t.Helper()
	at := b.clock.Now().AddDate(0, 0, -5)
	o, err := b.shop.CreateOrder(b.ctx, demoshop.OrderFixture{CustomerID: b.customer.ID, DeliveredAt: &at, ShippingCents: 650,
		Items: []demoshop.ItemFixture{{Name: "Walnut lamp", UnitPriceCents: 4200, Quantity: 1}}})
	if err != nil {
		b.t.Fatal(err)
	}
	return o.ID
}

// sync runs the bot's sync once.
func (b *testBundle) sync() {
	b.t.Helper()
	if err := b.bot.Sync(b.ctx); err != nil {
		b.t.Fatal(err)
	}
}

// message is the channel's message of invocation id, as it stands.
func (b *testBundle) message(id string) fakeslack.Message {
	b.t.Helper()
	for _, m := range b.slack.Messages() {
		if strings.Contains(string(m.Blocks), id) {
			return m
		}
	}
	b.t.Fatalf("no message in the channel names %s; messages: %+v", id, b.slack.Messages())
	return fakeslack.Message{}
}

// click sends u's click on button action of m and returns the status.
func (b *testBundle) click(u fakeslack.User, m fakeslack.Message, action string) int {
	b.t.Helper()
	in, ok := b.slack.Click(u, m, action)
	if !ok {
		b.t.Fatalf("the message has no %s button: %s", action, m.Blocks)
	}
	return b.send(in)
}

func (b *testBundle) send(in fakeslack.Interaction) int {
	b.t.Helper()
	status, _, err := in.Send(b.hook)
	if err != nil {
		b.t.Fatal(err)
	}
	return status
}

func (b *testBundle) state(id string) controlplane.State {
	b.t.Helper()
	inv, err := b.cp.Invocation(b.ctx, id)
	if err != nil {
		b.t.Fatal(err)
	}
	return inv.State
}

// lastEphemeral is the latest answer shown to u alone ("" when none).
func (b *testBundle) lastEphemeral(u fakeslack.User) string {
	es := b.slack.Ephemerals()
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].User == u.ID {
			return es[i].Text
		}
	}
	return ""
}

// decisions lists the events of invocation id whose action is one of the
// decisions, oldest first.
func (b *testBundle) decisions(inv controlplane.Invocation) []controlplane.Event {
	b.t.Helper()
	events, err := b.cp.Timeline(b.ctx, inv.TaskID)
	if err != nil {
		b.t.Fatal(err)
	}
	var out []controlplane.Event
	for _, e := range events {
		if e.InvocationID == inv.ID && (e.Action == "invocation.approved" || e.Action == "invocation.first_approval" || e.Action == "invocation.rejected") {
			out = append(out, e)
		}
	}
	return out
}
