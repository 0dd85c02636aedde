package webtest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/assistants"
	"countersign/internal/clocktest"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/fakeslack"
	"countersign/internal/handoffs"
	"countersign/internal/lists"
	"countersign/internal/mail"
	"countersign/internal/metrics"
	"countersign/internal/safehttp"
	"countersign/internal/shopadapter"
	"countersign/internal/slackbot"
	"countersign/internal/webhooks"
	"countersign/store"
	"countersign/store/dbtest"
	"countersign/web"
	"countersign/web/kit"
)

// Stack is the assembled console over a fresh database, served by
// httptest, with the services it was built from. New builds it.
type Stack struct {
	Server   *httptest.Server
	Web      *web.Server
	Store    *store.Store
	Accounts *accounts.Service
	Control  *controlplane.Service
	Clock    *clocktest.Clock
	Users    map[accounts.Role]User
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
	// Slack is the fake Slack the console's bot talks to, with WithSlack.
	Slack *fakeslack.Slack
	Bot   *slackbot.Bot
	// Assistant is the assistant made with WithAssistant, Key its live key
	// and Task the open task it opened for Jordan Lee, as the API answered.
	Assistant assistants.Assistant
	Key       string
	Task      map[string]any
}

// User is a console user with the password to sign in with.
type User struct {
	accounts.User
	Password string
}

// Option changes how New assembles the stack.
type Option func(*config)

// WithTrustedProxies has the server believe X-Forwarded-For from these
// addresses.
func WithTrustedProxies(p ...netip.Prefix) Option {
	return func(o *config) { o.trustedProxies = p }
}

// WithShop connects a seeded demo shop (system "shop") over real HTTP.
func WithShop() Option { return func(o *config) { o.shop = true } }

// WithSlack connects the console to a fake Slack (the stack's Slack).
func WithSlack() Option { return func(o *config) { o.slack = true } }

// WithLogger sends the console's log to l.
func WithLogger(l *slog.Logger) Option { return func(o *config) { o.logger = l } }

// WithQueryTracer shows tr every SQL statement the console sends.
func WithQueryTracer(tr pgx.QueryTracer) Option { return func(o *config) { o.queries = tr } }

// WithLogo makes logo (a TLS server) the shop's logo server: the shop's
// brand names its /logo.png and the console fetches it with its client.
func WithLogo(logo *httptest.Server) Option { return func(o *config) { o.logo = logo } }

// WithLogoURL is the shop's logo address instead of the logo server's
// /logo.png; "{logo}" in it stands for the logo server's address.
func WithLogoURL(u string) Option { return func(o *config) { o.logoURL = u } }

// WithProofs says how customers prove who they are, per system (without
// it: code and account everywhere).
func WithProofs(p map[string][]confirmation.Proof) Option {
	return func(o *config) { o.proofs = p }
}

// WithAssertionSecrets gives each system's secret for its assertions.
func WithAssertionSecrets(s map[string][]byte) Option {
	return func(o *config) { o.assertionSecrets = s }
}

// WithAssistant adds the assistant "support-bot" with every action on and
// a live key, and its open task for Jordan Lee (needs WithShop).
func WithAssistant() Option { return func(o *config) { o.assistant = true } }

// WithCustomerStage has the manager put the shop's customer actions on
// stage 4, where the customer confirms (needs WithShop).
func WithCustomerStage() Option { return func(o *config) { o.customerStage = true } }

// config is what the options set.
type config struct {
	trustedProxies []netip.Prefix
	keyPairs       [][]byte
	// shop connects a seeded demo shop (system "shop") over real HTTP.
	shop bool
	// slack connects the console to a fake Slack (Stack.Slack).
	slack bool
	// proofs and assertionSecrets configure how customers prove who they
	// are (nil: code and account everywhere).
	proofs           map[string][]confirmation.Proof
	assertionSecrets map[string][]byte
	// logger receives the console's log (nil: discarded).
	logger *slog.Logger
	// queries, when set, sees every SQL statement the console sends.
	queries pgx.QueryTracer
	// logo, when set, is the shop's logo server (TLS): the shop's brand
	// names its /logo.png and the console fetches it with its client.
	logo *httptest.Server
	// logoURL, when set, is the shop's logo address instead of the logo
	// server's /logo.png; "{logo}" in it stands for the server's address.
	logoURL string
	// assistant and customerStage are set by WithAssistant and
	// WithCustomerStage.
	assistant     bool
	customerStage bool
}

// SessionKeys are the session keys New gives the server (the current pair
// first).
var SessionKeys = [][]byte{[]byte("0123456789abcdef0123456789abcdef"), []byte("fedcba9876543210fedcba9876543210")}

// New assembles the console (package web) as cmd/countersign does, over a
// fresh database and a test clock at 2026-04-01 09:00 UTC, serves it with
// httptest, and signs up one user per role. Every API exchange is checked
// against the OpenAPI document when the test ends. The options add a demo
// shop, Slack, an assistant with a task, and so on.
func New(t *testing.T, opts ...Option) *Stack {
	t.Helper()
	var o config
	for _, opt := range opts {
		opt(&o)
	}
	if o.keyPairs == nil {
		o.keyPairs = SessionKeys
	}
	st := store.New(dbtest.New(t))
	if o.queries != nil {
		st = store.New(tracedPool(t, o.queries))
	}
	clk := clocktest.New(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC))
	acc := accounts.NewService(st, clk.Now, accounts.Throttle{PerAccountSource: 5, PerSource: 12, PerAccount: 20,
		KnownSourceFor: 24 * time.Hour, Window: 15 * time.Minute})
	sessions := kit.NewSessionStore(st, kit.SessionConfig{KeyPairs: o.keyPairs, Idle: 30 * time.Minute, Absolute: 12 * time.Hour, Now: clk.Now})
	reg := adapter.NewRegistry()
	cp := controlplane.New(st, reg, controlplane.Config{}, clk.Now, nil)
	outbox := &mail.Memory{}
	links := confirmation.New(st, cp, reg, confirmation.Config{Mail: outbox, Proofs: o.proofs, AssertionSecrets: o.assertionSecrets}, clk.Now)
	asst := assistants.New(st, cp, reg, clk.Now)
	reports := metrics.NewReports(st)
	var fake *fakeslack.Slack
	var bot *slackbot.Bot
	if o.slack {
		fake = fakeslack.New("xoxb-web-test", "web test signing secret")
		fakeSrv := httptest.NewServer(fake.Handler())
		t.Cleanup(fakeSrv.Close)
		bot = slackbot.New(slackbot.Config{Token: fake.Token, SigningSecret: fake.Secret, Channel: "#approvals",
			APIURL: fakeSrv.URL + "/api/", BaseURL: "http://console.test"}, cp, st, acc, clk.Now, nil)
	}
	ws := web.New(web.Config{Database: st, Accounts: acc, Sessions: sessions, Now: clk.Now, TrustedProxies: o.trustedProxies,
		Registry: reg, Control: cp, Handoffs: handoffs.New(st, cp, reg, clk.Now), Lists: lists.New(st, clk.Now), Confirmations: links, Assistants: asst, Metrics: reports, Webhooks: webhooks.New(st, clk.Now, webhooks.Config{AllowPrivate: true}),
		Logger: o.logger, Slack: bot, LogoFetch: logoFetch(o.logo)})
	srv := httptest.NewServer(checkContract(t, ws.Handler()))
	t.Cleanup(srv.Close)
	b := &Stack{Server: srv, Web: ws, Store: st, Accounts: acc, Control: cp, Clock: clk, Users: map[accounts.Role]User{},
		Links: links, Mail: outbox, Assistants: asst, Metrics: reports, Slack: fake, Bot: bot}
	for _, r := range accounts.Roles {
		b.Users[r] = b.CreateUser(t, r)
	}
	if o.shop {
		b.connectShop(t, reg, o.logo, o.logoURL)
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
func (b *Stack) connectShop(t *testing.T, reg *adapter.Registry, logo *httptest.Server, logoURL string) {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.NewBare(t)
	if err := demoshop.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := demoshop.Seed(ctx, pool, b.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	b.Shop = demoshop.New(pool, demoshop.Options{Now: b.Clock.Now})
	b.ShopHeaders = &HeaderLog{}
	srv := httptest.NewServer(b.ShopHeaders.wrap(b.Shop.Handler()))
	t.Cleanup(srv.Close)
	b.ShopURL = srv.URL
	brand := shopadapter.DemoBrand
	if logo != nil {
		brand.LogoURL = logo.URL + "/logo.png"
		if logoURL != "" {
			brand.LogoURL = strings.ReplaceAll(logoURL, "{logo}", logo.URL)
		}
	}
	reg.Connect(shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: srv.URL, Token: b.Shop.Token(), Ledger: adapter.NewLedger(b.Store, b.Clock.Now), Now: b.Clock.Now, Brand: brand}))
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
	worker := webhooks.NewWorker(b.Store, b.Web.WebhookRender(b.Server.URL), webhooks.Config{AllowPrivate: true}, b.Clock.Now, nil)
	if _, err := worker.Enqueue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.DeliverDue(t.Context()); err != nil {
		t.Fatal(err)
	}
}
