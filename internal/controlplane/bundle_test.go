package controlplane_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/clocktest"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// testBundle is a control plane over a fresh console database, connected
// to a real demo shop (its own database) over real HTTP.
type testBundle struct {
	t         *testing.T
	ctx       context.Context
	store     *store.Store
	cp        *controlplane.Service
	reg       *adapter.Registry
	shop      *demoshop.Shop
	shopDB    *pgxpool.Pool
	shopURL   string
	clock     *clocktest.Clock
	customer  demoshop.Customer
	owner     int64
	agent     controlplane.Actor
	agent2    controlplane.Actor
	assistant controlplane.Actor
	// inflight and maxInflight count concurrent writes reaching the shop.
	inflight, maxInflight atomic.Int64
	// writes receives a value as each write reaches the shop.
	writes chan struct{}
	// arrived, when set, runs as each write reaches the shop, before the
	// shop handles it.
	arrived atomic.Pointer[func()]
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	return setupOn(t, dbtest.New(t))
}

// setupOn is setup over pool, a fresh console database (wrapped, e.g.
// traced).
func setupOn(t *testing.T, pool *pgxpool.Pool) *testBundle {
	t.Helper()
	return setupWith(t, pool, nil)
}

// setupWith is setupOn with more systems in the registry beside the shop
// adapter: more makes them, given the bundle (its shop served at
// b.shopURL) and the console's ledger.
func setupWith(t *testing.T, pool *pgxpool.Pool, more func(b *testBundle, ledger *adapter.Ledger) []adapter.System) *testBundle {
	t.Helper()
	ctx := context.Background()
	clk := clocktest.New(time.Date(2026, 4, 10, 12, 0, 0, 0, time.UTC))
	st := store.New(pool)

	shopPool := dbtest.NewBare(t)
	if err := demoshop.Migrate(ctx, shopPool); err != nil {
		t.Fatal(err)
	}
	shop := demoshop.New(shopPool, demoshop.Options{Now: clk.Now})
	b := &testBundle{t: t, ctx: ctx, store: st, shop: shop, shopDB: shopPool, clock: clk, writes: make(chan struct{}, 10000)}
	srv := httptest.NewServer(b.countWrites(shop.Handler()))
	t.Cleanup(srv.Close)
	b.shopURL = srv.URL

	ledger := adapter.NewLedger(st, clk.Now)
	systems := []adapter.System{shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: srv.URL, Token: shop.Token(), Ledger: ledger, Now: clk.Now})}
	if more != nil {
		systems = append(systems, more(b, ledger)...)
	}
	reg := adapter.NewRegistry(systems...)
	b.reg = reg
	b.cp = controlplane.New(st, reg, controlplane.Config{CallTimeout: 5 * time.Second, LeaseMargin: time.Second}, clk.Now, nil)

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

// countWrites wraps the shop to measure how many writes are in flight.
func (b *testBundle) countWrites(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.URL.Path[1] != '_' {
			n := b.inflight.Add(1)
			for {
				m := b.maxInflight.Load()
				if n <= m || b.maxInflight.CompareAndSwap(m, n) {
					break
				}
			}
			defer b.inflight.Add(-1)
			if f := b.arrived.Load(); f != nil {
				(*f)()
			}
			select {
			case b.writes <- struct{}{}:
			default:
			}
		}
		h.ServeHTTP(w, r)
	})
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

func (b *testBundle) product() demoshop.Product {
	b.t.Helper()
	p, err := b.shop.CreateProduct(b.ctx, demoshop.ProductFixture{Name: "Desk lamp", Description: "A lamp.", PriceCents: 3900, Stock: 5})
	if err != nil {
		b.t.Fatal(err)
	}
	return p
}

func (b *testBundle) products(n int) []demoshop.Product {
	b.t.Helper()
	out := make([]demoshop.Product, n)
	for i := range out {
		out[i] = b.product()
	}
	return out
}

func (b *testBundle) setStage(action string, stage controlplane.Stage) {
	b.t.Helper()
	_, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET stage = $2, version = version + 1 WHERE action = $1`, action, int(stage))
	if err != nil {
		b.t.Fatal(err)
	}
}

func (b *testBundle) propose(task controlplane.Task, action string, args any, summary string) controlplane.Invocation {
	b.t.Helper()
	inv, err := b.tryPropose(task, action, args, summary)
	if err != nil {
		b.t.Fatalf("propose %s: %v", action, err)
	}
	return inv
}

func (b *testBundle) tryPropose(task controlplane.Task, action string, args any, summary string) (controlplane.Invocation, error) {
	raw, _ := json.Marshal(args)
	return b.cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: action, Args: raw, Summary: summary, Actor: b.assistant})
}

func (b *testBundle) get(id string) controlplane.Invocation {
	b.t.Helper()
	inv, err := b.cp.Invocation(b.ctx, id)
	if err != nil {
		b.t.Fatal(err)
	}
	return inv
}

// dispatchAll dispatches every approved invocation through Dispatch (the
// production door for one invocation), oldest approval first as the
// dispatcher claims them, round after round until a round sends nothing:
// what is left approved then is held back by its task's limits.
func (b *testBundle) dispatchAll() {
	b.t.Helper()
	for {
		rows, _ := b.store.Pool().Query(b.ctx, `SELECT id FROM invocations WHERE state = 'approved' ORDER BY approved_at, id`)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			b.t.Fatal(err)
		}
		sent := 0
		for _, id := range ids {
			ok, err := b.cp.Dispatch(b.ctx, id)
			if err != nil {
				b.t.Fatal(err)
			}
			if ok {
				sent++
			}
		}
		if sent == 0 {
			return
		}
	}
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

func (b *testBundle) wantState(id string, want controlplane.State) controlplane.Invocation {
	b.t.Helper()
	inv := b.get(id)
	if inv.State != want {
		b.t.Fatalf("invocation %s is %s, want %s (error %+v)", id, inv.State, want, inv.Error)
	}
	return inv
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

// untilWaitingOnLock waits until at least sessions sessions of the test's
// database wait for a lock, in an UPDATE or INSERT of table or, when
// table is "", in any statement (true), or the operation whose result
// done carries ended without it (false; its result is put back on done).
// Only the test's database counts, so a parallel test's wait never
// passes for this one's.
func (b *testBundle) untilWaitingOnLock(table string, sessions int, done chan error) bool {
	b.t.Helper()
	for {
		select {
		case err := <-done:
			done <- err
			return false
		default:
		}
		var n int
		err := b.store.Pool().QueryRow(b.ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'
			AND ($1 = '' OR query LIKE 'UPDATE ' || $1 || '%' OR query LIKE 'INSERT INTO ' || $1 || '%')`, table).Scan(&n)
		if err != nil {
			b.t.Fatal(err)
		}
		if n >= sessions {
			return true
		}
		runtime.Gosched()
	}
}
