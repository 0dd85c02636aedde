package httpadapter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/adapter/adaptertest"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/demoshop/shoptest"
	"countersign/internal/httpadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestAuthoritativeLookupSettlesNotApplied: a refund answered 5xx without
// being applied is unverified; reconciled at once it stays so (a copy of
// the request may still commit); settle_after later, a file whose effects
// are authoritative (the shop's ledger commits each effect with its key)
// settles it as failed, not_applied, while the same file without
// "authoritative" leaves it for a person. A refund the shop did apply is
// completed either way.
func TestAuthoritativeLookupSettlesNotApplied(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/shop-http.json")
	if err != nil {
		t.Fatal(err)
	}
	plain := string(raw)
	authoritative := strings.Replace(plain, `"object": "/object"`, `"object": "/object", "authoritative": true, "settle_after": "2m"`, 1)
	if authoritative == plain {
		t.Fatal("the shop's file no longer ends its effects with object")
	}
	cases := []struct {
		name  string
		file  string
		fault adaptertest.Fault
		want  controlplane.State
	}{
		{"authoritative, not applied", authoritative, adaptertest.FaultServerError, controlplane.Failed},
		// An answer that is not the record's list proves nothing.
		{"authoritative, the list missing from the answer", strings.Replace(authoritative, `"authoritative": true`, `"items": "/missing", "authoritative": true`, 1),
			adaptertest.FaultServerError, controlplane.Unverified},
		{"not authoritative, not applied", plain, adaptertest.FaultServerError, controlplane.Unverified},
		{"authoritative, applied", authoritative, adaptertest.FaultDropAfterCommit, controlplane.Completed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			h := lostRefund(t, tc.file, tc.fault)
			a, st, cp, actor, inv := h.adapter, h.store, h.cp, h.actor, h.inv
			var err error
			if tc.want != controlplane.Completed {
				rec, err := cp.Reconcile(ctx, actor, inv.ID)
				if err != nil || rec.Invocation.State != controlplane.Unverified {
					t.Fatalf("reconciled at once: %s, %v; want still unverified (a copy may yet commit)", rec.Invocation.State, err)
				}
			}
			h.advance(3 * time.Minute)
			// A lookup (what the inspect view runs) only reports; the ledger
			// keeps the call's state until reconcile decides.
			look, err := a.Lookup(ctx, adapter.Principal{CustomerRef: demoshop.DemoCustomerEmail}, inv.Call())
			if err != nil {
				t.Fatal(err)
			}
			if (look.NotApplied != nil) != (tc.want == controlplane.Failed) {
				t.Errorf("the lookup reports not applied: %+v, want it only when the call is settled as failed", look.NotApplied)
			}
			if state, _, _, _, _, err := st.AdapterRequest(ctx, a.Name(), inv.IdempotencyKey); err != nil || state == "refused" {
				t.Errorf("after a lookup the ledger says %q (%v): the lookup wrote it", state, err)
			}
			rec, err := cp.Reconcile(ctx, actor, inv.ID)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Invocation.State != tc.want {
				t.Fatalf("reconciled 3 minutes later: %s (lookup %+v), want %s", rec.Invocation.State, rec.Lookup, tc.want)
			}
			if tc.want == controlplane.Failed && (rec.Invocation.Error == nil || rec.Invocation.Error.Code != "not_applied") {
				t.Errorf("failed with %+v, want not_applied", rec.Invocation.Error)
			}
			if tc.want == controlplane.Failed {
				if state, _, _, _, _, err := st.AdapterRequest(ctx, a.Name(), inv.IdempotencyKey); err != nil || state != "refused" {
					t.Errorf("after reconcile the ledger says %q (%v), want refused: a repeat of the key must send nothing", state, err)
				}
			}
		})
	}
}

// TestAuthoritativeLookupMustReadByKey: an authoritative lookup whose path
// does not use the key, or a settle_after without authoritative, does not
// load.
func TestAuthoritativeLookupMustReadByKey(t *testing.T) {
	t.Parallel()
	sys := newSeatsSystem(t)
	file := seatsFile(`"idempotency_header": "X-Request-Id"`, seatsPatch)
	for edit, want := range map[string]string{
		`"kind": "/kind", "authoritative": true}`:                                                        "must read the effects under the call's key",
		`"kind": "/kind", "settle_after": "1m"}`:                                                         "settle_after applies only to an authoritative lookup",
		`"kind": "/kind", "authoritative": true, "settle_after": "30s", "path": "/changes?op_id={key}"}`: "shorter than a call may take to commit",
	} {
		_, err := loadSeats(t, sys, strings.Replace(file, `"kind": "/kind"}`, edit, 1), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", edit, err, want)
		}
	}
}

// lostRefundHarness is a refund of the shop described by a file whose
// answer a fault lost: unverified in a console database, with the clock
// every part reads.
type lostRefundHarness struct {
	adapter *httpadapter.Adapter
	store   *store.Store
	cp      *controlplane.Service
	actor   controlplane.Actor
	inv     controlplane.Invocation
	advance func(time.Duration)
}

// lostRefund loads file, proposes and approves a refund and dispatches it
// under fault; the refund must end unverified.
func lostRefund(t *testing.T, file string, fault adaptertest.Fault) lostRefundHarness {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	now := testNow
	clk := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	shop := shoptest.Start(t, testNow)
	st := store.New(dbtest.New(t))
	a, err := httpadapter.Load("shop-http.json", []byte(file), httpadapter.Config{Ledger: adapter.NewLedger(st, clk), Now: clk,
		HTTPClient: &http.Client{Timeout: 10 * time.Second},
		Getenv: func(name string) string {
			return map[string]string{"SHOP_URL": shop.URL, "SHOP_TOKEN": shop.Token()}[name]
		}})
	if err != nil {
		t.Fatal(err)
	}
	cp := controlplane.New(st, adapter.NewRegistry(a), controlplane.Config{CallTimeout: 5 * time.Second}, clk, nil)
	if err := cp.EnsurePolicies(ctx, nil); err != nil {
		t.Fatal(err)
	}
	agent, err := accounts.NewService(st, clk, accounts.DefaultThrottle).Create(ctx, accounts.NewUser{Email: "agent@example.test",
		Name: "Sam Agent", Role: accounts.Agent, Password: "a long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	actor := controlplane.UserActor(agent.ID, "agent", agent.Name)
	asst := controlplane.AssistantActor("asst_auth", "Assistant")
	task, err := cp.CreateTask(ctx, asst, controlplane.NewTask{CustomerRef: demoshop.DemoCustomerEmail, ConversationID: "auth-1",
		AllowedActions: []string{"issue_refund"}, WriteBudget: 3, InflightLimit: 1, RatePerMinute: 10, ExpiresAt: testNow.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]any{"order_id": "walnut lamp", "amount_cents": 1500, "reason_code": "damaged"})
	inv, err := cp.Propose(ctx, controlplane.Proposal{TaskID: task.ID, System: a.Name(), Action: "issue_refund", Args: args, Actor: asst})
	if err != nil {
		t.Fatal(err)
	}
	if inv.State == controlplane.AwaitingApproval {
		d, err := cp.StaffDecide(ctx, controlplane.StaffDecision{Actor: actor, InvocationID: inv.ID, Verb: controlplane.StaffApprove,
			Version: inv.Version, ArgsHash: inv.ArgsHash})
		if err != nil {
			t.Fatal(err)
		}
		inv = d.Invocation
	}
	shop.Fault(t, "POST /refunds", fault)
	if _, err := cp.Dispatch(ctx, inv.ID); err != nil {
		t.Fatal(err)
	}
	if inv, err = cp.Invocation(ctx, inv.ID); err != nil || inv.State != controlplane.Unverified {
		t.Fatalf("after a lost answer: %s, %v; want unverified", inv.State, err)
	}
	return lostRefundHarness{adapter: a, store: st, cp: cp, actor: actor, inv: inv,
		advance: func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }}
}

// TestSweepLeavesANonAuthoritativeRecordForAPerson: the reconciler's sweep
// looks a lost refund up on its own; where the file's effects are
// authoritative, no effect settles it failed, not applied, by the sweep;
// where they are not, no effect proves nothing, and after its bounded
// looks the sweep leaves it unverified for a person, saying so once.
func TestSweepLeavesANonAuthoritativeRecordForAPerson(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/shop-http.json")
	if err != nil {
		t.Fatal(err)
	}
	plain := string(raw)
	authoritative := strings.Replace(plain, `"object": "/object"`, `"object": "/object", "authoritative": true, "settle_after": "2m"`, 1)
	for _, tc := range []struct {
		name string
		file string
		want controlplane.State
	}{
		{"authoritative", authoritative, controlplane.Failed},
		{"not authoritative", plain, controlplane.Unverified},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			h := lostRefund(t, tc.file, adaptertest.FaultServerError)
			for range 3 * 60 * 4 { // three hours, a pass every 15 s
				h.advance(15 * time.Second)
				if _, err := h.cp.ReconcileDue(ctx); err != nil {
					t.Fatal(err)
				}
			}
			inv, err := h.cp.Invocation(ctx, h.inv.ID)
			if err != nil {
				t.Fatal(err)
			}
			if inv.State != tc.want {
				t.Fatalf("after the sweep: %s, want %s", inv.State, tc.want)
			}
			settled, _ := dbtest.CountEvents(ctx, h.store.Pool(), string(controlplane.EventInvocationReconciled), &inv.TaskID)
			handed, _ := dbtest.CountEvents(ctx, h.store.Pool(), string(controlplane.EventInvocationReconcileInconclusive), &inv.TaskID)
			if tc.want == controlplane.Failed && (settled != 1 || handed != 0 || inv.Error == nil || inv.Error.Code != adapter.CodeNotApplied) {
				t.Errorf("settled %d times, handed over %d times, error %+v; want settled once, not applied", settled, handed, inv.Error)
			}
			if tc.want == controlplane.Unverified && (settled != 0 || handed != 1) {
				t.Errorf("settled %d times, handed over %d times; want handed to a person once", settled, handed)
			}
		})
	}
}
