package assistantsim_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/assistants"
	"countersign/internal/assistantsim"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/metrics"
	"countersign/internal/shopadapter"
	"countersign/store"
	"countersign/store/dbtest"
	"countersign/web"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestRunAgainstAConsoleAndShop plays every script against a real console
// (HTTP, PostgreSQL, dispatcher running) connected to a seeded demo shop.
func TestRunAgainstAConsoleAndShop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := store.New(dbtest.New(t))
	acc := accounts.NewService(st, time.Now, accounts.DefaultThrottle)
	manager, err := acc.Create(ctx, accounts.NewUser{Email: "manager@example.test", Name: "Priya", Role: accounts.Manager, Password: "correct horse battery"})
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
	shop := httptest.NewServer(demoshop.New(shopPool, demoshop.Options{}).Handler())
	t.Cleanup(shop.Close)
	reg := adapter.NewRegistry(shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: shop.URL, Ledger: adapter.NewLedger(st, time.Now), Now: time.Now}))
	cp := controlplane.New(st, reg, controlplane.Config{}, time.Now, nil)
	if err := cp.EnsurePolicies(ctx, &manager.ID); err != nil {
		t.Fatal(err)
	}
	go cp.RunDispatcher(ctx, 100*time.Millisecond)
	asst := assistants.New(st, cp, time.Now)
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
	sessions := web.NewSessionStore(st, web.SessionConfig{KeyPairs: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}, Idle: time.Hour, Absolute: time.Hour})
	console := httptest.NewServer(web.New(web.Config{Database: st, Accounts: acc, Sessions: sessions, Registry: reg, Control: cp, Assistants: asst,
		Metrics: metrics.NewReports(st)}).Handler())
	t.Cleanup(console.Close)

	transcript, err := assistantsim.Run(ctx, console.URL, key, assistantsim.Options{Prefix: "test", Wait: 10 * time.Second})
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
