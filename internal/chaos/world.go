package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/assistants"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
	"countersign/store"
)

// The actions a round drives, one per stage.
const (
	actionAuto    = shopadapter.ActionUpdateProductDesc     // stage 5: the policy approves
	actionApprove = shopadapter.ActionCancelSubscription    // stage 3: an agent approves
	actionConfirm = shopadapter.ActionChangeShippingAddress // stage 4: the customer confirms
)

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
	operator  string   // the stage-5 tasks' customer (a shop operator)
	customers []string // stage-3 and stage-4 customers, each with a console account
	shopIDs   map[string]string
}

func newWorld(ctx context.Context, env *Env, bin string, instances int) (w *world, err error) {
	return newWorldWith(ctx, env, bin, instances, nil, nil)
}

// newWorldWith is newWorld with extra console environment and a wrapper
// around the shop's handler (both may be nil).
func newWorldWith(ctx context.Context, env *Env, bin string, instances int, extraEnv []string,
	wrapShop func(http.Handler) http.Handler) (w *world, err error) {
	w = &world{env: env, shopIDs: map[string]string{}}
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
	w.admin, w.agent = "admin@chaos.test", "agent@chaos.test"

	reg := adapter.NewRegistry(shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: w.shopURL, Token: w.shop.Token(), Ledger: adapter.NewLedger(st, nil)}))
	cp := controlplane.New(st, reg, controlplane.Config{}, time.Now, nil)
	if err := cp.EnsurePolicies(ctx, &manager.ID); err != nil {
		return err
	}
	// The manager stages the round's actions as on the policies page.
	mgr := controlplane.UserActor(manager.ID, string(accounts.Manager), manager.Name)
	for action, stage := range map[string]controlplane.Stage{actionAuto: controlplane.StageAutonomous,
		actionApprove: controlplane.StagePropose, actionConfirm: controlplane.StageAssisted} {
		p, err := cp.Policy(ctx, "shop", action)
		if err != nil {
			return err
		}
		p.Stage, p.ConfirmationWindow = stage, 30*time.Minute
		if _, err := cp.ChangePolicy(ctx, mgr, p, p.Version, "the chaos campaign's workload"); err != nil {
			return fmt.Errorf("chaos: stage %s: %w", action, err)
		}
	}
	asst := assistants.New(st, cp, time.Now)
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
	if w.shopSrv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = w.shopSrv.Shutdown(ctx)
		cancel()
	}
	if w.pool != nil {
		w.pool.Close()
	}
	if w.shopPool != nil {
		w.shopPool.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, db := range []string{w.dbName, w.shopDB} {
		if db != "" {
			// A database left behind goes with the cluster at the end.
			_ = w.env.DropDatabase(ctx, db)
		}
	}
}
