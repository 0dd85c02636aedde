package demo_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/assistants"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/demo"
	"countersign/internal/demoshop"
	"countersign/internal/lists"
	"countersign/internal/mail"
	"countersign/internal/shopadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// console is what the console builds in demo mode, over a fresh database
// with the seeded demo shop connected as "shop" over real HTTP.
type console struct {
	store   *store.Store
	acc     *accounts.Service
	lists   *lists.Service
	cp      *controlplane.Service
	reg     *adapter.Registry
	asst    *assistants.Service
	links   *confirmation.Service
	outbox  *mail.Memory
	shopURL string
	shop    *demoshop.Shop
}

func newConsole(t *testing.T) console {
	t.Helper()
	ctx := context.Background()
	st := store.New(dbtest.New(t))
	pool := dbtest.NewBare(t)
	if err := demoshop.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := demoshop.Seed(ctx, pool, time.Now()); err != nil {
		t.Fatal(err)
	}
	sh := demoshop.New(pool, demoshop.Options{})
	shop := httptest.NewServer(sh.Handler())
	t.Cleanup(shop.Close)
	reg := adapter.NewRegistry(shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: shop.URL, Token: sh.Token(),
		Ledger: adapter.NewLedger(st, time.Now), Now: time.Now}))
	cp := controlplane.New(st, reg, controlplane.Config{}, time.Now, nil)
	outbox := &mail.Memory{}
	return console{store: st, acc: accounts.NewService(st, time.Now, accounts.DefaultThrottle), cp: cp, reg: reg, lists: lists.New(st, time.Now),
		asst: assistants.New(st, cp, reg, time.Now), shopURL: shop.URL, shop: sh, outbox: outbox,
		links: confirmation.New(st, cp, reg, confirmation.Config{Mail: outbox, PublicBase: "http://127.0.0.1:8080"}, time.Now)}
}

// start runs what the console runs at a demo start: the users, the
// policies they own, then the seeding.
func (c console) start(t *testing.T, dataDir string) demo.Printout {
	t.Helper()
	ctx := context.Background()
	d, err := demo.Start(ctx, c.acc, dataDir, c.shopURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cp.EnsurePolicies(ctx, d.PolicyOwner()); err != nil {
		t.Fatal(err)
	}
	out, err := d.Seed(ctx, demo.Services{Control: c.cp, Registry: c.reg, Lists: c.lists, Assistants: c.asst, Confirmations: c.links, History: c.store, Shop: c.shop},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSeedShowsEverythingOnceAndAgainOnRestart seeds the demo twice over
// the same data dir and database: the first start makes every part of it,
// the second finds them again, with the same sign-ins, the same key and
// the pending confirmations reused behind fresh links.
func TestSeedShowsEverythingOnceAndAgainOnRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newConsole(t)
	dataDir := t.TempDir()
	first := c.start(t, dataDir)

	creds, err := demo.Load(filepath.Join(dataDir, "demo-credentials"))
	if err != nil || len(creds.Users) != 4 || creds.Assistant == nil || creds.Assistant.Key != first.Assistant.Key || creds.ShopURL != c.shopURL {
		t.Fatalf("demo-credentials: %+v, %v", creds, err)
	}
	for _, u := range creds.Users {
		if _, err := c.acc.SignIn(ctx, u.Email, u.Password, "127.0.0.1"); err != nil {
			t.Errorf("%s cannot sign in with the printed password: %v", u.Email, err)
		}
	}
	if _, _, err := c.asst.Authenticate(ctx, first.Assistant.Key); err != nil {
		t.Errorf("the printed key does not authenticate: %v", err)
	}

	if len(first.Links) != 5 {
		t.Fatalf("%d confirmation links, want one for each of the 5 actions a customer confirms: %+v", len(first.Links), first.Links)
	}
	for _, l := range first.Links {
		opened, err := c.links.Open(ctx, strings.TrimPrefix(l.Path, confirmation.PathPrefix))
		if err != nil {
			t.Fatalf("%s: %v", l.Action, err)
		}
		inv, err := c.cp.Invocation(ctx, opened.InvocationID)
		if err != nil {
			t.Fatal(err)
		}
		if inv.Action != l.Action || inv.State != controlplane.AwaitingConfirmation || opened.CustomerRef != first.Customer || l.Title != inv.Quote.Title {
			t.Errorf("%s link opens %s (%s) for %s", l.Action, inv.Action, inv.State, opened.CustomerRef)
		}
		if p, err := c.cp.Policy(ctx, "shop", l.Action); err != nil || p.Stage != controlplane.StageAssisted || p.ConfirmationWindow != 24*time.Hour {
			t.Errorf("policy of %s: stage %d, window %s, %v; want stage 4 for 24h", l.Action, p.Stage, p.ConfirmationWindow, err)
		}
	}
	wantStates(t, c, "demo-console-queue", controlplane.AwaitingApproval, 3)
	wantStates(t, c, "demo-lost-acknowledgement", controlplane.Unverified, 1)
	versions := policyVersions(t, c.cp)

	second := c.start(t, dataDir)
	for i, u := range second.Users {
		if u.Password != first.Users[i].Password {
			t.Errorf("the password of %s changed across starts", u.Email)
		}
	}
	if second.Assistant != first.Assistant {
		t.Errorf("assistant %+v on the second start, want %+v kept", second.Assistant, first.Assistant)
	}
	// The demo shop's site secret, which vouches for the demo's customers,
	// is made once, saved, printed and kept.
	if len(first.SiteSecret) < 64 || second.SiteSecret != first.SiteSecret || creds.SiteSecret != first.SiteSecret {
		t.Errorf("site secret %q, then %q (file %q): want one of 32 bytes, kept", first.SiteSecret, second.SiteSecret, creds.SiteSecret)
	}
	for i, l := range second.Links {
		if l.Action != first.Links[i].Action || l.Path == "" {
			t.Errorf("link %d on the second start: %+v", i, l)
		}
	}
	invs, err := c.lists.CustomerInvocations(ctx, first.Customer, 200)
	if err != nil {
		t.Fatal(err)
	}
	if pending := countState(invs, controlplane.AwaitingConfirmation); pending != 5 {
		t.Errorf("%d confirmations pending after two starts, want the 5 of the first reused", pending)
	}
	wantStates(t, c, "demo-console-queue", controlplane.AwaitingApproval, 3)
	wantStates(t, c, "demo-lost-acknowledgement", controlplane.Unverified, 1)
	if again := policyVersions(t, c.cp); !maps.Equal(again, versions) {
		t.Errorf("policy versions changed on a restart: %v, then %v", versions, again)
	}
}

// TestSeedRestoresTheKeyOfTheFileAfterTheDatabaseIsGone starts the demo
// over a fresh database with a credentials file that outlived the old one:
// the sign-ins and the assistant's key of the file work again.
func TestSeedRestoresTheKeyOfTheFileAfterTheDatabaseIsGone(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	before := newConsole(t).start(t, dataDir)
	c := newConsole(t)
	after := c.start(t, dataDir)
	if after.Assistant != before.Assistant {
		t.Fatalf("assistant %+v over a fresh database, want the file's %+v", after.Assistant, before.Assistant)
	}
	if _, _, err := c.asst.Authenticate(context.Background(), after.Assistant.Key); err != nil {
		t.Errorf("the file's key does not authenticate over the fresh database: %v", err)
	}
	if after.Users[1].Password != before.Users[1].Password {
		t.Errorf("the agent's password changed with the database")
	}
}

// TestDemoMailsCarryTheQuoteAndTheLink: the console's first pass of its
// customer-mail loop at start mails each pending confirmation of the demo
// customer, without anyone pressing anything, once, and each mail carries
// its quote and a "Review and decide" link on the console's address that
// proves them for that request.
func TestDemoMailsCarryTheQuoteAndTheLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newConsole(t)
	out := c.start(t, t.TempDir())
	// The console's customer-mail loop makes its first pass at start.
	if n, err := c.links.MailWaiting(ctx); err != nil || n != len(out.Links)+len(out.Speakers) {
		t.Fatalf("the first pass mailed %d, %v; want one mail for each of the %d pending confirmations", n, err, len(out.Links)+len(out.Speakers))
	}
	link := regexp.MustCompile(`http://127\.0\.0\.1:8080/m/([A-Za-z0-9_-]{43})`)
	mailed := map[string]mail.Message{}
	for _, m := range c.outbox.Sent() {
		match := link.FindStringSubmatch(m.Body)
		if match == nil || !strings.Contains(m.HTML, match[0]) {
			t.Fatalf("no Review and decide link in both parts:\n%s", m.Body)
		}
		spent, err := c.links.SpendMailLink(ctx, match[1])
		if err != nil {
			t.Fatalf("the mail's link: %v", err)
		}
		mailed[spent.InvocationID] = m
	}
	for _, l := range out.Links {
		opened, err := c.links.Open(ctx, strings.TrimPrefix(l.Path, confirmation.PathPrefix))
		if err != nil {
			t.Fatal(err)
		}
		inv, err := c.cp.Invocation(ctx, opened.InvocationID)
		if err != nil {
			t.Fatal(err)
		}
		m, ok := mailed[inv.ID]
		if !ok {
			t.Errorf("%s: no mail whose link proves it", l.Action)
			continue
		}
		for _, line := range inv.Quote.Lines {
			if !strings.Contains(m.Body, line.To) {
				t.Errorf("%s: the mail lacks the line %q:\n%s", l.Action, line.To, m.Body)
			}
		}
	}
}

// TestTheDemoCustomerMayAskForAMailAtStart: the mails the console sends
// by itself at start (one per pending confirmation, five) leave the demo
// customer every mail they may ask for: "E-mail me a link to decide" on
// each request's page works at once.
func TestTheDemoCustomerMayAskForAMailAtStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newConsole(t)
	out := c.start(t, t.TempDir())
	if n, err := c.links.MailWaiting(ctx); err != nil || n != len(out.Links)+len(out.Speakers) || n < 5 {
		t.Fatalf("the first pass mailed %d, %v; want one for each of the %d pending confirmations", n, err, len(out.Links)+len(out.Speakers))
	}
	for _, l := range out.Links[:2] {
		if _, err := c.links.SendLink(ctx, strings.TrimPrefix(l.Path, confirmation.PathPrefix)); err != nil {
			t.Errorf("%s: \"E-mail me a link to decide\" right after start: %v", l.Action, err)
		}
	}
}

// TestPrintoutSaysWhereToSignInAndWhatToOpen checks the console's
// printout: every sign-in, the key with a command to try it, the shop, the
// links on the console's address and where the customer's mails are
// written.
func TestPrintoutSaysWhereToSignInAndWhatToOpen(t *testing.T) {
	t.Parallel()
	p := demo.Printout{CredentialsPath: ".data/demo-credentials",
		Users:     []demo.User{{Role: accounts.Agent, Email: "agent@demo.countersign.test", Password: "abcd-efgh-jkmn-pqrs"}},
		Assistant: demo.Assistant{Name: "demo-assistant", Key: "csk_live_0123456789abcdef"}, ShopURL: "http://127.0.0.1:4000", SiteSecret: "00ff",
		Customer: "customer@demo.countersign.test", Links: []demo.Link{{Action: "issue_refund", Path: "/c/sel.ver"}},
		Speakers: []demo.Speaker{{Name: "Camille Dubois", Email: "camille.dubois@example.fr", Locale: "fr", Language: "French",
			Link: demo.Link{Action: "issue_refund", Path: "/c/fr.ver"}}}}
	var b bytes.Buffer
	p.Write(&b, "127.0.0.1:8080", ".data/mail")
	for _, want := range []string{
		"open http://127.0.0.1:8080 and sign in as one of these (kept in .data/demo-credentials)",
		"agent     agent@demo.countersign.test        abcd-efgh-jkmn-pqrs",
		`Demo assistant "demo-assistant", API key csk_live_0123456789abcdef`,
		"go run ./cmd/assistant-sim -url http://127.0.0.1:8080 -key csk_live_0123456789abcdef -site-secret 00ff",
		"signs assertions with the secret 00ff",
		"The demo shop runs at http://127.0.0.1:4000",
		"Confirmation links for customer@demo.countersign.test.",
		"E-mail me a link to decide",
		"sent by itself when the request started waiting",
		"with the whole request and the link, are written as\n  files to .data/mail",
		"issue_refund                 http://127.0.0.1:8080/c/sel.ver",
		"Customers in other languages",
		"Camille Dubois   camille.dubois@example.fr   French   issue_refund             http://127.0.0.1:8080/c/fr.ver",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the printout lacks %q:\n%s", want, b.String())
		}
	}
}

// wantStates checks that the demo task of a conversation holds n
// invocations in state.
func wantStates(t *testing.T, c console, conversation string, state controlplane.State, n int) {
	t.Helper()
	ctx := context.Background()
	tasks, err := c.lists.Tasks(ctx, store.TaskFilter{Query: conversation})
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks of %s: %d, %v; want one", conversation, len(tasks), err)
	}
	invs, err := c.cp.Invocations(ctx, tasks[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := countState(invs, state); got != n || len(invs) != n {
		t.Errorf("%s: %d of %d invocations %s, want %d", conversation, got, len(invs), state, n)
	}
}

func countState(invs []controlplane.Invocation, state controlplane.State) int {
	n := 0
	for _, inv := range invs {
		if inv.State == state {
			n++
		}
	}
	return n
}

func policyVersions(t *testing.T, cp *controlplane.Service) map[string]int32 {
	t.Helper()
	ps, err := cp.Policies(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int32{}
	for _, p := range ps {
		out[p.Name()] = p.Version
	}
	return out
}
