package adapter_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"countersign/internal/adapter"
)

func TestMovesPath(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"ord_1": false, "a.b": false, "...": false, "walnut lamp": false, "%": false, "100%": false, "a%20b": false,
		".": true, "..": true, "a/b": true, `a\b`: true, "/": true,
		"%2e": true, "%2E%2e": true, ".%2E": true, "a%2Fb": true, "a%5cb": true, "%252e%252e": true, "a%252Fb": true,
	} {
		if got := adapter.MovesPath(s); got != want {
			t.Errorf("MovesPath(%q) = %v, want %v", s, got, want)
		}
	}
	if seg, err := adapter.PathSegment("order_id", "ord 1"); err != nil || seg != "ord%201" {
		t.Errorf("PathSegment(ord 1) = %q, %v", seg, err)
	}
	_, err := adapter.PathSegment("order_id", "..")
	if ae, ok := adapter.AsError(err); !ok || ae.Code != adapter.CodeInvalidArguments || ae.Fields["order_id"] != adapter.PathSegmentProblem {
		t.Errorf("PathSegment(..) = %v, want invalid_arguments naming order_id", err)
	}
}

// TestExchangeSendsNoPathThatMoves: a URL whose path has a dot segment or
// an encoded slash or dot is not sent, whoever built it.
func TestExchangeSendsNoPathThatMoves(t *testing.T) {
	t.Parallel()
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { got.Add(1) }))
	t.Cleanup(srv.Close)
	for _, path := range []string{"/orders/..", "/orders/.", "/orders/a%2Fb", "/orders/%2e%2e/x", "/orders/%252e%252e", "/orders/..?limit=1"} {
		_, _, err := adapter.Exchange(t.Context(), srv.Client(), "The shop", adapter.Request{Method: http.MethodGet, URL: srv.URL + path, Path: path})
		if ae, ok := adapter.AsError(err); !ok || ae.Code != adapter.CodeInvalidArguments || ae.Outcome != adapter.NotSent {
			t.Errorf("GET %s: %v, want invalid_arguments, not sent", path, err)
		}
	}
	if _, _, err := adapter.Exchange(t.Context(), srv.Client(), "The shop", adapter.Request{Method: http.MethodGet, URL: srv.URL + "/orders/ord_1?q=..%2F"}); err != nil {
		t.Errorf("GET /orders/ord_1?q=..%%2F: %v; a query is not a path", err)
	}
	if n := got.Load(); n != 1 {
		t.Errorf("the server saw %d requests, want 1", n)
	}
}
