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

// TestMigrationNormalisesCustomerRefs runs migration 00013 over a task
// stored before customer references had one form: afterwards the customer's
// own lookup (by the lower-case e-mail) finds it.
func TestMigrationNormalisesCustomerRefs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(dbtest.New(t))
	now := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	err := st.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.InsertTask(ctx, store.Task{ID: "tsk_old", CustomerRef: " Jordan@Example.COM", ConversationID: "c",
			Systems: []string{}, AllowedActions: []string{"issue_refund"}, WriteBudget: 1, InflightLimit: 1, RatePerMinute: 1,
			ExpiresAt: now.Add(time.Hour), State: "active", CreatedAt: now})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sql, err := migrations.FS.ReadFile("00013_customer_refs.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, _, _ := strings.Cut(string(sql), "-- +goose Down")
	if _, err := st.Pool().Exec(ctx, up); err != nil {
		t.Fatal(err)
	}
	task, err := st.Task(ctx, "tsk_old")
	if err != nil {
		t.Fatal(err)
	}
	if task.CustomerRef != "jordan@example.com" {
		t.Errorf("customer_ref %q, want jordan@example.com", task.CustomerRef)
	}
}
