package httpadapter_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/adapter/adaptertest"
	"countersign/internal/httpadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// plansSystem is the system testdata/example/plans.json describes: plans
// of customers, whose seats a PATCH sets, recording each change under its
// Idempotency-Key at /changes.
type plansSystem struct {
	*httptest.Server
	mu      sync.Mutex
	plans   []map[string]any
	changes []map[string]any
	fault   adaptertest.Fault
}

func startPlans(t *testing.T) *plansSystem {
	t.Helper()
	ps := &plansSystem{plans: []map[string]any{
		{"id": "p1", "customer": "c1", "name": "Team", "tier": "team", "seats": 3, "status": "active", "version": 1},
		{"id": "p2", "customer": "c1", "name": "Studio", "tier": "team", "seats": 5, "status": "active", "version": 1},
		{"id": "p4", "customer": "c1", "name": "Old", "tier": "solo", "seats": 1, "status": "cancelled", "version": 1},
		{"id": "p3", "customer": "c2", "name": "Solo", "tier": "solo", "seats": 1, "status": "active", "version": 1},
	}}
	customers := []any{map[string]any{"id": "c1", "email": "ada@example.com", "risk_score": 3},
		map[string]any{"id": "c2", "email": "bob@example.com", "risk_score": 1}}
	ps.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		q := r.URL.Query()
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/customers":
			var out []any
			for _, c := range customers {
				if c.(map[string]any)["email"] == q.Get("email") {
					out = append(out, c)
				}
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"data": out})
		case r.Method == http.MethodGet && r.URL.Path == "/plans":
			out := []any{}
			for _, p := range ps.plans {
				if p["customer"] == q.Get("customer") {
					out = append(out, p)
				}
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"data": out})
		case r.Method == http.MethodGet && r.URL.Path == "/changes":
			out := []any{}
			for _, c := range ps.changes {
				if c["key"] == q.Get("key") {
					out = append(out, c)
				}
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"data": out})
		case strings.HasPrefix(r.URL.Path, "/plans/"):
			ps.plan(w, r, strings.TrimPrefix(r.URL.Path, "/plans/"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ps.Close)
	return ps
}

func (ps *plansSystem) plan(w http.ResponseWriter, r *http.Request, id string) {
	var plan map[string]any
	for _, p := range ps.plans {
		if p["id"] == id {
			plan = p
		}
	}
	if plan == nil {
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]any{"code": "not_found"})
		return
	}
	if r.Method == http.MethodGet {
		_ = json.NewEncoder(w).Encode(plan)
		return
	}
	fault := ps.fault
	ps.fault = ""
	switch fault {
	case adaptertest.FaultServerError:
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	case adaptertest.FaultReset:
		_, _ = io.Copy(io.Discard, r.Body)
		hangUp(w)
		return
	}
	var body struct {
		Seats int `json:"seats"`
	}
	key := r.Header.Get("Idempotency-Key")
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Seats < 1 || key == "" {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"code": "invalid"})
		return
	}
	change := fmt.Sprintf("chg_%d", len(ps.changes)+1)
	plan["seats"], plan["version"] = body.Seats, plan["version"].(int)+1
	ps.changes = append(ps.changes, map[string]any{"id": change, "key": key, "kind": "seats.changed", "plan": id,
		"at": time.Date(2026, 4, 12, 15, 4, 5, 0, time.UTC).Format(time.RFC3339)})
	if fault == adaptertest.FaultDropAfterCommit {
		hangUp(w)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"change_id": change})
}

// plansBackend connects testdata/example/plans.json to a fresh plans
// system, for the conformance suite.
func plansBackend(t *testing.T, tr http.RoundTripper) adaptertest.Backend {
	ps := startPlans(t)
	raw, err := os.ReadFile("testdata/example/plans.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := httpadapter.Load("plans.json", raw, httpadapter.Config{Now: clock,
		Ledger:     adapter.NewLedger(store.New(dbtest.New(t)), clock),
		HTTPClient: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		Getenv:     func(string) string { return ps.URL }})
	if err != nil {
		t.Fatal(err)
	}
	return adaptertest.Backend{System: a,
		Effects: func(_ *testing.T, key string) int {
			ps.mu.Lock()
			defer ps.mu.Unlock()
			n := 0
			for _, c := range ps.changes {
				if key == "" || c["key"] == key {
					n++
				}
			}
			return n
		},
		Fault: func(_ *testing.T, f adaptertest.Fault) {
			ps.mu.Lock()
			defer ps.mu.Unlock()
			ps.fault = f
		}}
}

// plansFixture is the conformance fixture of startPlans's records.
func plansFixture() adaptertest.Fixture {
	return adaptertest.Fixture{
		Principal: ada,
		Other:     adapter.Principal{CustomerRef: "bob@example.com"},
		Resolve:   adaptertest.Reference{Kind: "plan", Ref: "studio", WantID: "p2"},
		Ambiguous: adaptertest.Reference{Kind: "plan", Ref: "team"},
		Foreign:   adaptertest.Reference{Kind: "plan", Ref: "p3", WantID: "p3"},
		Write:     adaptertest.Call{Action: "change_seats", Args: map[string]any{"plan_id": "p1", "seats": 7}},
		Refused:   adaptertest.Call{Action: "change_seats", Args: map[string]any{"plan_id": "p4", "seats": 2}},
		Refusal:   adaptertest.Answer{Status: 409, Body: `{"code": "locked"}`, WantCode: "plan_refused"},
		Every: []adaptertest.Varied{{Call: adaptertest.Call{Action: "change_seats", Args: map[string]any{"plan_id": "p1", "seats": 7}},
			Other: map[string][]any{"plan_id": {"p2"}, "seats": {9}}}},
	}
}
