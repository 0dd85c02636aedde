package demoshop_test

import (
	"errors"
	"net/http"
	"syscall"
	"testing"
	"time"

	"countersign/internal/demoshop"
)

func (b *testBundle) fault(t *testing.T, rule jsonObject) {
	t.Helper()
	b.call(t, http.MethodPost, "/_faults", rule, http.StatusOK)
}

func (b *testBundle) refundCount(t *testing.T, orderID string) int {
	t.Helper()
	return len(decode[demoshop.List[demoshop.Refund]](t, b.call(t, http.MethodGet, "/refunds?order_id="+orderID, nil, http.StatusOK)).Data)
}

func TestFaultDropAfterCommit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	order := b.order(t, nil)
	b.fault(t, jsonObject{"route": "POST /refunds", "drop_after_commit": 1})
	resp, err := b.send(t, http.MethodPost, "/refunds", jsonObject{"order_id": order.ID, "amount_cents": 500}, "req-drop")
	if err == nil {
		t.Fatalf("the dropped call got an answer: %d %s", resp.status, resp.body)
	}
	t.Logf("dropped call: %v", err)
	if errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("dropped call looks like a reset: %v", err)
	}
	if n := b.refundCount(t, order.ID); n != 1 {
		t.Errorf("refunds after a dropped answer = %d, want 1 (committed)", n)
	}
	if n := len(b.ledger(t, "?request_id=req-drop")); n != 1 {
		t.Errorf("ledger rows for the dropped call = %d, want 1", n)
	}
	b.call(t, http.MethodPost, "/refunds", jsonObject{"order_id": order.ID, "amount_cents": 500}, http.StatusOK)
	rules := decode[demoshop.List[demoshop.FaultRule]](t, b.call(t, http.MethodGet, "/_faults", nil, http.StatusOK)).Data
	if len(rules) != 1 || rules[0].DropAfterCommit != 0 {
		t.Errorf("rules after the drop = %+v, want the counter spent", rules)
	}
}

func TestFaultIgnoreWrites(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.product(t)
	b.fault(t, jsonObject{"route": "PATCH /products/{id}", "ignore_writes": 1})
	answer := decode[demoshop.Product](t, b.call(t, http.MethodPatch, "/products/"+p.ID, jsonObject{"description": "Ignored."}, http.StatusOK))
	if answer.Description != "Ignored." || answer.Version != p.Version+1 {
		t.Errorf("ignored write answered %+v, want it to look applied", answer)
	}
	stored := decode[demoshop.Product](t, b.call(t, http.MethodGet, "/products/"+p.ID, nil, http.StatusOK))
	if stored.Description != p.Description || stored.Version != p.Version {
		t.Errorf("ignored write was applied: %+v", stored)
	}
	if got := b.ledger(t, ""); len(got) != 0 {
		t.Errorf("ignored write recorded %+v", got)
	}
	b.call(t, http.MethodPatch, "/products/"+p.ID, jsonObject{"description": "Applied."}, http.StatusOK)
	if got := decode[demoshop.Product](t, b.call(t, http.MethodGet, "/products/"+p.ID, nil, http.StatusOK)); got.Description != "Applied." {
		t.Errorf("the write after the fault was not applied: %q", got.Description)
	}
}

func TestFaultReset(t *testing.T) {
	t.Parallel()
	b := setup(t)
	order := b.order(t, nil)
	b.fault(t, jsonObject{"route": "POST /refunds", "reset_rate": 1})
	_, err := b.send(t, http.MethodPost, "/refunds", jsonObject{"order_id": order.ID, "amount_cents": 500}, "req-reset")
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("error = %v, want connection reset", err)
	}
	if n := b.refundCount(t, order.ID); n != 0 {
		t.Errorf("refunds after a reset = %d, want 0", n)
	}
}

func TestFaultServerError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	order := b.order(t, nil)
	b.fault(t, jsonObject{"route": "*", "error_rate": 1})
	e := b.wantError(t, http.MethodPost, "/refunds", jsonObject{"order_id": order.ID, "amount_cents": 500},
		http.StatusInternalServerError, "internal_error")
	if e.Type != "api_error" {
		t.Errorf("type = %q, want api_error", e.Type)
	}
	b.wantError(t, http.MethodGet, "/orders/"+order.ID, nil, http.StatusInternalServerError, "internal_error")
	if got := b.ledger(t, ""); len(got) != 0 {
		t.Errorf("a 500 recorded %+v; control routes must also be spared by \"*\"", got)
	}
	// A route's own rule replaces "*".
	b.fault(t, jsonObject{"route": "GET /orders/{id}"})
	b.call(t, http.MethodGet, "/orders/"+order.ID, nil, http.StatusOK)
	b.call(t, http.MethodDelete, "/_faults", nil, http.StatusOK)
	if n := b.refundCount(t, order.ID); n != 0 {
		t.Errorf("refunds = %d, want 0", n)
	}
}

func TestFaultErrorRateIsDrawn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.product(t)
	b.fault(t, jsonObject{"route": "GET /products/{id}", "error_rate": 0.5})
	failed := 0
	const calls = 40
	for range calls {
		resp, err := b.send(t, http.MethodGet, "/products/"+p.ID, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if resp.status == http.StatusInternalServerError {
			failed++
		}
	}
	if failed == 0 || failed == calls {
		t.Errorf("%d of %d calls failed at error_rate 0.5", failed, calls)
	}
}

func TestFaultLatency(t *testing.T) {
	t.Parallel()
	b := setup(t)
	order := b.order(t, nil)
	const latency = 150 * time.Millisecond
	b.fault(t, jsonObject{"route": "GET /orders/{id}", "latency_ms": latency.Milliseconds()})
	start := time.Now()
	b.call(t, http.MethodGet, "/orders/"+order.ID, nil, http.StatusOK)
	if took := time.Since(start); took < latency {
		t.Errorf("call took %s, want at least the injected %s", took, latency)
	}
}

func TestFaultRules(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		name  string
		rule  jsonObject
		param string
	}{
		{"no route", jsonObject{"error_rate": 0.5}, "route"},
		{"unknown route", jsonObject{"route": "POST /charges"}, "route"},
		{"path without method", jsonObject{"route": "/refunds"}, "route"},
		{"control route", jsonObject{"route": "GET /_ledger"}, "route"},
		{"rate above 1", jsonObject{"route": "*", "error_rate": 1.5}, "error_rate"},
		{"negative reset rate", jsonObject{"route": "*", "reset_rate": -0.1}, "reset_rate"},
		{"negative latency", jsonObject{"route": "*", "latency_ms": -1}, "latency_ms"},
		{"negative drops", jsonObject{"route": "*", "drop_after_commit": -1}, "drop_after_commit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := b.call(t, http.MethodPost, "/_faults", tt.rule, http.StatusBadRequest)
			if e := decode[struct{ Error providerError }](t, resp).Error; e.Param != tt.param {
				t.Errorf("param = %q, want %q", e.Param, tt.param)
			}
		})
	}
	b.fault(t, jsonObject{"route": "POST /refunds", "drop_after_commit": 2})
	b.fault(t, jsonObject{"route": "PATCH /subscriptions/{id}", "latency_ms": 10})
	b.call(t, http.MethodDelete, "/_faults?route=POST%20/refunds", nil, http.StatusOK)
	rules := decode[demoshop.List[demoshop.FaultRule]](t, b.call(t, http.MethodGet, "/_faults", nil, http.StatusOK)).Data
	if len(rules) != 1 || rules[0].Route != "PATCH /subscriptions/{id}" || rules[0].LatencyMS != 10 {
		t.Errorf("rules = %+v, want only the subscription latency", rules)
	}
	b.call(t, http.MethodDelete, "/_faults", nil, http.StatusOK)
	if got := b.shop.Faults(); len(got) != 0 {
		t.Errorf("rules after DELETE /_faults = %+v", got)
	}
}
