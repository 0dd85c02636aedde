package demoshop_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"countersign/internal/demoshop"
)

func TestRefundsAreNotIdempotent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	order := b.order(t, nil)
	body := jsonObject{"order_id": order.ID, "amount_cents": 1000, "reason": "damaged"}
	var ids []string
	for range 2 {
		resp, err := b.send(t, http.MethodPost, "/refunds", body, "req-same")
		if err != nil || resp.status != http.StatusOK {
			t.Fatalf("refund: %v %d %s", err, resp.status, resp.body)
		}
		ids = append(ids, decode[demoshop.Refund](t, resp).ID)
	}
	if ids[0] == ids[1] {
		t.Errorf("two POSTs returned the same refund %s", ids[0])
	}
	refunds := decode[demoshop.List[demoshop.Refund]](t, b.call(t, http.MethodGet, "/refunds?order_id="+order.ID, nil, http.StatusOK))
	if len(refunds.Data) != 2 {
		t.Errorf("refunds = %d, want 2", len(refunds.Data))
	}
	entries := b.ledger(t, "?request_id=req-same")
	if len(entries) != 2 || entries[0].Object != order.ID || entries[0].Kind != demoshop.KindRefundCreated {
		t.Errorf("ledger = %+v, want two refund.created on %s", entries, order.ID)
	}
	after := decode[demoshop.Order](t, b.call(t, http.MethodGet, "/orders/"+order.ID, nil, http.StatusOK))
	if after.AmountRefundedCents != 2000 || after.RefundableCents != order.TotalCents-2000 || after.Version != order.Version+2 {
		t.Errorf("order after two refunds: refunded %d, refundable %d, version %d", after.AmountRefundedCents, after.RefundableCents, after.Version)
	}
}

func TestRefundBalanceBoundary(t *testing.T) {
	t.Parallel()
	b := setup(t)
	order := b.order(t, nil) // 4500 paid
	e := b.wantError(t, http.MethodPost, "/refunds", jsonObject{"order_id": order.ID, "amount_cents": order.TotalCents + 1},
		http.StatusUnprocessableEntity, "amount_too_large")
	if e.Param != "amount_cents" {
		t.Errorf("param = %q", e.Param)
	}
	b.call(t, http.MethodPost, "/refunds", jsonObject{"order_id": order.ID, "amount_cents": order.TotalCents - 1}, http.StatusOK)
	b.wantError(t, http.MethodPost, "/refunds", jsonObject{"order_id": order.ID, "amount_cents": 2},
		http.StatusUnprocessableEntity, "amount_too_large")
	b.call(t, http.MethodPost, "/refunds", jsonObject{"order_id": order.ID, "amount_cents": 1}, http.StatusOK)
	b.wantError(t, http.MethodPost, "/refunds", jsonObject{"order_id": order.ID, "amount_cents": 1},
		http.StatusUnprocessableEntity, "charge_already_refunded")
	if n := len(b.ledger(t, "?object="+order.ID)); n != 2 {
		t.Errorf("ledger rows = %d, want 2 (refused refunds record nothing)", n)
	}
}

func TestRefundValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	order := b.order(t, nil)
	tests := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"no order", jsonObject{"amount_cents": 100}, http.StatusBadRequest, "parameter_missing"},
		{"no amount", jsonObject{"order_id": order.ID}, http.StatusBadRequest, "parameter_missing"},
		{"zero", jsonObject{"order_id": order.ID, "amount_cents": 0}, http.StatusBadRequest, "parameter_invalid_integer"},
		{"fraction", jsonObject{"order_id": order.ID, "amount_cents": 10.5}, http.StatusBadRequest, "parameter_invalid"},
		{"unknown order", jsonObject{"order_id": "ord_0000000000000000", "amount_cents": 100}, http.StatusNotFound, "resource_missing"},
		{"unknown field", jsonObject{"order_id": order.ID, "amount_cents": 100, "idempotency_key": "k"}, http.StatusBadRequest, "parameter_unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b.wantError(t, http.MethodPost, "/refunds", tt.body, tt.status, tt.code)
		})
	}
}

// A refund takes the order's row lock before it reads the balance, so a
// refund committed meanwhile is counted and the two never exceed what was paid.
func TestRefundWaitsForTheOrderLock(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	order := b.order(t, nil)
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM shop.orders WHERE id = $1 FOR UPDATE`, order.ID); err != nil {
		t.Fatal(err)
	}
	done := make(chan response, 1)
	go func() {
		resp, err := b.send(t, http.MethodPost, "/refunds", jsonObject{"order_id": order.ID, "amount_cents": order.TotalCents}, "")
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	waitForLockWaiter(t, b, done)
	_, err = tx.Exec(ctx, `
		INSERT INTO shop.refunds (id, order_id, amount_cents, currency, reason, status, processor_refund_id, created_at)
		VALUES ('re_concurrent', $1, 1, 'usd', '', 'succeeded', 'pyr_concurrent', now())`, order.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if resp := <-done; resp.status != http.StatusUnprocessableEntity {
		t.Errorf("refund of the full total after another refund committed: status %d %s, want 422", resp.status, resp.body)
	}
}

// waitForLockWaiter returns once a session of the test database waits for a
// lock, and fails if the call in flight finishes first.
func waitForLockWaiter(t *testing.T, b *testBundle, done <-chan response) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		var waiting bool
		err := b.pool.QueryRow(context.Background(), `
			SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			               WHERE datname = current_database() AND wait_event_type = 'Lock')`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		select {
		case resp := <-done:
			t.Fatalf("the refund finished (%d %s) while the order was locked", resp.status, resp.body)
		case <-deadline:
			t.Fatal("no session waited for the order lock within 10s")
		case <-tick.C:
		}
	}
}
