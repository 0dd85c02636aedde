package httpadapter_test

import (
	"bytes"
	"context"
	"os"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/gqlshop"
	"countersign/internal/httpadapter"
)

// gqlVariant loads the GraphQL example with each old text replaced by its
// new one, against a fresh GraphQL shop.
func gqlVariant(t *testing.T, replace ...string) (*httpadapter.Adapter, *gqlshop.Shop) {
	t.Helper()
	raw, err := os.ReadFile(gqlFile)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(replace); i += 2 {
		if !bytes.Contains(raw, []byte(replace[i])) {
			t.Fatalf("the example has no %s", replace[i])
		}
		raw = bytes.Replace(raw, []byte(replace[i]), []byte(replace[i+1]), 1)
	}
	shop, srv := startGQLShop(t)
	return loadGQL(t, "graphql-shop.json", raw, srv, nil), shop
}

// the guard that refuses more than is refundable before anything is sent,
// taken out so that the shop's own refusal is seen.
const amountGuard = `,
      {"require": "args.amount_cents <= target.refundableCents"`

// TestGraphQLFailuresMapAsTheHTTPRules: a mutation's userErrors are a
// refusal mapped by its code; errors[] without data (the request never ran)
// is refused; errors[] with data (it ran and failed) is unknown on a write,
// even where a rule says refused, and the effect is found again.
func TestGraphQLFailuresMapAsTheHTTPRules(t *testing.T) {
	t.Parallel()
	execute := func(t *testing.T, a *httpadapter.Adapter, key string, amount int) (adapter.Call, error) {
		t.Helper()
		args := raw(t, map[string]any{"order_id": "ord_3", "amount_cents": amount, "reason": "damaged"})
		q, err := a.DryRun(context.Background(), ada, "refund_order", args)
		if err != nil {
			t.Fatalf("dry run: %v", err)
		}
		call := adapter.Call{Action: "refund_order", Args: args, IdempotencyKey: key, Quote: q}
		_, err = a.Execute(context.Background(), ada, call)
		return call, err
	}
	t.Run("userErrors", func(t *testing.T) {
		t.Parallel()
		a, shop := gqlVariant(t, amountGuard, `,
      {"require": "true"`)
		call, err := execute(t, a, "k-user-errors", 5000) // ord_3 has 39.00 left
		ae, ok := adapter.AsError(err)
		if !ok || ae.Outcome != adapter.Refused || ae.Code != "amount_above_refundable" || ae.Fields["amount_cents"] == "" {
			t.Fatalf("execute: %+v, want refused amount_above_refundable on amount_cents", err)
		}
		look, err := a.Lookup(context.Background(), ada, call)
		if err != nil || look.LedgerState != "refused" || len(look.Effects) != 0 || shop.Refunds("") != 0 {
			t.Errorf("lookup %+v, %v, %d refunds: want refused, no effect", look, err, shop.Refunds(""))
		}
	})
	t.Run("errors without data", func(t *testing.T) {
		t.Parallel()
		// A field the schema does not have: the shop refuses the document
		// before running it.
		a, shop := gqlVariant(t, "refund { id orderId amountCents currency }", "refund { id orderId amountCents currency colour }")
		_, err := execute(t, a, "k-invalid", 100)
		ae, ok := adapter.AsError(err)
		if !ok || ae.Outcome != adapter.Refused || ae.Code != "shop_refused" || ae.Hint == "" {
			t.Fatalf("execute: %+v, want refused shop_refused (the 4xx rule)", err)
		}
		if n := shop.Refunds(""); n != 0 {
			t.Errorf("%d refunds, want none", n)
		}
	})
	t.Run("errors with data", func(t *testing.T) {
		t.Parallel()
		// Even a rule that says refused cannot make a write that ran
		// anything but unknown.
		a, shop := gqlVariant(t, `"rules": [`, `"rules": [
      {"system_code": "INTERNAL", "code": "shop_broke", "outcome": "refused", "hint": "Try again."},`)
		shop.FailAfterCommit()
		call, err := execute(t, a, "k-ran", 100)
		ae, ok := adapter.AsError(err)
		if !ok || ae.Outcome != adapter.Unknown || ae.Retryable {
			t.Fatalf("execute: %+v, want unknown, not retryable", err)
		}
		if n := shop.Refunds("k-ran"); n != 1 {
			t.Fatalf("%d refunds under the key, want the one that landed", n)
		}
		look, err := a.Lookup(context.Background(), ada, call)
		if err != nil || len(look.Effects) != 1 || look.Result == nil || look.Result.Reference != "re_1" {
			t.Fatalf("lookup %+v, %v: want the refund found again", look, err)
		}
		v, err := a.Verify(context.Background(), ada, call, nil)
		if err != nil || !v.Verified {
			t.Errorf("verify %+v, %v: want verified", v, err)
		}
	})
}

// TestGraphQLDryRunQuery: an action's dry_run may be a GraphQL query; its
// answer (at its data) is dry_run in the quote, and nothing is written.
func TestGraphQLDryRunQuery(t *testing.T) {
	t.Parallel()
	a, shop := gqlVariant(t, `"quote": {`, `"dry_run": {"graphql": {
        "query": "query Preview($id: ID!) { order(id: $id) { refundableCents currency } }",
        "variables": {"id": "target.id"}, "data": "order"}},
    "quote": {`, `"consequences": [`, `"consequences": ["The shop says {money(dry_run.refundableCents, dry_run.currency)} can be refunded.", `)
	q, err := a.DryRun(context.Background(), ada, "refund_order",
		raw(t, map[string]any{"order_id": "ord_3", "amount_cents": 100, "reason": "damaged"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Consequences) == 0 || q.Consequences[0] != "The shop says €39.00 can be refunded." {
		t.Errorf("consequences %q, want the shop's refundable balance first", q.Consequences)
	}
	if n := shop.Refunds(""); n != 0 {
		t.Errorf("%d refunds after a dry run, want none", n)
	}
}

// TestGraphQLCursorPaging: the principal's orders come in pages of two;
// listing and resolving words follow the cursor over all three pages, and
// max_pages cuts the list (truncated) and refuses words over it.
func TestGraphQLCursorPaging(t *testing.T) {
	t.Parallel()
	a, shop := connectGQL(t, nil)
	res, err := a.Read(context.Background(), ada, "list_orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Count != 5 || res.Truncated {
		t.Errorf("list_orders: %d orders, truncated %t; want Ada's 5", res.Count, res.Truncated)
	}
	if n := shop.OrderPages(); n != 3 {
		t.Errorf("%d pages read, want 3", n)
	}
	target, err := a.Resolve(context.Background(), ada, "order", "wool blanket") // on the third page
	if err != nil || target.ID != "ord_5" {
		t.Errorf("resolve: %+v, %v; want ord_5", target, err)
	}

	if _, err := a.Resolve(context.Background(), ada, "order", "ord_99"); !isCode(err, adapter.CodeNotFound) {
		t.Errorf("resolve ord_99 (null): %v, want not_found", err)
	}

	cut, _ := gqlVariant(t, `"param": "after"}`, `"param": "after", "max_pages": 2}`)
	res, err = cut.Read(context.Background(), ada, "list_orders", nil)
	if err != nil || res.Count != 4 || !res.Truncated {
		t.Errorf("list_orders over 2 pages: %+v, %v; want 4 orders, truncated", res, err)
	}
	_, err = cut.Resolve(context.Background(), ada, "order", "wool blanket")
	if ae, ok := adapter.AsError(err); !ok || ae.Code != adapter.CodeInvalidArguments {
		t.Errorf("resolve over a cut list: %v, want invalid_arguments (give the id)", err)
	}
}

func isCode(err error, code string) bool {
	ae, ok := adapter.AsError(err)
	return ok && ae.Code == code
}
