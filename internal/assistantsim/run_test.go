package assistantsim_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/assistants"
	"countersign/internal/assistantsim"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
	"countersign/internal/webhooks"
	"countersign/store"
	"countersign/store/dbtest"
	"countersign/web"
	"countersign/web/webtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// simConsole is a real console (HTTP, PostgreSQL, dispatcher running)
// connected to a seeded demo shop (as "shop", and under each of also's
// names too), with one assistant that may use every action.
type simConsole struct {
	st      *store.Store
	asst    *assistants.Service
	manager accounts.User
	web     *web.Server
	url     string
	key     string
	botID   string
	// invocationReads counts GET /api/v1/invocations/{id}: polling.
	invocationReads atomic.Int64
}

// siteSecret is the shop's site secret in these tests.
var siteSecret = []byte("the demo shop's site secret, 32+ bytes")

func startConsole(t *testing.T, ctx context.Context, also ...string) *simConsole {
	t.Helper()
	// In real time: the dispatcher runs and the simulator waits on it.
	stack := webtest.Assemble(t, store.New(dbtest.New(t)), webtest.WithNow(time.Now))
	st := stack.Store
	manager, err := stack.Accounts.Create(ctx, accounts.NewUser{Email: "manager@example.test", Name: "Priya", Role: accounts.Manager, Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	shopPool := dbtest.NewBare(t)
	if err := demoshop.Migrate(ctx, shopPool); err != nil {
		t.Fatal(err)
	}
	if err := demoshop.Seed(ctx, shopPool, time.Now()); err != nil {
		t.Fatal(err)
	}
	demo := demoshop.New(shopPool, demoshop.Options{})
	shop := httptest.NewServer(demo.Handler())
	t.Cleanup(shop.Close)
	reg := stack.Web.Registry()
	for _, name := range append([]string{"shop"}, also...) {
		reg.Connect(shopadapter.New(shopadapter.Config{Name: name, BaseURL: shop.URL, Token: demo.Token(), Ledger: adapter.NewLedger(st, time.Now), Now: time.Now}))
	}
	cp := stack.Control
	if err := cp.EnsurePolicies(ctx, &manager.ID); err != nil {
		t.Fatal(err)
	}
	go cp.RunDispatcher(ctx, 100*time.Millisecond)
	asst := stack.Assistants
	// The shop's site vouches for the customer of each task the
	// simulator opens, signing with this secret.
	asst.SetSiteSecrets(map[string][]byte{"shop": siteSecret})
	bot, err := asst.Create(ctx, nil, "sim-assistant")
	if err != nil {
		t.Fatal(err)
	}
	if err := asst.EnableAll(ctx, bot.ID); err != nil {
		t.Fatal(err)
	}
	_, key, err := asst.IssueKey(ctx, bot.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := &simConsole{st: st, asst: asst, manager: manager, key: key, botID: bot.ID, web: stack.Web}
	h := sc.web.Handler()
	console := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/invocations/") {
			sc.invocationReads.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(console.Close)
	sc.url = console.URL
	return sc
}

// TestRunAgainstAConsoleAndShop plays every script against a real console
// connected to a seeded demo shop.
func TestRunAgainstAConsoleAndShop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := startConsole(t, ctx)
	st := sc.st

	transcript, err := assistantsim.Run(ctx, sc.url, sc.key, assistantsim.Options{Prefix: "test", Wait: 10 * time.Second,
		SiteSecret: siteSecret, Assistant: "sim-assistant"})
	var out bytes.Buffer
	transcript.Write(&out)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"reported informational / answered",
		"reported ambiguous / clarified",
		"cancel_subscription", "→ awaiting_approval",
		"(deduplicated: the same request within ten minutes)",
		"change_shipping_address", "→ awaiting_confirmation",
		"resend_receipt",
		"update_product_description",
		"reported transactional_high / handed_off",
		"task_not_active",
		"reported out_of_scope / answered",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	if !strings.Contains(text, "reported transactional_low / executed") {
		t.Errorf("the receipt was not sent and verified within the wait")
	}
	var handoffs int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM conversation_events WHERE mode = 'handed_off' AND data ? 'summary' AND data ? 'would_propose'`).Scan(&handoffs); err != nil {
		t.Fatal(err)
	}
	if handoffs != 1 {
		t.Errorf("%d hand-offs with summary and would_propose recorded, want 1", handoffs)
	}
}

// TestRunWithTwoSystemsOfferingTheSameTools: a second system offering
// list_orders, issue_refund and the rest does not stop the scripted
// assistant, acting for any customer (its tasks are not limited to the
// system whose site vouches): it names the system its conversations
// concern in every read and proposal.
func TestRunWithTwoSystemsOfferingTheSameTools(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := startConsole(t, ctx, "shop-eu")
	bot, err := sc.asst.Get(ctx, sc.botID)
	if err != nil {
		t.Fatal(err)
	}
	g := bot.Grants
	g.AnyCustomer = true
	if _, err := sc.asst.SetGrants(ctx, controlplane.UserActor(sc.manager.ID, string(sc.manager.Role), sc.manager.Name), sc.botID, g); err != nil {
		t.Fatal(err)
	}
	transcript, err := assistantsim.Run(ctx, sc.url, sc.key, assistantsim.Options{Prefix: "two", Wait: 10 * time.Second})
	var out bytes.Buffer
	transcript.Write(&out)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "list_orders (shop) →") {
		t.Errorf("the transcript does not say which system's list_orders was read")
	}
	var systems []string
	rows, err := sc.st.Pool().Query(ctx, `SELECT DISTINCT system FROM invocations ORDER BY system`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		systems = append(systems, s)
	}
	if rows.Err() != nil || strings.Join(systems, ",") != "shop" {
		t.Errorf("proposals went to systems %v (%v), want only shop", systems, rows.Err())
	}
}

// TestRunWaitsForOutcomeWebhooks: with a receiver, the automatic receipt's
// result arrives as a signed outcome webhook and nothing polls it.
func TestRunWaitsForOutcomeWebhooks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := startConsole(t, ctx)
	var outcomes *assistantsim.Outcomes // set once the endpoint's secret is known, before anything is sent
	var forged atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		outcomes.ServeHTTP(rec, r)
		if rec.Code == http.StatusUnauthorized {
			forged.Add(1)
		}
		w.WriteHeader(rec.Code)
	}))
	t.Cleanup(recv.Close)
	_, secret, err := webhooks.New(sc.st, nil, webhooks.Config{AllowPrivate: true}).Register(ctx, sc.botID, nil, recv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	outcomes = assistantsim.NewOutcomes(secret, nil)
	go webhooks.NewWorker(sc.st, sc.web.WebhookRender(sc.url), webhooks.Config{AllowPrivate: true}, nil, nil).Run(ctx, 50*time.Millisecond)

	transcript, err := assistantsim.Run(ctx, sc.url, sc.key, assistantsim.Options{Prefix: "hook", Wait: 10 * time.Second, Outcomes: outcomes,
		SiteSecret: siteSecret, Assistant: sc.botID})
	var out bytes.Buffer
	transcript.Write(&out)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !strings.Contains(text, "outcome webhook: invocation.completed") || !strings.Contains(text, "reported transactional_low / executed") {
		t.Errorf("the receipt's completion did not arrive by webhook")
	}
	if n := sc.invocationReads.Load(); n != 0 {
		t.Errorf("the assistant polled the invocation %d times", n)
	}
	if n := forged.Load(); n != 0 {
		t.Errorf("%d deliveries failed signature verification", n)
	}
}
