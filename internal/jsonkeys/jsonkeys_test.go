package jsonkeys_test

import (
	"testing"

	"countersign/internal/jsonkeys"
)

func TestDuplicate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, want, first string
	}{
		{"none", `{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}`, "", ""},
		{"top level", `{"amount_cents":100,"amount_cents":99999}`, "amount_cents", "amount_cents"},
		{"nested", `{"action":"issue_refund","args":{"order_id":"o","amount_cents":1,"amount_cents":2}}`, "args.amount_cents", "amount_cents"},
		{"in an array", `{"items":[{"sku":"a"},{"sku":"b","sku":"c"}]}`, "items[1].sku", "sku"},
		{"after a nested value", `{"a":{"x":[1,2]},"b":1,"a":2}`, "a", "a"},
		{"escaped the same", `{"a":1,"\u0061":2}`, "a", "a"},
		{"deep", `{"p":{"q":{"r":{"s":1,"s":1}}}}`, "p.q.r.s", "s"},
		{"in a top-level array", `[{"a":1},{"a":1,"a":2}]`, "[1].a", "a"},
		{"not JSON", `{"a":1,}`, "", ""},
		{"a scalar", `"a"`, "", ""},
		{"keys that differ only in case", `{"method":"tools/list","Method":"tools/call"}`, "Method", "method"},
		{"a long s folds to s", `{"status":"open","\u017ftatus":"closed"}`, "ſtatus", "status"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, found := jsonkeys.Duplicate([]byte(c.body))
			if got.Path != c.want || got.First != c.first || found != (c.want != "") {
				t.Errorf("Duplicate(%s) = %+v, %v; want %q, first %q", c.body, got, found, c.want, c.first)
			}
		})
	}
}
