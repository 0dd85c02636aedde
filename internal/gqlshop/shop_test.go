package gqlshop_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/gqlshop"
)

func post(t *testing.T, url, token, query string, vars map[string]any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestShopSpeaksGraphQL: what the description-file adapter relies on —
// a key refunds once, a refusal is a userError with a code, orders come
// in cursor pages, a document that does not validate is answered errors
// without data, and a request without the token is refused.
func TestShopSpeaksGraphQL(t *testing.T) {
	shop := gqlshop.New("tok", func() time.Time { return time.Date(2026, 4, 12, 0, 0, 0, 0, time.UTC) })
	srv := httptest.NewServer(shop)
	defer srv.Close()
	const refund = `mutation R($in: RefundInput!) { refundCreate(input: $in) { refund { id amountCents } userErrors { code } } }`
	in := func(amount int, key string) map[string]any {
		return map[string]any{"in": map[string]any{"orderId": "ord_3", "amountCents": amount, "reason": "damaged", "idempotencyKey": key}}
	}
	first := post(t, srv.URL, "tok", refund, in(100, "k1"))
	again := post(t, srv.URL, "tok", refund, in(100, "k1"))
	if diff := cmp.Diff(first, again); diff != "" || shop.Refunds("k1") != 1 {
		t.Errorf("a repeated key (-first +again):\n%s\n%d refunds under it, want 1", diff, shop.Refunds("k1"))
	}
	tooMuch := post(t, srv.URL, "tok", refund, in(999999, "k2"))
	want := map[string]any{"data": map[string]any{"refundCreate": map[string]any{"refund": nil,
		"userErrors": []any{map[string]any{"code": "AMOUNT_TOO_LARGE"}}}}}
	if diff := cmp.Diff(want, tooMuch); diff != "" {
		t.Errorf("a refund of too much (-want +got):\n%s", diff)
	}

	const orders = `query O($after: String) { orders(customerId: "cus_ada", first: 2, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } } }`
	var ids []any
	var after any
	for page := 1; ; page++ {
		conn := post(t, srv.URL, "tok", orders, map[string]any{"after": after})["data"].(map[string]any)["orders"].(map[string]any)
		for _, n := range conn["nodes"].([]any) {
			ids = append(ids, n.(map[string]any)["id"])
		}
		info := conn["pageInfo"].(map[string]any)
		if info["hasNextPage"] != true {
			if page != 3 {
				t.Errorf("%d pages, want 3", page)
			}
			break
		}
		after = info["endCursor"]
	}
	if diff := cmp.Diff([]any{"ord_1", "ord_2", "ord_3", "ord_4", "ord_5"}, ids); diff != "" {
		t.Errorf("Ada's orders over the pages (-want +got):\n%s", diff)
	}

	invalid := post(t, srv.URL, "tok", `query { order(id: "ord_1") { colour } }`, nil)
	if _, ran := invalid["data"]; ran || invalid["errors"] == nil {
		t.Errorf("a document that does not validate: %v, want errors without data", invalid)
	}
	if denied := post(t, srv.URL, "wrong", `query { order(id: "ord_1") { id } }`, nil); denied["data"] != nil || denied["errors"] == nil {
		t.Errorf("a wrong token: %v, want errors", denied)
	}
}
