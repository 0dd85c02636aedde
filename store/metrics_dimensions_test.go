package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"countersign/store"
	"countersign/store/dbtest"
)

// TestMetricsDimensionsSkipScanMatchesDistinct: the filter lists found by
// skipping through the roll-ups' indexes are exactly what a plain SELECT
// DISTINCT over every row gives, over a year of roll-ups with values
// repeated across days, and with empty tables.
func TestMetricsDimensionsSkipScanMatchesDistinct(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(dbtest.New(t))
	plain := func() (systems, actions, intents []string) {
		t.Helper()
		q := func(sql string) []string {
			rows, _ := st.Pool().Query(ctx, sql)
			out, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		return q(`SELECT system FROM policies UNION SELECT DISTINCT system FROM metrics_invocation_daily ORDER BY 1`),
			q(`SELECT action FROM policies UNION SELECT DISTINCT action FROM metrics_invocation_daily ORDER BY 1`),
			q(`SELECT DISTINCT intent FROM metrics_conversation_daily ORDER BY 1`)
	}
	check := func(when string) {
		t.Helper()
		systems, actions, intents, _, err := st.MetricsDimensions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ws, wa, wi := plain()
		if !slices.Equal(systems, ws) || !slices.Equal(actions, wa) || !slices.Equal(intents, wi) {
			t.Errorf("%s: got %v %v %v, want %v %v %v", when, systems, actions, intents, ws, wa, wi)
		}
	}
	check("no roll-ups")
	if _, err := st.Pool().Exec(ctx, `
		INSERT INTO metrics_invocation_daily (day, system, action, assistant_id, stage, proposed, settled, completed,
			reversed_7d, person_approved, unedited, disagreed, wait_hist)
		SELECT current_date - d, 'sys_' || (d % 3), 'act_' || (d % 7), 'asst', 3, 1, 1, 1, 0, 0, 0, 0, '{}'
		FROM generate_series(0, 365) d`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `
		INSERT INTO metrics_conversation_daily (day, intent, assistant_id, conversations, contained, clarified,
			handed_off, resolved, resolution_hist)
		SELECT current_date - d, (ARRAY['ambiguous', 'diagnostic', 'transactional_high'])[1 + d % 3], 'asst', 1, 1, 0, 0, 1, '{}'
		FROM generate_series(0, 365) d`); err != nil {
		t.Fatal(err)
	}
	check("a year of roll-ups")
	systems, actions, intents, _, _ := st.MetricsDimensions(ctx)
	if !slices.Contains(systems, "sys_2") || !slices.Contains(actions, "act_6") || len(intents) != 3 {
		t.Errorf("missing values: %v %v %v", systems, actions, intents)
	}
}
