package store_test

import (
	"context"
	"strings"
	"testing"

	"countersign/migrations"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestPolicyCurrencyMigrationGoesDownAndUp runs migration 00051's Down,
// then its Up: the limit currency goes (and is no longer read), and comes
// back as US dollars for the policies written before it, refusing what
// is not a code of three capitals.
func TestPolicyCurrencyMigrationGoesDownAndUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(dbtest.New(t))
	if err := st.EnsurePolicy(ctx, store.Policy{System: "shop", Action: "issue_refund", Stage: 3, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	sql, err := migrations.FS.ReadFile("00051_policy_currency.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, down, _ := strings.Cut(string(sql), "-- +goose Down")
	if _, err := st.Pool().Exec(ctx, down); err != nil {
		t.Fatalf("down: %v", err)
	}
	if _, err := st.Policy(ctx, "shop", "issue_refund"); err == nil || !strings.Contains(err.Error(), "limit_currency") {
		t.Fatalf("after the Down the limit currency is still read: %v", err)
	}
	if _, err := st.Pool().Exec(ctx, up); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if p, err := st.Policy(ctx, "shop", "issue_refund"); err != nil || p.LimitCurrency != "USD" {
		t.Fatalf("a policy written before the Up: limits in %q, %v; want USD", p.LimitCurrency, err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE policies SET limit_currency = 'eur'`); err == nil {
		t.Error("a limit currency in lower case was stored")
	}
}
