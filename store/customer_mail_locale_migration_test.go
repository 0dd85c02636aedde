package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"countersign/migrations"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestCustomerMailLocaleMigrationGoesDownAndUp runs migration 00048's
// Down, then its Up: the outbox's language goes (and is no longer read)
// and comes back empty for the mails written before it.
func TestCustomerMailLocaleMigrationGoesDownAndUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(dbtest.New(t))
	sql, err := migrations.FS.ReadFile("00048_customer_mail_locale.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, down, _ := strings.Cut(string(sql), "-- +goose Down")
	if _, err := st.Pool().Exec(ctx, down); err != nil {
		t.Fatalf("down: %v", err)
	}
	now := time.Now()
	if _, _, _, err := st.ClaimCustomerMail(ctx, "inv_x", 1, now, now.Add(time.Minute)); err == nil || !strings.Contains(err.Error(), "locale") {
		t.Fatalf("after the Down the language is still read: %v", err)
	}
	if _, err := st.Pool().Exec(ctx, up); err != nil {
		t.Fatalf("up again: %v", err)
	}
	var def, nullable string
	if err := st.Pool().QueryRow(ctx, `SELECT column_default, is_nullable FROM information_schema.columns
		WHERE table_name = 'customer_mail_outbox' AND column_name = 'locale'`).Scan(&def, &nullable); err != nil || def != "''::text" || nullable != "NO" {
		t.Fatalf("after the Up the language is %q (nullable %s), %v; want empty by default", def, nullable, err)
	}
	if loc, err := st.LastCustomerLocale(ctx, "shop", "jordan@example.test"); err != nil || loc != "" {
		t.Fatalf("a customer who never decided: %q, %v", loc, err)
	}
}
