package chaos

import (
	"cmp"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/assistants"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/gqlshop"
	"countersign/internal/httpadapter"
	"countersign/internal/shopadapter"
	"countersign/internal/webhooks"
	"countersign/store"
)

// The actions a round drives, one per stage.
const (
	actionAuto    = shopadapter.ActionUpdateProductDesc     // stage 5: the policy approves
	actionApprove = shopadapter.ActionCancelSubscription    // stage 3: an agent approves
	actionConfirm = shopadapter.ActionChangeShippingAddress // stage 4: the customer confirms
	// actionRefund is at stage 3 with a second-approver threshold below
	// every refund the driver proposes: two different agents approve each.
	actionRefund = shopadapter.ActionIssueRefund
	// actionReinstate reverses a completed cancellation (Reverse proposes
	// it); an agent who did not approve the cancellation approves it.
	actionReinstate = shopadapter.ActionReinstateSubscription
)

// The systems a wide round connects: the demo shop through its adapter,
// and a second demo shop, the warehouse's catalogue, through a description
// file (internal/httpadapter), whose product descriptions are automatic.
const (
	systemShop      = "shop"
	systemWarehouse = "warehouse"
)

// secondApproverAbove is the refund policy's second-approver threshold;
// the driver's refunds are all above it.
const secondApproverAbove = 5000

// warehouseFile describes the warehouse to the consoles (SYSTEMS_DIR).
//
//go:embed warehouse.json
var warehouseFile []byte

const password = "chaos-campaign-password"

// world is one round's installation: a fresh console database and shop
// database, the shop served in this process, console processes, and the
// people and assistant the driver acts as.
type world struct {
	env       *Env
	dbName    string
	shopDB    string
	pool      *pgxpool.Pool // the console's database, for setup and the checker
	shopPool  *pgxpool.Pool
	shop      *demoshop.Shop
	shopURL   string
	shopSrv   *http.Server
	consoles  []*console
	apiKey    string
	admin     string // e-mail
	agent     string
	agent2    string   // the second approver of refunds, the approver of reversals
	operator  string   // the stage-5 tasks' customer (a shop operator)
	customers []string // stage-3 and stage-4 customers, each with a console account
	shopIDs   map[string]string
	// wide is a round's world: the warehouse and the webhook receiver
	// below are there (the benchmark's World has neither).
	wide        bool
	whDB        string
	whPool      *pgxpool.Pool
	warehouse   *demoshop.Shop
	whURL       string
	whSrv       *http.Server
	systemsDir  string
	hooks       *receiver
	assistantID string
	// second is the wide round's second system: SecondWarehouse, or
	// SecondGraphQL with the GraphQL shop below in the warehouse's place.
	second      string
	gql         *gqlshop.Shop
	gqlOperator string // the operator's customer id in the GraphQL shop
	gqlFaults   *gqlFaults
	gqlURL      string
	gqlSrv      *http.Server
}

// worldOptions are what a world is built with besides its consoles.
type worldOptions struct {
	extraEnv []string
	wrapShop func(http.Handler) http.Handler
	// wide connects the warehouse and registers the webhook receiver.
	wide bool
	seed uint64
	// second is the wide round's second system (SecondWarehouse when
	// empty).
	second string
}

// newWorld is a round's world: the shop, the second system (the warehouse
// or the GraphQL shop, as second says) and the webhook receiver, and
// instances consoles.
func newWorld(ctx context.Context, env *Env, bin string, instances int, seed uint64, second string) (w *world, err error) {
	return newWorldWith(ctx, env, bin, instances, worldOptions{wide: true, seed: seed, second: second})
}

// newWorldWith is newWorld as opt says: extra console environment, a
// wrapper around the shop's handler (both may be nil), and whether the
// warehouse and the webhook receiver are there.
func newWorldWith(ctx context.Context, env *Env, bin string, instances int, opt worldOptions) (w *world, err error) {
	extraEnv, wrapShop := opt.extraEnv, opt.wrapShop
	w = &world{env: env, shopIDs: map[string]string{}, wide: opt.wide, second: cmp.Or(opt.second, SecondWarehouse)}
	defer func() {
		if err != nil {
			w.close()
		}
	}()
	var consoleURL, shopURL string
	if w.dbName, consoleURL, err = env.CreateDatabase(ctx, "chaos_cs"); err != nil {
		return w, err
	}
	if w.shopDB, shopURL, err = env.CreateDatabase(ctx, "chaos_shop"); err != nil {
		return w, err
	}
	if w.pool, err = store.Open(ctx, consoleURL, 30*time.Second); err != nil {
		return w, err
	}
	if _, err = store.Migrate(ctx, w.pool); err != nil {
		return w, err
	}
	if w.shopPool, err = store.Open(ctx, shopURL, 30*time.Second); err != nil {
		return w, err
	}
	if err = demoshop.Migrate(ctx, w.shopPool); err != nil {
		return w, err
	}
	w.shop = demoshop.New(w.shopPool, demoshop.Options{TestEndpoints: true})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return w, err
	}
	w.shopURL = "http://" + l.Addr().String()
	var shopHandler http.Handler = w.shop.Handler()
	if wrapShop != nil {
		shopHandler = wrapShop(shopHandler)
	}
	w.shopSrv = &http.Server{Handler: shopHandler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = w.shopSrv.Serve(l) }()
	if w.wide {
		if err = w.startWide(ctx, opt.seed); err != nil {
			return w, err
		}
	}

	if err = w.seed(ctx); err != nil {
		return w, err
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	dbURL, direct := consoleURL, []string(nil)
	if pooled := env.PooledURL(w.dbName); pooled != "" {
		// Behind the pooler: the consoles' statements go through PgBouncer,
		// their LISTEN and migration lock straight to the proxy.
		dbURL, direct = pooled, []string{"DATABASE_DIRECT_URL=" + consoleURL}
	}
	for i := range instances {
		c, err := newConsole(i+1, bin, dbURL, w.shopURL, w.shop.Token(), hex.EncodeToString(key))
		if err != nil {
			return w, err
		}
		c.env = append(c.env, direct...)
		if w.wide {
			c.env = append(c.env, "SYSTEMS_DIR="+w.systemsDir, "WEBHOOK_ALLOW_PRIVATE=true", "WEBHOOK_INTERVAL="+webhookInterval.String())
			for _, k := range []string{"WAREHOUSE_URL", "WAREHOUSE_TOKEN", "GQLSHOP_URL", "GQLSHOP_TOKEN"} {
				if v := w.secondEnv(k); v != "" {
					c.env = append(c.env, k+"="+v)
				}
			}
		}
		c.env = append(c.env, extraEnv...)
		w.consoles = append(w.consoles, c)
		if err := c.start(); err != nil {
			return w, err
		}
	}
	for _, c := range w.consoles {
		if err := c.waitUp(ctx, 90*time.Second); err != nil {
			return w, err
		}
	}
	return w, nil
}

// seed creates the people, the assistant and its key through the
// production packages, and the policies the round uses.
func (w *world) seed(ctx context.Context) error {
	st := store.New(w.pool)
	acc := accounts.NewService(st, time.Now, accounts.DefaultThrottle)
	mk := func(email, name string, role accounts.Role) (accounts.User, error) {
		return acc.Create(ctx, accounts.NewUser{Email: email, Name: name, Role: role, Password: password})
	}
	admin, err := mk("admin@chaos.test", "Chaos Admin", accounts.Admin)
	if err != nil {
		return err
	}
	manager, err := mk("manager@chaos.test", "Chaos Manager", accounts.Manager)
	if err != nil {
		return err
	}
	if _, err := mk("agent@chaos.test", "Chaos Agent", accounts.Agent); err != nil {
		return err
	}
	if _, err := mk("agent2@chaos.test", "Chaos Second Agent", accounts.Agent); err != nil {
		return err
	}
	w.admin, w.agent, w.agent2 = "admin@chaos.test", "agent@chaos.test", "agent2@chaos.test"

	ledger := adapter.NewLedger(st, nil)
	reg := adapter.NewRegistry(shopadapter.New(shopadapter.Config{Name: systemShop, BaseURL: w.shopURL, Token: w.shop.Token(), Ledger: ledger}))
	if w.wide {
		name, file := "warehouse.json", warehouseFile
		if w.second == SecondGraphQL {
			name, file = "graphql-shop.json", graphqlFile
		}
		second, err := httpadapter.Load(name, file, httpadapter.Config{Ledger: ledger, Getenv: w.secondEnv})
		if err != nil {
			return err
		}
		reg.Connect(second)
	}
	cp := controlplane.New(st, reg, controlplane.Config{}, time.Now, nil)
	if err := cp.EnsurePolicies(ctx, &manager.ID); err != nil {
		return err
	}
	// The manager stages the round's actions as on the policies page.
	mgr := controlplane.UserActor(manager.ID, string(accounts.Manager), manager.Name)
	type staged struct{ system, action string }
	stages := map[staged]controlplane.Stage{{systemShop, actionAuto}: controlplane.StageAutonomous,
		{systemShop, actionApprove}: controlplane.StagePropose, {systemShop, actionConfirm}: controlplane.StageAssisted}
	if w.wide {
		stages[staged{systemShop, actionRefund}] = controlplane.StagePropose
		stages[staged{systemShop, actionReinstate}] = controlplane.StagePropose
		if w.second == SecondGraphQL {
			stages[staged{systemGraphQL, actionGQLRefund}] = controlplane.StageAutonomous
		} else {
			stages[staged{systemWarehouse, actionAuto}] = controlplane.StageAutonomous
		}
	}
	for sa, stage := range stages {
		p, err := cp.Policy(ctx, sa.system, sa.action)
		if err != nil {
			return err
		}
		p.Stage, p.ConfirmationWindow = stage, 30*time.Minute
		if sa.action == actionRefund {
			second := int64(secondApproverAbove)
			p.SecondApproverAboveCents = &second
		}
		if sa.system == systemGraphQL {
			// The GraphQL shop's refunds are the volume of automatic
			// writes: a ceiling no exposure of the round reaches.
			ceiling := int64(1 << 40)
			p.AutoMaxCents, p.ApprovalAboveCents, p.SecondApproverAboveCents = &ceiling, nil, nil
		}
		if _, err := cp.ChangePolicy(ctx, mgr, p, p.Version, "the chaos campaign's workload"); err != nil {
			return fmt.Errorf("chaos: stage %s/%s: %w", sa.system, sa.action, err)
		}
	}
	asst := assistants.New(st, cp, reg, time.Now)
	a, err := asst.Create(ctx, &admin.ID, "chaos-assistant")
	if err != nil {
		return err
	}
	if err := asst.EnableAll(ctx, a.ID); err != nil {
		return err
	}
	// The campaign's workload is a staff tool's: it acts for any customer
	// of the shop and asks for limits far above an assistant's defaults,
	// so the admin grants both explicitly.
	adminActor := controlplane.UserActor(admin.ID, string(accounts.Admin), admin.Name)
	if _, err := asst.SetGrants(ctx, adminActor, a.ID, assistants.Grants{MaxWriteBudget: assistants.CeilingWriteBudget,
		MaxInflightLimit: assistants.CeilingInflightLimit, MaxRatePerMinute: assistants.CeilingRatePerMinute, AnyCustomer: true}); err != nil {
		return err
	}
	if _, w.apiKey, err = asst.IssueKey(ctx, a.ID, &admin.ID); err != nil {
		return err
	}
	w.assistantID = a.ID
	if w.wide {
		// The admin registers the receiver as the assistant's outcome
		// endpoint, as on the assistant's page.
		_, secret, err := webhooks.New(st, time.Now, webhooks.Config{AllowPrivate: true}).Register(ctx, a.ID, &admin.ID, w.hooks.url)
		if err != nil {
			return err
		}
		w.hooks.setSecret(secret)
		// The warehouse knows the operator too: its products are edited
		// on the operator's behalf (the GraphQL shop was made knowing it).
		if w.warehouse != nil {
			if _, err := w.warehouse.CreateCustomer(ctx, demoshop.CustomerFixture{Email: "operator@chaos.test", Name: "Shop Operator"}); err != nil {
				return err
			}
		}
	}

	op, err := w.shop.CreateCustomer(ctx, demoshop.CustomerFixture{Email: "operator@chaos.test", Name: "Shop Operator"})
	if err != nil {
		return err
	}
	w.operator = op.Email
	w.shopIDs[op.Email] = op.ID
	for i := range 4 {
		email := fmt.Sprintf("customer%d@chaos.test", i+1)
		c, err := w.shop.CreateCustomer(ctx, demoshop.CustomerFixture{Email: email, Name: fmt.Sprintf("Customer %d", i+1)})
		if err != nil {
			return err
		}
		if _, err := mk(email, c.Name, accounts.Customer); err != nil {
			return err
		}
		w.customers = append(w.customers, email)
		w.shopIDs[email] = c.ID
	}
	return nil
}

// newProduct, newSubscription and newOrder make one fresh target for one
// proposal, so no write's target is changed by another.
func (w *world) newProduct(ctx context.Context) (string, error) {
	p, err := w.shop.CreateProduct(ctx, demoshop.ProductFixture{Name: "Lamp", Description: "Old.", PriceCents: 1000, Stock: 3})
	return p.ID, err
}

// newWarehouseProduct is a fresh product in the warehouse's catalogue.
func (w *world) newWarehouseProduct(ctx context.Context) (string, error) {
	p, err := w.warehouse.CreateProduct(ctx, demoshop.ProductFixture{Name: "Crate", Description: "Old.", PriceCents: 1000, Stock: 3})
	return p.ID, err
}

// newRefundable is a fresh order delivered two days ago, worth more than
// any refund the driver proposes on it.
func (w *world) newRefundable(ctx context.Context, customer string) (string, error) {
	delivered := time.Now().Add(-48 * time.Hour)
	o, err := w.shop.CreateOrder(ctx, demoshop.OrderFixture{CustomerID: w.shopIDs[customer], DeliveredAt: &delivered,
		Items: []demoshop.ItemFixture{{Name: "Walnut lamp", UnitPriceCents: 15000}}})
	return o.ID, err
}

func (w *world) newSubscription(ctx context.Context, customer string) (string, error) {
	s, err := w.shop.CreateSubscription(ctx, demoshop.SubscriptionFixture{CustomerID: w.shopIDs[customer]})
	return s.ID, err
}

func (w *world) newOrder(ctx context.Context, customer string) (string, error) {
	o, err := w.shop.CreateOrder(ctx, demoshop.OrderFixture{CustomerID: w.shopIDs[customer]})
	return o.ID, err
}

// console returns a live console, preferring the n-th.
func (w *world) console(n int) *console {
	return w.consoles[n%len(w.consoles)]
}

// close stops everything and drops the round's databases.
func (w *world) close() {
	for _, c := range w.consoles {
		c.close()
	}
	for _, srv := range []*http.Server{w.shopSrv, w.whSrv, w.gqlSrv} {
		if srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = srv.Shutdown(ctx)
			cancel()
		}
	}
	if w.hooks != nil {
		w.hooks.close()
	}
	if w.whPool != nil {
		w.whPool.Close()
	}
	if w.systemsDir != "" {
		os.RemoveAll(w.systemsDir)
	}
	if w.pool != nil {
		w.pool.Close()
	}
	if w.shopPool != nil {
		w.shopPool.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, db := range []string{w.dbName, w.shopDB, w.whDB} {
		if db != "" {
			// A database left behind goes with the cluster at the end.
			_ = w.env.DropDatabase(ctx, db)
		}
	}
}

// startWide starts what a round's world has besides the shop: the second
// system — the warehouse (a second demo shop in a database of its own,
// served here, and described to the consoles by warehouse.json in
// SYSTEMS_DIR) or the GraphQL shop (startGraphQL) — and the webhook
// receiver.
func (w *world) startWide(ctx context.Context, seed uint64) error {
	var err error
	if w.systemsDir, err = os.MkdirTemp("", "countersign-chaos-systems-"); err != nil {
		return err
	}
	if w.second == SecondGraphQL {
		if err := w.startGraphQL(); err != nil {
			return err
		}
		w.hooks, err = startReceiver(seed)
		return err
	}
	var whURL string
	if w.whDB, whURL, err = w.env.CreateDatabase(ctx, "chaos_wh"); err != nil {
		return err
	}
	if w.whPool, err = store.Open(ctx, whURL, 30*time.Second); err != nil {
		return err
	}
	if err = demoshop.Migrate(ctx, w.whPool); err != nil {
		return err
	}
	w.warehouse = demoshop.New(w.whPool, demoshop.Options{TestEndpoints: true})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	w.whURL = "http://" + l.Addr().String()
	w.whSrv = &http.Server{Handler: w.warehouse.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = w.whSrv.Serve(l) }()
	if err = os.WriteFile(filepath.Join(w.systemsDir, "warehouse.json"), warehouseFile, 0o644); err != nil {
		return err
	}
	w.hooks, err = startReceiver(seed)
	return err
}

// secondEnv is the environment the second system's file names
// (warehouse.json or graphql-shop.json), as the consoles have it.
func (w *world) secondEnv(name string) string {
	switch {
	case name == "WAREHOUSE_URL" && w.warehouse != nil:
		return w.whURL
	case name == "WAREHOUSE_TOKEN" && w.warehouse != nil:
		return w.warehouse.Token()
	case name == "GQLSHOP_URL" && w.gql != nil:
		return w.gqlURL
	case name == "GQLSHOP_TOKEN" && w.gql != nil:
		return w.gql.Token()
	}
	return ""
}
