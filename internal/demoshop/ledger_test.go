package demoshop_test

import (
	"net/http"
	"strconv"
	"testing"

	"countersign/internal/demoshop"
)

func TestLedgerFilters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first, second := b.order(t, nil), b.order(t, nil)
	for _, c := range []struct{ order, requestID string }{
		{first.ID, "req-a"}, {second.ID, "req-b"}, {first.ID, "req-c"},
	} {
		if _, err := b.send(t, http.MethodPost, "/refunds", jsonObject{"order_id": c.order, "amount_cents": 100}, c.requestID); err != nil {
			t.Fatal(err)
		}
	}
	all := b.ledger(t, "")
	if len(all) != 3 || all[0].ID >= all[1].ID || all[1].ID >= all[2].ID {
		t.Fatalf("ledger = %+v, want three rows oldest first", all)
	}
	if !all[0].At.Equal(testNow) {
		t.Errorf("at = %v, want the shop's clock %v", all[0].At, testNow)
	}
	tests := []struct {
		query string
		want  []string // request ids
	}{
		{"?request_id=req-b", []string{"req-b"}},
		{"?object=" + first.ID, []string{"req-a", "req-c"}},
		{"?object=" + first.ID + "&request_id=req-c", []string{"req-c"}},
		{"?request_id=req-none", nil},
		{"?kind=" + demoshop.KindProductUpdated, nil},
		{"?after_id=" + strconv.FormatInt(all[0].ID, 10), []string{"req-b", "req-c"}},
	}
	for _, tt := range tests {
		got := b.ledger(t, tt.query)
		var ids []string
		for _, e := range got {
			ids = append(ids, e.RequestID)
		}
		if len(ids) != len(tt.want) || (len(ids) > 0 && (ids[0] != tt.want[0] || ids[len(ids)-1] != tt.want[len(tt.want)-1])) {
			t.Errorf("GET /_ledger%s request ids = %v, want %v", tt.query, ids, tt.want)
		}
	}
}

func TestLedgerMakesUpMissingRequestIDs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	order := b.order(t, nil)
	resp := b.call(t, http.MethodPost, "/refunds", jsonObject{"order_id": order.ID, "amount_cents": 100}, http.StatusOK)
	id := resp.header.Get("X-Request-Id")
	if id == "" {
		t.Fatal("no X-Request-Id in the answer")
	}
	if got := b.ledger(t, "?request_id="+id); len(got) != 1 {
		t.Errorf("ledger rows for the shop's own request id %q = %d, want 1", id, len(got))
	}
}
