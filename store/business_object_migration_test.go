package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"countersign/migrations"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestBusinessObjectMigrationGoesDownAndUp runs migration 00050's Down,
// then its Up: a block's business key goes (and is no longer read) and
// comes back, and the block lookup answers again.
func TestBusinessObjectMigrationGoesDownAndUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(dbtest.New(t))
	sql, err := migrations.FS.ReadFile("00050_business_object.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, down, _ := strings.Cut(string(sql), "-- +goose Down")
	if _, err := st.Pool().Exec(ctx, down); err != nil {
		t.Fatalf("down: %v", err)
	}
	if _, err := st.ActiveBlock(ctx, "ada@example.test", "shop", "ord_1", "order_number", "#A1B2C3"); err == nil || !strings.Contains(err.Error(), "business_key") {
		t.Fatalf("after the Down the block's business key is still read: %v", err)
	}
	if _, err := st.Pool().Exec(ctx, up); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if _, err := st.ActiveBlock(ctx, "ada@example.test", "shop", "ord_1", "order_number", "#A1B2C3"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after the Up the block lookup answers %v, want not found", err)
	}
}
