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
			var mu sync.Mutex
			now := testNow
			clk := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			shop := shoptest.Start(t, testNow)
			st := store.New(dbtest.New(t))
			a, err := httpadapter.Load("shop-http.json", []byte(tc.file), httpadapter.Config{Ledger: adapter.NewLedger(st, clk), Now: clk,
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
			shop.Fault(t, "POST /refunds", tc.fault)
			if _, err := cp.Dispatch(ctx, inv.ID); err != nil {
				t.Fatal(err)
			}
			if inv, err = cp.Invocation(ctx, inv.ID); err != nil || inv.State != controlplane.Unverified {
				t.Fatalf("after a lost answer: %s, %v; want unverified", inv.State, err)
			}
			if tc.want != controlplane.Completed {
				rec, err := cp.Reconcile(ctx, actor, inv.ID)
				if err != nil || rec.Invocation.State != controlplane.Unverified {
					t.Fatalf("reconciled at once: %s, %v; want still unverified (a copy may yet commit)", rec.Invocation.State, err)
				}
			}
			mu.Lock()
			now = now.Add(3 * time.Minute)
			mu.Unlock()
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
