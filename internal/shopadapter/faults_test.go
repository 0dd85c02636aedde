package shopadapter_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
)

var refundLamp = map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}

// TestRepeatedKeySendsNothing: the shop's POST /refunds is not idempotent,
// so the ledger must stop a repeat before it leaves.
func TestRepeatedKeySendsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	call, first := b.mustExecute(t, jordan, shopadapter.ActionIssueRefund, refundLamp, "key-1")
	again, err := b.adapter.Execute(context.Background(), jordan, call)
	if err != nil {
		t.Fatal(err)
	}
	want := first
	want.Deduplicated = true
	if diff := cmp.Diff(want, again); diff != "" {
		t.Errorf("repeat (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"refund.created"}, b.effectKinds(t, "key-1")); diff != "" {
		t.Errorf("shop effects (-want +got):\n%s", diff)
	}
	var refunds demoshop.List[demoshop.Refund]
	b.shopCall(t, http.MethodGet, "/refunds?order_id="+call.Quote.Target.ID, nil, &refunds)
	if len(refunds.Data) != 1 {
		t.Errorf("%d refunds, want 1", len(refunds.Data))
	}

	other := call
	other.Args = raw(t, map[string]any{"order_id": "walnut lamp", "amount_cents": 100, "reason_code": "damaged"})
	_, err = b.adapter.Execute(context.Background(), jordan, other)
	wantError(t, err, "idempotency_key_reused", adapter.Refused)

	// A genuinely new request, with a new key and a fresh quote, goes through.
	b.mustExecute(t, jordan, shopadapter.ActionIssueRefund, map[string]any{"order_id": "walnut lamp", "amount_cents": 100, "reason_code": "damaged"}, "key-2")
	b.shopCall(t, http.MethodGet, "/refunds?order_id="+call.Quote.Target.ID, nil, &refunds)
	if len(refunds.Data) != 2 {
		t.Errorf("%d refunds, want 2", len(refunds.Data))
	}
}

// TestDroppedAnswerIsUnknownAndLookupFindsIt: the shop commits the refund
// and closes the connection without answering.
func TestDroppedAnswerIsUnknownAndLookupFindsIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fault(t, demoshop.FaultRule{Route: "POST /refunds", DropAfterCommit: 1})
	call, _, err := b.execute(t, jordan, shopadapter.ActionIssueRefund, refundLamp, "key-1")
	ae := wantError(t, err, adapter.CodeOutcomeUnknown, adapter.Unknown)
	if ae.Retryable || ae.PolicyRefusal {
		t.Errorf("unknown outcome must not look retryable or refused: %+v", ae)
	}

	look, err := b.adapter.Lookup(context.Background(), jordan, call)
	if err != nil {
		t.Fatal(err)
	}
	var refunds demoshop.List[demoshop.Refund]
	b.shopCall(t, http.MethodGet, "/refunds?order_id="+call.Quote.Target.ID, nil, &refunds)
	if len(refunds.Data) != 1 {
		t.Fatalf("%d refunds, want the one that was committed", len(refunds.Data))
	}
	if !look.Found || look.LedgerState != "unknown" || len(look.Effects) != 1 || look.Effects[0].Kind != "refund.created" ||
		look.Result == nil || look.Result.Reference != refunds.Data[0].ID {
		t.Errorf("lookup %+v, want the unknown call and its refund %s", look, refunds.Data[0].ID)
	}
	v, err := b.adapter.Verify(context.Background(), jordan, call, nil)
	if err != nil || !v.Verified {
		t.Errorf("verify from the shop's evidence: %+v, %v", v, err)
	}

	// Nothing re-sends it.
	_, err = b.adapter.Execute(context.Background(), jordan, call)
	wantError(t, err, adapter.CodeInProgress, adapter.Unknown)
	if got := b.effectKinds(t, "key-1"); len(got) != 1 {
		t.Errorf("effects %v, want exactly one", got)
	}
}

// TestLookupOfAnUnknownKey reports a missing record as such.
func TestLookupOfAnUnknownKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	look, err := b.adapter.Lookup(context.Background(), jordan, adapter.Call{Action: shopadapter.ActionIssueRefund,
		Args: raw(t, refundLamp), IdempotencyKey: "never-sent"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(adapter.LookupResult{Kept: true, Effects: []adapter.Effect{}}, look); diff != "" {
		t.Errorf("lookup (-want +got):\n%s", diff)
	}
}

// TestVerifyDetectsAnIgnoredWrite: the shop answers 200 as if it changed
// the object and rolls the change back; only the read-back tells.
func TestVerifyDetectsAnIgnoredWrite(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		route     string
		principal adapter.Principal
		action    string
		args      map[string]any
	}{
		{"refund", "POST /refunds", jordan, shopadapter.ActionIssueRefund, refundLamp},
		{"product", "PATCH /products/{id}", operator, shopadapter.ActionUpdateProductDesc,
			map[string]any{"product_id": "LAMP-WAL-01", "description": "Walnut."}},
		{"address", "PATCH /orders/{id}", jordan, shopadapter.ActionChangeShippingAddress,
			map[string]any{"order_id": "standing desk mat", "address": map[string]any{"name": "J", "line1": "2 Road", "city": "Reno", "postal_code": "89501", "country": "US"}}},
		{"receipt", "POST /invoices/{id}/send", jordan, shopadapter.ActionResendReceipt, map[string]any{"invoice_id": "paid Starter"}},
		{"cancel", "PATCH /subscriptions/{id}", jordan, shopadapter.ActionCancelSubscription, cancelPro},
		{"reinstate", "PATCH /subscriptions/{id}", hannah, shopadapter.ActionReinstateSubscription, map[string]any{"subscription_id": "Pro"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.fault(t, demoshop.FaultRule{Route: tc.route, IgnoreWrites: 1})
			call, res, err := b.execute(t, tc.principal, tc.action, tc.args, "key-1")
			if err != nil {
				t.Fatalf("the shop acknowledged the write: %v", err)
			}
			v, err := b.adapter.Verify(context.Background(), tc.principal, call, &res)
			if err != nil {
				t.Fatal(err)
			}
			if v.Verified || v.Evidence == "" || v.At.IsZero() {
				t.Errorf("verification %+v, want not verified with evidence", v)
			}
		})
	}
}

// TestStaleTargetSendsNothing changes the object between the dry run and
// the execution.
func TestStaleTargetSendsNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		principal adapter.Principal
		action    string
		args      map[string]any
		change    func(t *testing.T, b *testBundle, id string)
	}{
		{"product price changed", operator, shopadapter.ActionUpdateProductDesc,
			map[string]any{"product_id": "LAMP-WAL-01", "description": "Walnut."},
			func(t *testing.T, b *testBundle, id string) {
				b.shopCall(t, http.MethodPatch, "/products/"+id, map[string]any{"price_cents": 9900}, nil)
			}},
		{"order refunded elsewhere", jordan, shopadapter.ActionIssueRefund, refundLamp,
			func(t *testing.T, b *testBundle, id string) {
				b.shopCall(t, http.MethodPost, "/refunds", map[string]any{"order_id": id, "amount_cents": 100, "reason": "goodwill"}, nil)
			}},
		{"address changed elsewhere", jordan, shopadapter.ActionChangeShippingAddress,
			map[string]any{"order_id": "standing desk mat", "address": map[string]any{"name": "J", "line1": "2 Road", "city": "Reno", "postal_code": "89501", "country": "US"}},
			func(t *testing.T, b *testBundle, id string) {
				b.shopCall(t, http.MethodPatch, "/orders/"+id, map[string]any{"shipping_address": map[string]any{
					"name": "J", "line1": "3 Road", "city": "Reno", "postal_code": "89501", "country": "US"}}, nil)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			q, err := b.dryRun(t, tc.principal, tc.action, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(t, b, q.Target.ID)
			_, err = b.adapter.Execute(context.Background(), tc.principal,
				adapter.Call{Action: tc.action, Args: raw(t, tc.args), IdempotencyKey: "key-1", Quote: q})
			wantError(t, err, adapter.CodeStaleTarget, adapter.Refused)
			if got := b.effectKinds(t, "key-1"); len(got) != 0 {
				t.Errorf("effects %v, want none", got)
			}
			if _, found, err := b.ledger.Get(context.Background(), "shop", "key-1"); found || err != nil {
				t.Errorf("ledger has the stale call (found %t, %v)", found, err)
			}
		})
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// writesTo sends reads to the shop and dials every write to dead, so the
// write fails while dialling.
type writesTo struct {
	reads, writes http.RoundTripper
}

func (w writesTo) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet {
		return w.reads.RoundTrip(r)
	}
	return w.writes.RoundTrip(r)
}

// TestDialFailureIsNotSent: a request that never left is NotSent and
// retryable, whether the whole shop is down or only the write's dial fails.
func TestDialFailureIsNotSent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	down := shopadapter.New(shopadapter.Config{Token: shopToken, Name: "shop", BaseURL: "http://" + closedAddr(t), Ledger: b.ledger, Now: clock})
	_, err := down.DryRun(context.Background(), jordan, shopadapter.ActionIssueRefund, raw(t, refundLamp))
	if ae := wantError(t, err, adapter.CodeUnreachable, adapter.NotSent); !ae.Retryable {
		t.Error("unreachable must be retryable")
	}

	dead := closedAddr(t)
	var dialer net.Dialer
	client := &http.Client{Timeout: 10 * time.Second, Transport: writesTo{
		reads: http.DefaultTransport,
		writes: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, dead)
		}},
	}}
	half := shopadapter.New(shopadapter.Config{Token: shopToken, Name: "shop", BaseURL: b.url, HTTPClient: client, Ledger: b.ledger, Now: clock})
	q, err := half.DryRun(context.Background(), jordan, shopadapter.ActionIssueRefund, raw(t, refundLamp))
	if err != nil {
		t.Fatal(err)
	}
	_, err = half.Execute(context.Background(), jordan, adapter.Call{Action: shopadapter.ActionIssueRefund,
		Args: raw(t, refundLamp), IdempotencyKey: "key-1", Quote: q})
	if ae := wantError(t, err, adapter.CodeUnreachable, adapter.NotSent); !ae.Retryable {
		t.Error("a write that never left must be retryable")
	}
	if got := b.effectKinds(t, "key-1"); len(got) != 0 {
		t.Errorf("effects %v, want none", got)
	}
	entry, found, err := b.ledger.Get(context.Background(), "shop", "key-1")
	if err != nil || !found || entry.State != "refused" || entry.Error.Outcome != adapter.NotSent {
		t.Errorf("ledger %+v found %t err %v, want the call recorded as not sent", entry, found, err)
	}
}

// TestLostWritesAreUnknown: a 5xx answer, a reset connection and a timeout
// after the request left all leave the effect unknown; none of them is
// retried, and Lookup reports what the shop recorded.
func TestLostWritesAreUnknown(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		fault   demoshop.FaultRule
		timeout time.Duration
		settled bool // whether the shop is done with the call when the adapter gives up
	}{
		{"500 answer", demoshop.FaultRule{Route: "POST /refunds", ErrorRate: 1}, 10 * time.Second, true},
		{"connection reset", demoshop.FaultRule{Route: "POST /refunds", ResetRate: 1}, 10 * time.Second, true},
		// The shop is still working on it and applies the refund later:
		// exactly why a timeout proves nothing.
		{"timeout", demoshop.FaultRule{Route: "POST /refunds", LatencyMS: 1500}, 200 * time.Millisecond, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.adapter = shopadapter.New(shopadapter.Config{Token: shopToken, Name: "shop", BaseURL: b.url, Ledger: b.ledger, Now: clock,
				HTTPClient: &http.Client{Timeout: tc.timeout}})
			b.fault(t, tc.fault)
			call, _, err := b.execute(t, jordan, shopadapter.ActionIssueRefund, refundLamp, "key-1")
			if ae := wantError(t, err, adapter.CodeOutcomeUnknown, adapter.Unknown); ae.Retryable {
				t.Error("an unknown outcome must not be retryable")
			}
			look, err := b.adapter.Lookup(context.Background(), jordan, call)
			if err != nil || !look.Found || look.LedgerState != "unknown" {
				t.Errorf("lookup %+v, %v: want the unknown call", look, err)
			}
			if tc.settled && (len(look.Effects) != 0 || look.Result != nil) {
				t.Errorf("lookup %+v: the shop applied nothing", look)
			}
			_, err = b.adapter.Execute(context.Background(), jordan, call)
			wantError(t, err, adapter.CodeInProgress, adapter.Unknown)
		})
	}
}
