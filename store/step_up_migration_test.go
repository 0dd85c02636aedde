package store_test

import (
	"context"
	"strings"
	"testing"

	"countersign/migrations"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestStepUpMigrationGoesDownAndUp runs migration 00038's Down over a
// database with a policy asking for step-up, then its Up again: the
// policy's columns and the assertions' table go and come back, and a
// negative amount is refused by the CHECK.
func TestStepUpMigrationGoesDownAndUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(dbtest.New(t))
	if _, err := st.Pool().Exec(ctx, `INSERT INTO policies (system, action, stage, enabled, approval_window, confirmation_window,
		updated_at, step_up_every, step_up_above_cents) VALUES ('shop', 'issue_refund', 3, true, '1 day', '30 minutes', now(), true, 100)`); err != nil {
		t.Fatal(err)
	}
	p, err := st.Policy(ctx, "shop", "issue_refund")
	if err != nil || !p.StepUpEvery || p.StepUpAboveCents == nil || *p.StepUpAboveCents != 100 {
		t.Fatalf("policy %+v, %v", p, err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE policies SET step_up_above_cents = -1`); err == nil {
		t.Fatal("a negative step-up amount was accepted")
	}
	sql, err := migrations.FS.ReadFile("00038_step_up.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, down, _ := strings.Cut(string(sql), "-- +goose Down")
	if _, err := st.Pool().Exec(ctx, down); err != nil {
		t.Fatalf("down: %v", err)
	}
	if _, err := st.Pool().Exec(ctx, `SELECT step_up_every FROM policies`); err == nil {
		t.Fatal("after the Down the policy still has step_up_every")
	}
	if _, err := st.Pool().Exec(ctx, up); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if p, err := st.Policy(ctx, "shop", "issue_refund"); err != nil || p.StepUpEvery || p.StepUpAboveCents != nil {
		t.Fatalf("after Up again the policy asks for step-up: %+v, %v", p, err)
	}
}
