package confirmation_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/mail"
	"countersign/internal/shopadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const jordan = "customer@demo.countersign.test"

// setup is a control plane over a fresh database with the seeded demo
// shop connected as "shop".
func setup(t *testing.T) (*confirmation.Service, *controlplane.Service, *time.Time) {
	links, cp, now, _ := setupWithMail(t)
	return links, cp, now
}

// setupWithMail is setup that also returns where codes are mailed.
func setupWithMail(t *testing.T) (*confirmation.Service, *controlplane.Service, *time.Time, *mail.Memory) {
	t.Helper()
	return setupWithLimits(t, confirmation.CodeLimits{})
}

// setupWithLimits is setupWithMail with code limits of its own (zero:
// the defaults).
func setupWithLimits(t *testing.T, limits confirmation.CodeLimits) (*confirmation.Service, *controlplane.Service, *time.Time, *mail.Memory) {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st := store.New(dbtest.New(t))
	// Two assistants whose tasks' links the per-assistant bound counts.
	for _, id := range []string{"asst_guesser", "asst_other"} {
		if _, err := st.InsertAssistant(ctx, store.Assistant{ID: id, Name: id, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	pool := dbtest.NewBare(t)
	if err := demoshop.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := demoshop.Seed(ctx, pool, now); err != nil {
		t.Fatal(err)
	}
	shop := demoshop.New(pool, demoshop.Options{Now: clock})
	srv := httptest.NewServer(shop.Handler())
	t.Cleanup(srv.Close)
	reg := adapter.NewRegistry(shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: srv.URL, Token: shop.Token(), Ledger: adapter.NewLedger(st, clock), Now: clock}))
	cp := controlplane.New(st, reg, controlplane.Config{}, clock, nil)
	if err := cp.EnsurePolicies(ctx, nil); err != nil {
		t.Fatal(err)
	}
	outbox := &mail.Memory{}
	// The shop has typed codes turned on, beside the default proofs: these
	// tests are about codes and mail links both.
	proofs := map[string][]confirmation.Proof{"shop": {confirmation.ProofLink, confirmation.ProofCode, confirmation.ProofAccount}}
	links := confirmation.New(st, cp, reg, confirmation.Config{Mail: outbox, CodeLimits: limits, Proofs: proofs,
		PublicBase: "https://console.test"}, func() time.Time { return now })
	stores.Store(links, st)
	registries.Store(links, reg)
	shops.Store(links, [2]string{srv.URL, shop.Token()})
	return links, cp, &now, outbox
}

// stores holds the store of each service setup made (registries its
// systems, shops its shop's address and token).
var stores, registries, shops sync.Map

func storeOf(links *confirmation.Service) *store.Store {
	st, _ := stores.Load(links)
	return st.(*store.Store)
}

// registryOf is the connected systems setup gave links.
func registryOf(links *confirmation.Service) *adapter.Registry {
	reg, _ := registries.Load(links)
	return reg.(*adapter.Registry)
}

// pendingLinks has a manager put cancellations and refunds on stage 4 with
// a 24-hour window, proposes one of each for jordan and returns their
// links.
func pendingLinks(t *testing.T, links *confirmation.Service, cp *controlplane.Service, now time.Time) []string {
	t.Helper()
	ctx := context.Background()
	manager := controlplane.UserActor(1, "manager", "Priya Raman")
	proposals := []struct {
		action string
		args   string
	}{
		{"cancel_subscription", `{"subscription_id":"Pro plan for acme.example","reason_code":"too_expensive","effective":"end_of_period"}`},
		{"issue_refund", `{"order_id":"walnut lamp","amount_cents":4210,"reason_code":"damaged"}`},
	}
	task, err := cp.CreateTask(ctx, controlplane.AssistantActor("bot", "Bot"), controlplane.NewTask{CustomerRef: jordan,
		ConversationID: "c1", Systems: []string{"shop"}, AllowedActions: []string{"cancel_subscription", "issue_refund"},
		WriteBudget: 10, InflightLimit: 2, RatePerMinute: 10, ExpiresAt: now.Add(7 * 24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, p := range proposals {
		policy, err := cp.Policy(ctx, "shop", p.action)
		if err != nil {
			t.Fatal(err)
		}
		policy.Stage, policy.ConfirmationWindow = controlplane.StageAssisted, 24*time.Hour
		if _, err := cp.ChangePolicy(ctx, manager, policy, policy.Version, "customers confirm"); err != nil {
			t.Fatal(err)
		}
		inv, err := cp.Propose(ctx, controlplane.Proposal{TaskID: task.ID, System: "shop", Action: p.action,
			Args: []byte(p.args), Summary: p.action, Actor: controlplane.AssistantActor("bot", "Bot")})
		if err != nil || inv.State != controlplane.AwaitingConfirmation {
			t.Fatalf("propose %s: %s, %v", p.action, inv.State, err)
		}
		path, err := links.Link(ctx, inv, jordan)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// TestOpenTellsProblemsApart checks each refusal's Problem.
func TestOpenTellsProblemsApart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, now := setup(t)
	pending := pendingLinks(t, links, cp, *now)
	tok := func(i int) string { return strings.TrimPrefix(pending[i], confirmation.PathPrefix) }
	problem := func(token string) confirmation.Problem {
		_, err := links.Open(ctx, token)
		le, ok := confirmation.AsLinkError(err)
		if !ok {
			t.Fatalf("Open(%q): %v, want a link error", token, err)
		}
		return le.Problem
	}
	sel, ver, _ := strings.Cut(tok(0), ".")
	cases := []struct {
		name, token string
		want        confirmation.Problem
	}{
		{"malformed", "nonsense", confirmation.Tampered},
		{"verifier changed", sel + "." + strings.Repeat("A", len(ver)), confirmation.Tampered},
		{"unknown selector", strings.Repeat("B", len(sel)) + "." + ver, confirmation.Unknown},
	}
	for _, tc := range cases {
		if got := problem(tc.token); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	for i := 0; i < 2; i++ {
		if _, err := links.Open(ctx, tok(0)); err != nil {
			t.Fatalf("open %d: %v (opening spends nothing)", i, err)
		}
	}
	opened, _ := links.Open(ctx, tok(0))
	inv, err := cp.Invocation(ctx, opened.InvocationID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := links.Rotate(ctx, inv, jordan); err != nil {
		t.Fatal(err)
	}
	if got := problem(tok(0)); got != confirmation.Replaced {
		t.Errorf("after rotation: %s, want replaced", got)
	}
	*now = now.Add(25 * time.Hour)
	if got := problem(tok(1)); got != confirmation.Expired {
		t.Errorf("after the deadline: %s, want expired", got)
	}
}

// TestOneLiveLinkUnderConcurrentReads reads the link of one invocation from
// many goroutines at once (as concurrent API reads do): one link, the same
// for all.
func TestOneLiveLinkUnderConcurrentReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, now := setup(t)
	pending := pendingLinks(t, links, cp, *now)
	opened, err := links.Open(ctx, strings.TrimPrefix(pending[0], confirmation.PathPrefix))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := cp.Invocation(ctx, opened.InvocationID)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := links.Rotate(ctx, inv, jordan)
	if err != nil {
		t.Fatal(err)
	}
	const n = 30
	paths := make(chan string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := links.Link(ctx, inv, jordan)
			if err != nil {
				t.Error(err)
			}
			paths <- p
		}()
	}
	wg.Wait()
	close(paths)
	for p := range paths {
		if p != fresh {
			t.Errorf("a concurrent read got %q, want the live link %q", p, fresh)
		}
	}
}

// TestCodeRaces races the right code against real PostgreSQL: of many
// concurrent tries with it exactly one proves (wrong guesses are raced in
// limits_test.go).
func TestCodeRaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, now, outbox := setupWithMail(t)
	pending := pendingLinks(t, links, cp, *now)
	race := func(token, code string) (ok, refused int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := 0; i < 40; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := links.CheckCode(ctx, token, code)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					ok++
				} else if apperr.Is(err, apperr.Invalid) {
					refused++
				} else {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		return ok, refused
	}
	code := func() string {
		sent := outbox.Sent()
		body := sent[len(sent)-1].Body
		i := strings.Index(body, "Your code is ")
		return body[i+len("Your code is ") : i+len("Your code is ")+confirmation.CodeDigits]
	}

	right := strings.TrimPrefix(pending[1], confirmation.PathPrefix)
	if _, err := links.SendCode(ctx, right); err != nil {
		t.Fatal(err)
	}
	if ok, refused := race(right, code()); ok != 1 || refused != 39 {
		t.Errorf("40 concurrent tries of the right code: %d proved, %d refused; want 1 and 39", ok, refused)
	}
}

// TestTheSweepMakesTheLinksReadsShow: a request's link is made when it is
// routed to its customer, and a read shows it without writing. The
// sweep makes the link of a request that has none (routed before links
// were made at routing) and replaces one made under a link key the
// console no longer has; a second sweep changes nothing.
func TestTheSweepMakesTheLinksReadsShow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, now := setup(t)
	st := storeOf(links)
	paths := pendingLinks(t, links, cp, *now)
	var ids []string
	for _, p := range paths {
		o, err := links.Open(ctx, strings.TrimPrefix(p, confirmation.PathPrefix))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := links.LiveLink(ctx, o.InvocationID); err != nil || got != p {
			t.Fatalf("live link %q, %v, want the one made at routing %q", got, err, p)
		}
		ids = append(ids, o.InvocationID)
	}
	rotated := confirmation.New(st, cp, registryOf(links), confirmation.Config{LinkKey: []byte("another key, after the rotation")}, func() time.Time { return *now })
	if got, err := rotated.LiveLink(ctx, ids[0]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a link made under another key shown as %q, %v", got, err)
	}
	if _, err := st.Pool().Exec(ctx, `DELETE FROM confirmation_links WHERE invocation_id = $1`, ids[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := rotated.SweepLinks(ctx); err != nil {
		t.Fatal(err)
	}
	var fresh []string
	for _, id := range ids {
		got, err := rotated.LiveLink(ctx, id)
		if err != nil || got == paths[0] || got == paths[1] {
			t.Fatalf("after the sweep %s shows %q, %v, want a new link", id, got, err)
		}
		fresh = append(fresh, got)
	}
	if _, err := rotated.Open(ctx, strings.TrimPrefix(paths[0], confirmation.PathPrefix)); !isProblem(err, confirmation.Replaced) {
		t.Errorf("the link made under the old key: %v, want replaced", err)
	}
	if _, err := rotated.SweepLinks(ctx); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if got, _ := rotated.LiveLink(ctx, id); got != fresh[i] {
			t.Errorf("a second sweep changed %s's link", id)
		}
	}
}

func isProblem(err error, p confirmation.Problem) bool {
	le, ok := confirmation.AsLinkError(err)
	return ok && le.Problem == p
}

// TestARotationThatKeepsTheOldKeyKeepsTheLinks: the console derives its
// link keys from every configured session key, newest first. After a
// rotation that keeps the old key (new key first, old after), the sweep
// leaves the links customers hold as they are: shown, opening, not
// replaced; only once the old key is dropped are they made again.
func TestARotationThatKeepsTheOldKeyKeepsTheLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, now := setup(t)
	st := storeOf(links)
	paths := pendingLinks(t, links, cp, *now)
	clock := func() time.Time { return *now }
	var ids, held []string
	for _, p := range paths {
		o, err := links.Open(ctx, strings.TrimPrefix(p, confirmation.PathPrefix))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, o.InvocationID)
	}
	before := confirmation.New(st, cp, registryOf(links), confirmation.Config{LinkKey: []byte("the key before the rotation")}, clock)
	if _, err := before.SweepLinks(ctx); err != nil { // the links under this key
		t.Fatal(err)
	}
	for _, id := range ids {
		got, err := before.LiveLink(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, got)
	}
	rotated := confirmation.New(st, cp, registryOf(links), confirmation.Config{LinkKey: []byte("the key after the rotation"),
		OldLinkKeys: [][]byte{[]byte("the key before the rotation")}}, clock)
	if _, err := rotated.SweepLinks(ctx); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if got, err := rotated.LiveLink(ctx, id); err != nil || got != held[i] {
			t.Errorf("after the rotation %s shows %q, %v, want the link the customer holds %q", id, got, err, held[i])
		}
		if _, err := rotated.Open(ctx, strings.TrimPrefix(held[i], confirmation.PathPrefix)); err != nil {
			t.Errorf("the link the customer holds: %v, want it to open", err)
		}
	}
	dropped := confirmation.New(st, cp, registryOf(links), confirmation.Config{LinkKey: []byte("the key after the rotation")}, clock)
	if _, err := dropped.SweepLinks(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := dropped.LiveLink(ctx, ids[0]); err != nil || got == held[0] {
		t.Errorf("with the old key dropped %s shows %q, %v, want a new link", ids[0], got, err)
	}
}
