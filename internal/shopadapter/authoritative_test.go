package shopadapter_test

import (
	"context"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
)

// TestLedgerIsAuthoritative: the shop's ledger is its system of record, so
// a refund whose answer was lost and that left no effect under its key is
// reported not applied once the settle time has passed since it was begun
// — never sooner, and never when the effect is there. A refund the shop
// answered "done" and rolled back is not applied either: its ledger, not
// its answer, is the record.
func TestLedgerIsAuthoritative(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		fault      demoshop.FaultRule
		notApplied bool
		found      bool
	}{
		{"answered 500, nothing committed", demoshop.FaultRule{Route: "POST /refunds", ErrorRate: 1}, true, false},
		{"committed, the answer dropped", demoshop.FaultRule{Route: "POST /refunds", DropAfterCommit: 1}, false, true},
		{"answered done, rolled back", demoshop.FaultRule{Route: "POST /refunds", IgnoreWrites: 1}, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.fault(t, tc.fault)
			call, _, _ := b.execute(t, jordan, shopadapter.ActionIssueRefund, refundLamp, "key-1")
			b.shop.ClearFaults()
			lookAfter := func(d time.Duration) adapter.LookupResult {
				t.Helper()
				a := shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: b.url, Token: shopToken, Ledger: b.ledger,
					Now: func() time.Time { return testNow.Add(d) }})
				look, err := a.Lookup(context.Background(), jordan, call)
				if err != nil {
					t.Fatal(err)
				}
				return look
			}
			if early := lookAfter(shopadapter.DefaultSettleAfter - time.Second); early.NotApplied != nil {
				t.Errorf("not applied before the settle time: %+v", early.NotApplied)
			}
			look := lookAfter(shopadapter.DefaultSettleAfter)
			if got := look.NotApplied != nil; got != tc.notApplied {
				t.Errorf("not applied = %+v, want %v (lookup %+v)", look.NotApplied, tc.notApplied, look)
			}
			if tc.notApplied && (look.NotApplied.Code != adapter.CodeNotApplied || look.NotApplied.Outcome != adapter.Refused) {
				t.Errorf("not applied = %+v, want a refusal coded %s", look.NotApplied, adapter.CodeNotApplied)
			}
			if got := look.Result != nil && len(look.Effects) == 1; got != tc.found {
				t.Errorf("found the effect = %v, want %v (lookup %+v)", got, tc.found, look)
			}
		})
	}
}

// TestLookupOfAKeyNeverSentIsNotNotApplied: without the request ledger's
// row nothing says the call was ever begun, so nothing is concluded.
func TestLookupOfAKeyNeverSentIsNotNotApplied(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: b.url, Token: shopToken, Ledger: b.ledger,
		Now: func() time.Time { return testNow.Add(time.Hour) }})
	look, err := a.Lookup(context.Background(), jordan, adapter.Call{Action: shopadapter.ActionIssueRefund,
		Args: raw(t, refundLamp), IdempotencyKey: "never-sent"})
	if err != nil {
		t.Fatal(err)
	}
	if look.NotApplied != nil {
		t.Errorf("a key never sent is reported not applied: %+v", look.NotApplied)
	}
}
