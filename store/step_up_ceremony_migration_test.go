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

// TestStepUpCeremonyMigrationGoesDownAndUp runs migration 00039's Down over a
// database holding a step-up ceremony, then its Up again: the Down drops
// the step-up ceremonies and refuses the purpose again, and the Up
// applies again.
func TestStepUpCeremonyMigrationGoesDownAndUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(dbtest.New(t))
	now := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	var userID int64
	if err := st.Pool().QueryRow(ctx, `INSERT INTO users (email, name, role, password_hash, created_at)
		VALUES ('a@example.test', 'A', 'agent', 'x', $1) RETURNING id`, now).Scan(&userID); err != nil {
		t.Fatal(err)
	}
	if err := st.StartCeremony(ctx, []byte{9}, userID, store.CeremonyStepUp, []byte(`{}`), now, now.Add(time.Minute)); err != nil {
		t.Fatalf("a step-up ceremony: %v", err)
	}
	sql, err := migrations.FS.ReadFile("00039_step_up_ceremonies.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, down, _ := strings.Cut(string(sql), "-- +goose Down")
	if _, err := st.Pool().Exec(ctx, down); err != nil {
		t.Fatalf("down: %v", err)
	}
	if err := st.StartCeremony(ctx, []byte{8}, userID, store.CeremonyStepUp, []byte(`{}`), now, now.Add(time.Minute)); err == nil {
		t.Fatal("after the Down a step-up ceremony is still allowed")
	}
	if _, err := st.Pool().Exec(ctx, up); err != nil {
		t.Fatalf("up again: %v", err)
	}
}
