package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"
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

func TestMain(m *testing.M) { dbtest.Main(m) }

// testBundle is one console over a fresh database, served by httptest.
type testBundle struct {
	srv      *httptest.Server
	web      *web.Server
	store    *store.Store
	accounts *accounts.Service
	cp       *controlplane.Service
	clock    *clocktest.Clock
	users    map[accounts.Role]testUser
	// shop and shopURL are set with bundleOpts.shop.
	shop    *demoshop.Shop
	shopURL string
	// shopHeaders are the headers of every request the shop was sent.
	shopHeaders *headerLog
	// links shows customers their requests; codes it sends land in mail.
	links *confirmation.Service
	mail  *mail.Memory
	// assistants and metrics are the services the wiring gives the server.
	assistants *assistants.Service
	metrics    *metrics.Reports
	// slack is the fake Slack the console's bot talks to, with
	// bundleOpts.slack.
	slack *fakeslack.Slack
	bot   *slackbot.Bot
}

type testUser struct {
	accounts.User
	Password string
}

type bundleOpts struct {
	trustedProxies []netip.Prefix
	keyPairs       [][]byte
	// shop connects a seeded demo shop (system "shop") over real HTTP.
	shop bool
	// slack connects the console to a fake Slack (bundle.slack).
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
}

var testKey = [][]byte{[]byte("0123456789abcdef0123456789abcdef"), []byte("fedcba9876543210fedcba9876543210")}

func setup(t *testing.T, opts ...bundleOpts) *testBundle {
	t.Helper()
	var o bundleOpts
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.keyPairs == nil {
		o.keyPairs = testKey
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
		Registry: reg, Control: cp, Lists: lists.New(st, clk.Now), Confirmations: links, Assistants: asst, Metrics: reports, Webhooks: webhooks.New(st, clk.Now, webhooks.Config{AllowPrivate: true}),
		Logger: o.logger, Slack: bot, LogoFetch: logoFetch(o.logo)})
	srv := httptest.NewServer(checkContract(t, ws.Handler()))
	t.Cleanup(srv.Close)
	b := &testBundle{srv: srv, web: ws, store: st, accounts: acc, cp: cp, clock: clk, users: map[accounts.Role]testUser{},
		links: links, mail: outbox, assistants: asst, metrics: reports, slack: fake, bot: bot}
	for _, r := range accounts.Roles {
		b.users[r] = b.createUser(t, r)
	}
	if o.shop {
		b.connectShop(t, reg, o.logo, o.logoURL)
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

func (b *testBundle) createUser(t *testing.T, role accounts.Role) testUser {
	t.Helper()
	pw := "correct horse " + string(role)
	u, err := b.accounts.Create(context.Background(), accounts.NewUser{
		Email: fmt.Sprintf("%s-%d@example.test", role, time.Now().UnixNano()), Name: "Test " + role.Label(), Role: role, Password: pw})
	if err != nil {
		t.Fatalf("create %s: %v", role, err)
	}
	return testUser{User: u, Password: pw}
}

// client is a browser-like HTTP client with its own cookie jar that does not
// follow redirects, so tests see each 303.
type client struct {
	t    *testing.T
	b    *testBundle
	http *http.Client
	// header is added to every request (e.g. X-Forwarded-For).
	header http.Header
}

func (b *testBundle) client(t *testing.T) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, b: b, header: http.Header{}, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type response struct {
	*http.Response
	body string
}

func (r response) doc(t *testing.T) *goquery.Document {
	t.Helper()
	d, err := goquery.NewDocumentFromReader(strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (c *client) do(req *http.Request) response {
	c.t.Helper()
	for k, v := range c.header {
		req.Header[k] = v
	}
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{Response: res, body: string(b)}
}

func (c *client) get(path string) response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.b.srv.URL+path, nil)
	return c.do(req)
}

// post sends a form as a same-origin browser would.
func (c *client) post(path string, form url.Values) response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.b.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.b.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return c.do(req)
}

// csrf opens path and returns the CSRF token of its first form.
func (c *client) csrf(path string) string {
	c.t.Helper()
	res := c.get(path)
	tok, ok := res.doc(c.t).Find(`input[name="_csrf"]`).Attr("value")
	if !ok || tok == "" {
		c.t.Fatalf("no CSRF token on %s (status %d)", path, res.StatusCode)
	}
	return tok
}

func (c *client) signIn(u testUser) response {
	c.t.Helper()
	return c.post("/sign-in", url.Values{"_csrf": {c.csrf("/sign-in")}, "email": {u.Email}, "password": {u.Password}})
}

func (c *client) mustSignIn(u testUser) {
	c.t.Helper()
	if res := c.signIn(u); res.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("sign in as %s: status %d, want 303\n%s", u.Role, res.StatusCode, res.body)
	}
}

// sessionCookie returns the session cookie the jar holds for the server.
func (c *client) sessionCookie() *http.Cookie {
	u, _ := url.Parse(c.b.srv.URL)
	for _, ck := range c.http.Jar.Cookies(u) {
		if ck.Name == "cs_session" {
			return ck
		}
	}
	return nil
}

// webServerSharing serves a second console over b's database with other
// session keys, as after a key rotation.
func webServerSharing(t *testing.T, b *testBundle, keyPairs [][]byte) *httptest.Server {
	t.Helper()
	sessions := kit.NewSessionStore(b.store, kit.SessionConfig{KeyPairs: keyPairs, Idle: 30 * time.Minute, Absolute: 12 * time.Hour, Now: b.clock.Now})
	ws := web.New(web.Config{Database: b.store, Accounts: b.accounts, Sessions: sessions, Now: b.clock.Now,
		Registry: b.web.Registry(), Control: b.web.Control(), Lists: lists.New(b.store, b.clock.Now), Assistants: b.assistants, Metrics: b.metrics})
	srv := httptest.NewServer(ws.Handler())
	t.Cleanup(srv.Close)
	return srv
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
// it as system "shop", with policies owned by the bundle's manager.
func (b *testBundle) connectShop(t *testing.T, reg *adapter.Registry, logo *httptest.Server, logoURL string) {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.NewBare(t)
	if err := demoshop.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := demoshop.Seed(ctx, pool, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	b.shop = demoshop.New(pool, demoshop.Options{Now: b.clock.Now})
	b.shopHeaders = &headerLog{}
	srv := httptest.NewServer(b.shopHeaders.wrap(b.shop.Handler()))
	t.Cleanup(srv.Close)
	b.shopURL = srv.URL
	brand := shopadapter.DemoBrand
	if logo != nil {
		brand.LogoURL = logo.URL + "/logo.png"
		if logoURL != "" {
			brand.LogoURL = strings.ReplaceAll(logoURL, "{logo}", logo.URL)
		}
	}
	reg.Connect(shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: srv.URL, Token: b.shop.Token(), Ledger: adapter.NewLedger(b.store, b.clock.Now), Now: b.clock.Now, Brand: brand}))
	owner := b.users[accounts.Manager].ID
	if err := b.cp.EnsurePolicies(ctx, &owner); err != nil {
		t.Fatal(err)
	}
}

// browserSignIn is the browser's sign-in through the real form, from any page
// that shows it.
func browserSignIn(u testUser) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), u.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), u.Password),
		chromedp.Submit(chromedp.CSS(`[data-testid="sign-in-form"]`)),
	)
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

// deliverWebhooks runs the webhook worker once, as the console's loop
// would: it queues a delivery for every event since the last run and
// sends those due now, to receivers on this machine too (the receiver of
// receiveWebhooks is one). It fails the test if either step fails.
func (b *testBundle) deliverWebhooks(t *testing.T) {
	t.Helper()
	worker := webhooks.NewWorker(b.store, b.web.WebhookRender(b.srv.URL), webhooks.Config{AllowPrivate: true}, b.clock.Now, nil)
	if _, err := worker.Enqueue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.DeliverDue(t.Context()); err != nil {
		t.Fatal(err)
	}
}
