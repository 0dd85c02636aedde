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

// TestCustomerMailOutboxMigrationGoesDownAndUp runs migration 00043's
// Down, then its Up again: the outbox and the mail links' unprompted mark
// go and come back.
func TestCustomerMailOutboxMigrationGoesDownAndUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(dbtest.New(t))
	sql, err := migrations.FS.ReadFile("00043_customer_mail_outbox.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, down, _ := strings.Cut(string(sql), "-- +goose Down")
	if _, err := st.Pool().Exec(ctx, down); err != nil {
		t.Fatalf("down: %v", err)
	}
	now := time.Now()
	if _, err := st.MailsDue(ctx, now, store.MailSystems{All: true}, 10); err == nil || !strings.Contains(err.Error(), "unprompted") && !strings.Contains(err.Error(), "customer_mail_outbox") {
		t.Fatalf("after the Down the outbox is still read: %v", err)
	}
	if _, err := st.Pool().Exec(ctx, up); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if _, err := st.MailsDue(ctx, now, store.MailSystems{All: true}, 10); err != nil {
		t.Fatalf("after the Up: %v", err)
	}
}
