package store_test

import (
	"context"
	"strings"
	"testing"

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
	if _, err := st.MailOfVersion(ctx, "inv_x", 1); err == nil || !strings.Contains(err.Error(), "locale") {
		t.Fatalf("after the Down the language is still read: %v", err)
	}
	if _, err := st.Pool().Exec(ctx, up); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if m, err := st.MailOfVersion(ctx, "inv_x", 1); err != nil || m.Locale != "" {
		t.Fatalf("after the Up: %+v, %v", m, err)
	}
	if loc, err := st.LastCustomerLocale(ctx, "shop", "jordan@example.test"); err != nil || loc != "" {
		t.Fatalf("a customer who never decided: %q, %v", loc, err)
	}
}
