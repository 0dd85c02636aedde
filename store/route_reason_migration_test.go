package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"countersign/migrations"
	"countersign/store/dbtest"
)

// TestMigrationMakesStoredRouteReasonsSentences runs migration 00025 over
// reasons stored before they were sentences: each becomes the sentence the
// control plane now writes, one already a sentence is left alone, and the
// customer's route keeps the reason the control plane recognises it by.
func TestMigrationMakesStoredRouteReasonsSentences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	now := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	want := map[string]string{
		"stage 3: an agent approves":                            "Its policy has an agent approve every request of this kind.",
		"stage 4: the customer confirms":                        "Its policy has the customer confirm every request of this kind.",
		"stage 5: within the policy's limits":                   "Within the policy's limits.",
		"the amount is above the approval threshold of $200.00": "The amount is above the approval threshold of $200.00.",
		"a reversal needs its own approval":                     "A reversal needs its own approval.",
		"A reason already a sentence.":                          "A reason already a sentence.",
		"":                                                      "",
	}
	if _, err := pool.Exec(ctx, `INSERT INTO tasks (id, customer_ref, conversation_id, allowed_actions, write_budget, inflight_limit,
		rate_per_minute, expires_at, state, created_at, updated_at)
		VALUES ('tsk_r', 'c@example.test', 'conv-r', '{issue_refund}', 10, 2, 60, $1::timestamptz + interval '1 day', 'active', $1, $1)`, now); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	i := 0
	for old := range want {
		id := "inv_r" + string(rune('a'+i))
		i++
		ids[id] = old
		if _, err := pool.Exec(ctx, `INSERT INTO invocations (id, task_id, conversation_id, system, action, target_kind, target_id,
			target_display, state, proposed_args, args_hash, quote, idempotency_key, policy_stage, policy_version, route_reason,
			created_at, updated_at)
			VALUES ($1, 'tsk_r', 'conv-r', 'shop', 'issue_refund', 'order', 'ord_1', 'Order 1', 'rejected', '{}', '\x00', '{}', $1, 3, 1, $2, $3, $3)`,
			id, old, now); err != nil {
			t.Fatal(err)
		}
	}
	sql, err := migrations.FS.ReadFile("00025_route_reason_sentences.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, _, _ := strings.Cut(string(sql), "-- +goose Down")
	if _, err := pool.Exec(ctx, up); err != nil {
		t.Fatal(err)
	}
	for id, old := range ids {
		var got string
		if err := pool.QueryRow(ctx, `SELECT route_reason FROM invocations WHERE id = $1`, id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want[old] {
			t.Errorf("%q became %q, want %q", old, got, want[old])
		}
	}
}
