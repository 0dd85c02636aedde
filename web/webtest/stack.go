package webtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/assistants"
	"countersign/internal/audit"
	"countersign/internal/authserver"
	"countersign/internal/clocktest"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/custkeys"
	"countersign/internal/demoshop"
	"countersign/internal/factors"
	"countersign/internal/fakeslack"
	"countersign/internal/handoffs"
	"countersign/internal/lists"
	"countersign/internal/locale"
	"countersign/internal/mail"
	"countersign/internal/metrics"
	"countersign/internal/safehttp"
	"countersign/internal/shopadapter"
	"countersign/internal/slackbot"
	"countersign/internal/sso"
	"countersign/internal/webhooks"
	"countersign/store"
	"countersign/store/dbtest"
	"countersign/web"
	"countersign/web/kit"
)

// Stack is the assembled console, served by httptest, with the services it
// was built from. New builds it over a fresh database, Assemble over a
// store of the caller's.
type Stack struct {
	Server   *httptest.Server
	Web      *web.Server
	Store    *store.Store
	Accounts *accounts.Service
	Control  *controlplane.Service
	// Clock is the test clock the console reads, nil with WithNow; Now is
	// the console's clock either way.
	Clock *clocktest.Clock
	Now   func() time.Time
	// Users are New's users, one per role (none with Assemble).
	Users map[accounts.Role]User
	// Shop and ShopURL are set with WithShop.
	Shop    *demoshop.Shop
	ShopURL string
	// ShopHeaders are the headers of every request the shop was sent.
	ShopHeaders *HeaderLog
	// Links shows customers their requests; codes it sends land in Mail.
	Links *confirmation.Service
	Mail  *mail.Memory
	// Assistants and Metrics are the services the wiring gives the server.
	Assistants *assistants.Service
	Metrics    *metrics.Reports
	// AuthServer is the OAuth authorization server of /mcp.
	AuthServer *authserver.Service
	// Audit signs the trail's checkpoints with a key of the stack's own.
	Audit *audit.Log
	// Factors keeps staff's second factors, sealed with FactorKey.
	Factors *factors.Service
	// CustomerPasskeys are returning customers' passkeys, on the console
	// ServeAnother serves WithPasskeys (nil before).
	CustomerPasskeys *custkeys.Service
	// Slack is the fake Slack the console's bot talks to, with WithSlack.
	Slack *fakeslack.Slack
	Bot   *slackbot.Bot
	// Assistant is the assistant made with WithAssistant, Key its live key
	// and Task the open task it opened for Jordan Lee, as the API answered.
	Assistant assistants.Assistant
	Key       string
	Task      map[string]any

	// registry, handoffs, lists and webhooks are the rest of the services
	// the server is built from, for ServeAnother.
	registry *adapter.Registry
	handoffs *handoffs.Service
	lists    *lists.Service
	webhooks *webhooks.Service
}

// User is a console user with the password to sign in with.
type User struct {
	accounts.User
	Password string
}

// SessionKeys are the session keys New gives the server (the current pair
// first).
var SessionKeys = [][]byte{[]byte("0123456789abcdef0123456789abcdef"), []byte("fedcba9876543210fedcba9876543210")}

// FactorKey is the factor key (-factor-key) the stack's second factors
// are sealed with.
var FactorKey = []byte("factor key of the web tests 0123")

// New assembles the console (package web) as cmd/countersign does, over a
// fresh database and a test clock at 2026-04-01 09:00 UTC, serves it with
// httptest, and signs up one user per role. Every API exchange is checked
// against the OpenAPI document when the test ends. The options add a demo
// shop, Slack, an assistant with a task, and so on.
func New(t *testing.T, opts ...Option) *Stack {
	t.Helper()
	o := options(opts)
	var st *store.Store
	if o.queries != nil {
		st = store.New(tracedPool(t, o.queries))
	} else {
		st = store.New(dbtest.New(t))
	}
	b := assemble(t, st, o)
	b.Server = httptest.NewServer(checkContract(t, b.Web.Handler()))
	t.Cleanup(b.Server.Close)
	for _, r := range accounts.Roles {
		b.Users[r] = b.CreateUser(t, r)
	}
	if o.shop {
		b.connectShop(t, o)
	}
	if o.assistant {
		b.Assistant, b.Key = b.NewAssistant(t, "support-bot")
		b.Task = b.NewTask(t, b.Key, "conv-1", []string{"issue_refund", "change_shipping_address", "resend_receipt", "cancel_subscription"})
	}
	if o.customerStage {
		b.StageForCustomer(t, CustomerActions...)
	}
	return b
}

// Assemble wires the console over st exactly as New does and serves it
// with httptest, but signs nobody up and checks no exchange against the
// OpenAPI document: for benchmarks, which seed their own rows and measure
// the console alone, and for a package's test that runs the console
// beside something of its own (internal/assistantsim). Options that need
// New's users (WithShop, WithAssistant, WithCustomerStage) or its fresh
// database (WithQueryTracer) fail tb.
func Assemble(tb testing.TB, st *store.Store, opts ...Option) *Stack {
	tb.Helper()
	o := options(opts)
	if name := o.needsUsers(); name != "" {
		tb.Fatalf("webtest.Assemble: %s needs webtest.New", name)
	}
	b := assemble(tb, st, o)
	b.Server = httptest.NewServer(b.Web.Handler())
	tb.Cleanup(b.Server.Close)
	return b
}

// ServeAnother serves a second console over the stack's database and
// services, built with opts, as a second process of one deployment would
// be: other session keys (a key rotation), a telemetry, an API rate. Its
// sessions, rate buckets and counters are its own; its exchanges are not
// checked against the OpenAPI document. Options that change the services
// (a shop, Slack, the clock, proofs) fail tb: they belong to New.
func (b *Stack) ServeAnother(tb testing.TB, opts ...Option) *httptest.Server {
	tb.Helper()
	o := options(opts)
	if name := o.changesServices(); name != "" {
		tb.Fatalf("Stack.ServeAnother: %s changes the stack's services; give it to webtest.New", name)
	}
	srv := httptest.NewUnstartedServer(nil)
	consoleURL := "http://" + srv.Listener.Addr().String()
	factorSvc := b.Factors
	var custKeys *custkeys.Service
	if o.passkeys {
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		consoleURL = "http://localhost:" + port
		var err error
		factorSvc, err = factors.New(b.Store, b.Accounts, factors.Config{Key: FactorKey, Now: b.Now,
			PublicURL: consoleURL, Log: o.logger})
		if err != nil {
			tb.Fatal(err)
		}
		if custKeys, err = custkeys.New(b.Store, custkeys.Config{PublicURL: "http://localhost:" + port, Now: b.Now, Log: o.logger,
			Mail: b.Mail, Registry: b.registry}); err != nil {
			tb.Fatal(err)
		}
		b.CustomerPasskeys = custKeys
	}
	var provider *sso.Provider
	if o.sso != nil {
		// With passkeys the console is browsed at localhost: the
		// provider sends the browser back there, with its cookies.
		provider = o.sso(consoleURL)
	}
	srv.Config.Handler = b.serverWith(o, provider, factorSvc, custKeys).Handler()
	srv.Start()
	tb.Cleanup(srv.Close)
	return srv
}

// assemble builds the services over st and the console's server over
// them: the one place tests wire the console, so that a service the
// console gains is added here once.
func assemble(tb testing.TB, st *store.Store, o config) *Stack {
	tb.Helper()
	b := &Stack{Store: st, Now: o.now, Users: map[accounts.Role]User{}, Mail: &mail.Memory{}}
	if b.Now == nil {
		b.Clock = clocktest.New(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC))
		b.Now = b.Clock.Now
	}
	now := b.Now
	b.Accounts = accounts.NewService(st, now, accounts.Throttle{PerAccountSource: 5, PerSource: 12, PerAccount: 20,
		KnownSourceFor: 24 * time.Hour, Window: 15 * time.Minute})
	factorSvc, err := factors.New(st, b.Accounts, factors.Config{Key: FactorKey, Now: now})
	if err != nil {
		tb.Fatal(err)
	}
	b.Factors = factorSvc
	b.registry = adapter.NewRegistry()
	b.Control = controlplane.New(st, b.registry, controlplane.Config{}, now, nil)
	b.Links = confirmation.New(st, b.Control, b.registry, confirmation.Config{Mail: b.Mail, Proofs: o.proofs, AssertionSecrets: o.assertionSecrets,
		PublicBase: "http://console.test"}, now)
	b.Assistants = assistants.New(st, b.Control, b.registry, now)
	b.AuthServer = authserver.New(st, authserver.Config{Now: now, Fetch: o.clientFetch})
	b.Audit = auditLog(tb, st, now)
	b.Metrics = metrics.NewReports(st)
	b.handoffs = handoffs.New(st, b.Control, b.registry, now)
	b.lists = lists.New(st, now)
	b.webhooks = webhooks.New(st, now, webhooks.Config{AllowPrivate: true})
	if o.slack {
		b.Slack = fakeslack.New("xoxb-web-test", "web test signing secret")
		fakeSrv := httptest.NewServer(b.Slack.Handler())
		tb.Cleanup(fakeSrv.Close)
		b.Bot = slackbot.New(slackbot.Config{Token: b.Slack.Token, SigningSecret: b.Slack.Secret, Channel: "#approvals",
			APIURL: fakeSrv.URL + "/api/", BaseURL: "http://console.test"}, b.Control, st, b.Accounts, now, nil)
	}
	b.Web = b.server(o)
	if o.offlineShop {
		b.registry.Connect(shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: "http://127.0.0.1:1",
			Ledger: adapter.NewLedger(st, now), Now: now}))
		if err := b.Control.EnsurePolicies(context.Background(), nil); err != nil {
			tb.Fatal(err)
		}
	}
	return b
}

// server is the console over the stack's services with o's sessions,
// telemetry, rate, proxies, log and logo fetch.
func (b *Stack) server(o config) *web.Server { return b.serverWith(o, nil, b.Factors, nil) }

// serverWith is server with provider as the console's single sign-on and
// factorSvc as its second factors, custKeys as its customers' passkeys.
func (b *Stack) serverWith(o config, provider *sso.Provider, factorSvc *factors.Service, custKeys *custkeys.Service) *web.Server {
	keys, idle, absolute := o.keyPairs, o.idle, o.absolute
	if keys == nil {
		keys = SessionKeys
	}
	if idle == 0 {
		idle = 30 * time.Minute
	}
	if absolute == 0 {
		absolute = 12 * time.Hour
	}
	sessions := kit.NewSessionStore(b.Store, kit.SessionConfig{KeyPairs: keys, Idle: idle, Absolute: absolute, Now: b.Now})
	var catalogue *locale.Catalogue
	if o.pseudo {
		var err error
		if catalogue, err = locale.Load(locale.WithPseudo()); err != nil {
			panic("webtest: the pseudo-locale's catalogue does not load: " + err.Error())
		}
	}
	return web.New(web.Config{Database: b.Store, Accounts: b.Accounts, Sessions: sessions, Now: b.Now, TrustedProxies: o.trustedProxies,
		Registry: b.registry, Control: b.Control, Handoffs: b.handoffs, Lists: b.lists, Confirmations: b.Links, Assistants: b.Assistants,
		Metrics: b.Metrics, Webhooks: b.webhooks, APIRatePerMinute: o.apiRate, Telemetry: o.telemetry,
		Logger: o.logger, Slack: b.Bot, LogoFetch: logoFetch(o.logo), SSO: provider, StaffPasswordsOff: o.staffPasswordsOff,
		Factors: factorSvc, CustomerPasskeys: custKeys, AuthServer: b.AuthServer, CustomerCatalogue: catalogue, CustomerPseudo: o.pseudo, Audit: b.Audit})
}

// tracedPool is a pool on a fresh migrated database whose connections
// report every statement to tracer.
func tracedPool(t *testing.T, tracer pgx.QueryTracer) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dbtest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// CreateUser signs up a user with role and a password of its own.
func (b *Stack) CreateUser(t *testing.T, role accounts.Role) User {
	t.Helper()
	pw := "correct horse " + string(role)
	u, err := b.Accounts.Create(context.Background(), accounts.NewUser{
		Email: fmt.Sprintf("%s-%d@example.test", role, time.Now().UnixNano()), Name: "Test " + role.Label(), Role: role, Password: pw})
	if err != nil {
		t.Fatalf("create %s: %v", role, err)
	}
	return User{User: u, Password: pw}
}

// logoFetch is the production logo fetch with a test's allowance: it
// reaches the logo server, if any, and trusts its certificate; nothing
// else on loopback. A short time limit keeps a slow server's test short.
func logoFetch(logo *httptest.Server) safehttp.Options {
	if logo == nil {
		return safehttp.Options{}
	}
	return safehttp.Options{Timeout: 2 * time.Second, Test: &safehttp.TestAllowance{
		Addrs: []string{logo.Listener.Addr().String()}, RootCAs: logo.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}}
}

// connectShop starts a seeded demo shop on its own database and connects
// it as system "shop", with policies owned by the stack's manager.
func (b *Stack) connectShop(t *testing.T, o config) {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.NewBare(t)
	if err := demoshop.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := demoshop.Seed(ctx, pool, b.Now()); err != nil {
		t.Fatal(err)
	}
	b.Shop = demoshop.New(pool, demoshop.Options{Now: b.Now, Tracing: o.shopTracing})
	b.ShopHeaders = &HeaderLog{}
	srv := httptest.NewServer(b.ShopHeaders.wrap(b.Shop.Handler()))
	t.Cleanup(srv.Close)
	b.ShopURL = srv.URL
	brand := shopadapter.DemoBrand
	brand.Locale = o.shopLocale
	if o.logo != nil {
		brand.LogoURL = o.logo.URL + "/logo.png"
		if o.logoURL != "" {
			brand.LogoURL = strings.ReplaceAll(o.logoURL, "{logo}", o.logo.URL)
		}
	}
	b.registry.Connect(shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: srv.URL, Token: b.Shop.Token(), Ledger: adapter.NewLedger(b.Store, b.Now), Now: b.Now, Brand: brand}))
	owner := b.Users[accounts.Manager].ID
	if err := b.Control.EnsurePolicies(ctx, &owner); err != nil {
		t.Fatal(err)
	}
}

// DeliverWebhooks runs the webhook worker once, as the console's loop
// would: it queues a delivery for every event since the last run and
// sends those due now, to receivers on this machine too (the receiver of
// ReceiveWebhooks is one). It fails the test if either step fails.
func (b *Stack) DeliverWebhooks(t *testing.T) {
	t.Helper()
	worker := webhooks.NewWorker(b.Store, b.Web.WebhookRender(b.Server.URL), webhooks.Config{AllowPrivate: true}, b.Now, nil)
	if _, err := worker.Enqueue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.DeliverDue(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// auditLog is the trail's log over st with a fresh signing key.
func auditLog(tb testing.TB, st *store.Store, now func() time.Time) *audit.Log {
	skey, _, err := audit.GenerateKey("countersign.test/audit")
	if err != nil {
		tb.Fatal(err)
	}
	keys, err := audit.LoadKeys(skey)
	if err != nil {
		tb.Fatal(err)
	}
	return audit.NewLog(st, keys, now)
}
