package adapter_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/adapter"
)

// memLedger is a LedgerStore in memory, for the kit's tests.
type memLedger struct {
	mu   sync.Mutex
	rows map[string]memRow
}

type memRow struct {
	action, state   string
	hash            []byte
	result, errJSON json.RawMessage
	at              time.Time
}

func (m *memLedger) BeginAdapterRequest(_ context.Context, system, key, action, _ string, hash []byte, at time.Time) (bool, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rows == nil {
		m.rows = map[string]memRow{}
	}
	if r, ok := m.rows[system+"/"+key]; ok {
		return false, r.action == action && string(r.hash) == string(hash), nil
	}
	m.rows[system+"/"+key] = memRow{action: action, state: "sending", hash: hash, at: at}
	return true, false, nil
}

func (m *memLedger) FinishAdapterRequest(_ context.Context, system, key, state string, result, errJSON json.RawMessage, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.rows[system+"/"+key]
	r.state, r.result, r.errJSON = state, result, errJSON
	m.rows[system+"/"+key] = r
	return nil
}

func (m *memLedger) AdapterRequest(_ context.Context, system, key string) (string, json.RawMessage, json.RawMessage, time.Time, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rows[system+"/"+key]
	return r.state, r.result, r.errJSON, r.at, ok, nil
}

func (m *memLedger) CountAdapterRequests(context.Context, string, string, string, time.Time) (int, error) {
	return 0, nil
}

func code(err error) string {
	if ae, ok := adapter.AsError(err); ok {
		return ae.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func TestDescribes(t *testing.T) {
	terms := []string{"sub_1", "Pro", "acme.example"}
	cases := []struct {
		ref   string
		extra map[string]bool
		want  bool
	}{
		{"Pro for acme.example", nil, true},
		{"the PROs on acme.example.", nil, true},
		{"sub_1", nil, true},
		{"my Pro plan", nil, false},
		{"my Pro plan", map[string]bool{"plan": true}, true},
		{"Starter", nil, false},
		{"Pro for acme.shop", nil, false},
	}
	for _, tc := range cases {
		if got := adapter.Describes(tc.ref, terms, tc.extra); got != tc.want {
			t.Errorf("Describes(%q, extra %v) = %t, want %t", tc.ref, tc.extra, got, tc.want)
		}
	}
}

func TestFindAction(t *testing.T) {
	defs := []adapter.ActionSpec{renameProject}
	self := func(s adapter.ActionSpec) adapter.ActionSpec { return s }
	if _, _, err := adapter.FindAction("projects", defs, self, "delete_project", nil); code(err) != adapter.CodeUnknownAction {
		t.Errorf("unknown action: got %q, want %q", code(err), adapter.CodeUnknownAction)
	}
	if _, _, err := adapter.FindAction("projects", defs, self, "rename_project", json.RawMessage(`{"project_id":"p1"}`)); code(err) != adapter.CodeInvalidArguments {
		t.Errorf("missing name: got %q, want %q", code(err), adapter.CodeInvalidArguments)
	}
	d, args, err := adapter.FindAction("projects", defs, self, "rename_project", json.RawMessage(`{"project_id":"p1","name":"Atlas"}`))
	if err != nil || d.Name != "rename_project" || args["name"] != "Atlas" {
		t.Errorf("FindAction = %v, %v, %v; want rename_project with name Atlas", d.Name, args, err)
	}
	if got := adapter.Specs(defs, func(s adapter.ActionSpec) string { return s.Name }); len(got) != 1 || got[0] != "rename_project" {
		t.Errorf("Specs = %v, want [rename_project]", got)
	}
}

func TestCheckQuote(t *testing.T) {
	fresh := adapter.Quote{Target: adapter.Target{System: "projects", ID: "p1", Display: "Atlas", Version: "3"}}
	with := func(f func(*adapter.Target)) adapter.Quote { q := fresh; f(&q.Target); return q }
	cases := []struct {
		name        string
		confirmed   adapter.Quote
		needVersion bool
		want        string
	}{
		{"same", fresh, true, ""},
		{"no target", adapter.Quote{}, false, adapter.CodeInvalidArguments},
		{"no version, not needed", with(func(t *adapter.Target) { t.Version = "" }), false, adapter.CodeStaleTarget},
		{"no version, needed", with(func(t *adapter.Target) { t.Version = "" }), true, adapter.CodeInvalidArguments},
		{"other system", with(func(t *adapter.Target) { t.System = "shop" }), false, adapter.CodeStaleTarget},
		{"other target", with(func(t *adapter.Target) { t.ID = "p2" }), false, adapter.CodeStaleTarget},
		{"other version", with(func(t *adapter.Target) { t.Version = "2" }), false, adapter.CodeStaleTarget},
		{"other basis", func() adapter.Quote { q := fresh; q.Basis = map[string]any{"balance_cents": 5000}; return q }(), false, adapter.CodeStaleTarget},
	}
	based, stored := fresh, fresh
	based.Basis, stored.Basis = map[string]any{"balance_cents": int64(5000)}, map[string]any{"balance_cents": float64(5000)}
	if err := adapter.CheckQuote(stored, based, true); err != nil {
		t.Errorf("a stored quote with the same basis: %v", err)
	}
	for _, tc := range cases {
		if got := code(adapter.CheckQuote(tc.confirmed, fresh, tc.needVersion)); got != tc.want {
			t.Errorf("%s: CheckQuote = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestOneAccount(t *testing.T) {
	for _, found := range [][]string{nil, {"a", "b"}} {
		if _, err := adapter.OneAccount("projects", "jo@example.com", found); code(err) != "unknown_customer" {
			t.Errorf("OneAccount(%v): got %q, want unknown_customer", found, code(err))
		}
	}
	if got, err := adapter.OneAccount("projects", "jo@example.com", []string{"a"}); err != nil || got != "a" {
		t.Errorf("OneAccount([a]) = %q, %v; want a", got, err)
	}
	if got, err := adapter.PrincipalEmail(adapter.Principal{CustomerRef: " Jo@Example.com "}); err != nil || got != "jo@example.com" {
		t.Errorf("PrincipalEmail = %q, %v; want jo@example.com", got, err)
	}
	if _, err := adapter.PrincipalEmail(adapter.Principal{}); code(err) != adapter.CodeInvalidArguments {
		t.Errorf("PrincipalEmail without a ref: got %q, want %q", code(err), adapter.CodeInvalidArguments)
	}
}

// TestPlannerExecute runs a write through the kit: it is sent once per
// key, a repeat is answered from the ledger, a stale quote sends nothing,
// and Lookup then finds the applied call.
func TestPlannerExecute(t *testing.T) {
	ctx := context.Background()
	ledger := adapter.NewLedger(&memLedger{}, nil)
	pl := adapter.Planner{System: "projects", Ledger: ledger, NeedVersion: true}
	version, sent := "3", 0
	plan := func(context.Context) (adapter.Plan, error) {
		q := adapter.Quote{Target: adapter.Target{System: "projects", ID: "p1", Display: "Atlas", Version: version}}
		return adapter.Plan{Quote: q, Send: func(_ context.Context, key string) (adapter.Result, error) {
			sent++
			return adapter.Result{Reference: "ren_" + key, Data: map[string]any{"length": int64(5)}}, nil
		}}, nil
	}
	confirmed, err := pl.DryRun(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"project_id": "p1", "name": "Orion"}
	call := adapter.Call{Action: "rename_project", IdempotencyKey: "k1", Quote: confirmed}
	first, err := pl.Execute(ctx, call, args, plan)
	if err != nil || first.Reference != "ren_k1" {
		t.Fatalf("first Execute = %+v, %v; want ren_k1", first, err)
	}
	again, err := pl.Execute(ctx, call, args, plan)
	if err != nil || !again.Deduplicated || sent != 1 {
		t.Fatalf("repeat Execute = %+v, %v, sent %d; want Deduplicated and one send", again, err, sent)
	}
	again.Deduplicated = false
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("the replay differs from the first answer (-first +replay):\n%s", diff)
	}
	version = "4"
	call.IdempotencyKey = "k2"
	if _, err := pl.Execute(ctx, call, args, plan); code(err) != adapter.CodeStaleTarget || sent != 1 {
		t.Fatalf("stale Execute: got %q, sent %d; want %q and nothing sent", code(err), sent, adapter.CodeStaleTarget)
	}
	got, err := ledger.Lookup(ctx, "projects", "k1")
	if err != nil || !got.Found || got.LedgerState != "applied" || got.Result == nil || got.Result.Reference != "ren_k1" {
		t.Fatalf("Lookup(k1) = %+v, %v; want the applied result", got, err)
	}
	var none *adapter.Ledger
	if got, err := none.Lookup(ctx, "projects", "k1"); err != nil || got.Found || got.Effects == nil {
		t.Errorf("nil ledger Lookup = %+v, %v; want not found with an empty list of effects", got, err)
	}
	if _, err := ledger.Lookup(ctx, "projects", ""); code(err) != adapter.CodeInvalidArguments {
		t.Errorf("Lookup without a key: got %q, want %q", code(err), adapter.CodeInvalidArguments)
	}
}

// TestWrites answers DryRun and Execute from an action's spec and plan
// alone, as a third adapter would.
func TestWrites(t *testing.T) {
	ctx := context.Background()
	sent := 0
	w := adapter.Writes[adapter.ActionSpec]{
		Planner: adapter.Planner{System: "projects", Ledger: adapter.NewLedger(&memLedger{}, nil)},
		Defs:    []adapter.ActionSpec{renameProject},
		Spec:    func(s adapter.ActionSpec) adapter.ActionSpec { return s },
		Plan: func(_ context.Context, _ adapter.ActionSpec, _ adapter.Principal, args map[string]any) (adapter.Plan, error) {
			q := adapter.Quote{Title: "Rename to " + args["name"].(string), Target: adapter.Target{System: "projects", ID: args["project_id"].(string)}}
			return adapter.Plan{Quote: q, Send: func(context.Context, string) (adapter.Result, error) {
				sent++
				return adapter.Result{Reference: "ren_1"}, nil
			}}, nil
		},
	}
	if got := w.Specs(); len(got) != 1 || got[0].Name != "rename_project" {
		t.Errorf("Specs = %v, want rename_project", got)
	}
	if _, err := w.DryRun(ctx, adapter.Principal{}, "delete_project", nil); code(err) != adapter.CodeUnknownAction {
		t.Errorf("DryRun of an unknown action: got %q, want %q", code(err), adapter.CodeUnknownAction)
	}
	raw := json.RawMessage(`{"project_id":"p1","name":"Orion"}`)
	q, err := w.DryRun(ctx, adapter.Principal{}, "rename_project", raw)
	if err != nil || q.Title != "Rename to Orion" || sent != 0 {
		t.Fatalf("DryRun = %+v, %v, sent %d; want the quote and nothing sent", q, err, sent)
	}
	call := adapter.Call{Action: "rename_project", Args: raw, IdempotencyKey: "k1", Quote: q}
	for range 2 {
		if res, err := w.Execute(ctx, adapter.Principal{}, call); err != nil || res.Reference != "ren_1" {
			t.Fatalf("Execute = %+v, %v; want ren_1", res, err)
		}
	}
	if sent != 1 {
		t.Errorf("sent %d times, want once", sent)
	}
}
