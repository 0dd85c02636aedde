package main

import (
	"context"
	"testing"

	"countersign/internal/adapter/conformance"
)

// TestEffectCounterReadsAPagedTotal: a fixture's effects "total" counts a
// system that answers one page at a time by the count it gives, not by
// the page's length.
func TestEffectCounterReadsAPagedTotal(t *testing.T) {
	page := map[string]any{"items": []any{map[string]any{"id": "e1"}}, "totalItems": float64(42)}
	get := func(context.Context, string) (any, error) { return page, nil }
	for _, tc := range []struct {
		total string
		want  int
	}{{"", 1}, {"/totalItems", 42}} {
		count := effectCounter(&conformance.EffectsFile{Path: "/effects?key={key}", Items: "/items", All: "/effects", Total: tc.total}, nil, get)
		for _, key := range []string{"k1", ""} {
			if n, err := count(context.Background(), key); err != nil || n != tc.want {
				t.Errorf("total %q, key %q: %d, %v; want %d", tc.total, key, n, err, tc.want)
			}
		}
	}
}
