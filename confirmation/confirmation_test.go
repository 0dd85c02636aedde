package confirmation_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"countersign/adapter"
	"countersign/confirmation"
	"countersign/controlplane"
	"countersign/demoshop"
	"countersign/shopadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const jordan = "customer@demo.countersign.test"

// setup is a control plane over a fresh database with the seeded demo
// shop connected as "shop".
func setup(t *testing.T) (*confirmation.Service, *controlplane.Service, *time.Time) {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st := store.New(dbtest.New(t))
	pool := dbtest.NewBare(t)
	if err := demoshop.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := demoshop.Seed(ctx, pool, now); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(demoshop.New(pool, demoshop.Options{Now: clock}).Handler())
	t.Cleanup(srv.Close)
	reg := adapter.NewRegistry(shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: srv.URL, Ledger: adapter.NewLedger(st, clock), Now: clock}))
	cp := controlplane.New(st, reg, controlplane.Config{}, clock, nil)
	if err := cp.EnsurePolicies(ctx, nil); err != nil {
		t.Fatal(err)
	}
	return confirmation.New(st, cp, func() time.Time { return now }), cp, &now
}

// TestSeedDemoGivesALinkPerCustomerAction seeds the demo twice: each
// action a customer confirms gets a pending confirmation and a working
// link, and the second run reuses the pending ones with fresh links.
func TestSeedDemoGivesALinkPerCustomerAction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, _ := setup(t)
	first, err := links.SeedDemo(ctx, jordan)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 5 {
		t.Fatalf("%d demo links, want 5: %+v", len(first), first)
	}
	for _, l := range first {
		got, err := links.Redeem(ctx, strings.TrimPrefix(l.Path, confirmation.PathPrefix), "")
		if err != nil {
			t.Fatalf("%s: %v", l.Action, err)
		}
		inv, err := cp.Invocation(ctx, got.InvocationID)
		if err != nil {
			t.Fatal(err)
		}
		if inv.Action != l.Action || inv.State != controlplane.AwaitingConfirmation || got.CustomerRef != jordan || l.Title != inv.Quote.Title {
			t.Errorf("%s link opens %s (%s) for %s", l.Action, inv.Action, inv.State, got.CustomerRef)
		}
	}
	again, err := links.SeedDemo(ctx, jordan)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range again {
		if l.Path == first[i].Path {
			t.Errorf("%s: the same link twice", l.Action)
		}
	}
	invs, err := cp.CustomerInvocations(ctx, jordan, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(invs) != 5 {
		t.Errorf("%d invocations after two seedings, want the 5 pending ones reused", len(invs))
	}
}

// TestRedeemTellsProblemsApart checks each refusal's Problem.
func TestRedeemTellsProblemsApart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, _, now := setup(t)
	demo, err := links.SeedDemo(ctx, jordan)
	if err != nil {
		t.Fatal(err)
	}
	tok := func(i int) string { return strings.TrimPrefix(demo[i].Path, confirmation.PathPrefix) }
	problem := func(token, holder string) confirmation.Problem {
		_, err := links.Redeem(ctx, token, holder)
		le, ok := confirmation.AsLinkError(err)
		if !ok {
			t.Fatalf("Redeem(%q): %v, want a link error", token, err)
		}
		return le.Problem
	}
	sel, ver, _ := strings.Cut(tok(0), ".")
	cases := []struct {
		name, token, holder string
		want                confirmation.Problem
	}{
		{"malformed", "nonsense", "", confirmation.Tampered},
		{"verifier changed", sel + "." + strings.Repeat("A", len(ver)), "", confirmation.Tampered},
		{"unknown selector", strings.Repeat("B", len(sel)) + "." + ver, "", confirmation.Unknown},
		{"another customer's", tok(0), "someone@example.test", confirmation.Foreign},
	}
	for _, tc := range cases {
		if got := problem(tc.token, tc.holder); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if _, err := links.Redeem(ctx, tok(0), jordan); err != nil {
		t.Fatalf("first use: %v", err)
	}
	if got := problem(tok(0), ""); got != confirmation.Used {
		t.Errorf("second use: %s, want used", got)
	}
	*now = now.Add(25 * time.Hour)
	if got := problem(tok(1), ""); got != confirmation.Expired {
		t.Errorf("after the deadline: %s, want expired", got)
	}
}
