package httpadapter_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// tinyFile describes a system with a real dry-run endpoint: POST
// /plans/{id}/preview answers what a plan change would cost.
const tinyFile = `{
  "name": "tiny",
  "base_url_env": "TINY_URL",
  "auth": AUTH,
  "idempotency_header": "Idempotency-Key",
  "objects": {"plan": {"get": "/plans/{id}", "id": "/id", "version": "/version", "display": "Plan {object.name}"}},
  "read_tools": [{"name": "get_plan", "title": "Read a plan", "description": "A plan.", "path": "/plans/p1", "fields": ["/id", "/name"]}],
  "actions": [{
    "name": "change_seats", "title": "Change seats", "description": "Change the seats of a plan.", "guidance": "Ask how many.",
    "risk": "reversible", "compensation": "change_seats",
    "params": [{"name": "plan_id", "type": "string", "required": true, "description": "the plan"},
               {"name": "seats", "type": "integer", "required": true, "minimum": 1, "maximum": 50, "description": "seats"}],
    "target": {"kind": "plan", "param": "plan_id"},
    "dry_run": {"method": "POST", "path": "/plans/{target.id}/preview", "body": {"seats": "{args.seats}"}},
    "quote": {"title": "Change {target.name} to {args.seats} seats", "lines": [{"label": "Next invoice", "to": "{money(dry_run.next_invoice_cents, 'usd')}"}, {"label": "Seats", "from": "{target.seats}", "to": "{args.seats}"}],
      "consequences": ["The next invoice is {money(dry_run.next_invoice_cents, 'usd')}."], "amount_cents": "dry_run.next_invoice_cents",
      "confirm_label": "Change seats", "decline_label": "Keep"},
    "request": {"method": "PATCH", "path": "/plans/{target.id}", "body": {"seats": "{args.seats}"}},
    "result": {"reference": "{response.change_id}"},
    "verify": {"path": "/plans/{target.id}", "fields": {"/seats": "args.seats"}}
  }],
  "errors": {"code": "/code", "rules": [{"status": ["4xx"], "code": "plan_refused", "outcome": "refused", "hint": "Ask a person."}]}
}`

type tinyServer struct {
	mu       sync.Mutex
	seats    int
	requests []string // "METHOD path auth idempotency-key body"
}

func (s *tinyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	auth := r.Header.Get("Authorization") + r.Header.Get("X-Api-Key")
	s.requests = append(s.requests, strings.Join([]string{r.Method, r.URL.Path, auth, r.Header.Get("Idempotency-Key"), string(body)}, " "))
	var in struct{ Seats int }
	_ = json.Unmarshal(body, &in)
	switch r.Method + " " + r.URL.Path {
	case "GET /plans/p1":
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "p1", "name": "Team", "seats": s.seats, "version": s.seats, "internal_notes": "x"})
	case "POST /plans/p1/preview":
		_ = json.NewEncoder(w).Encode(map[string]any{"next_invoice_cents": in.Seats * 1000})
	case "PATCH /plans/p1":
		if in.Seats > 40 {
			w.WriteHeader(http.StatusUnprocessableEntity)
			_ = json.NewEncoder(w).Encode(map[string]any{"code": "too_many"})
			return
		}
		s.seats = in.Seats
		_ = json.NewEncoder(w).Encode(map[string]any{"change_id": "chg_1"})
	default:
		http.NotFound(w, r)
	}
}

func startTiny(t *testing.T, auth string, env map[string]string) (*httpadapter.Adapter, *tinyServer, error) {
	t.Helper()
	srv := &tinyServer{seats: 3}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	env["TINY_URL"] = hs.URL
	a, err := httpadapter.Load("tiny.json", []byte(strings.Replace(tinyFile, "AUTH", auth, 1)), httpadapter.Config{
		Ledger: adapter.NewLedger(store.New(dbtest.New(t)), clock), Now: clock,
		Getenv: func(k string) string { return env[k] }})
	return a, srv, err
}

// TestAuthenticationFromTheEnvironment: each kind of authentication sends
// the secret read from its environment variable on every request.
func TestAuthenticationFromTheEnvironment(t *testing.T) {
	t.Parallel()
	cases := []struct{ auth, want string }{
		{`{"type": "bearer", "secret_env": "TINY_SECRET"}`, "Bearer s3cret"},
		{`{"type": "basic", "username": "countersign", "secret_env": "TINY_SECRET"}`, "Basic Y291bnRlcnNpZ246czNjcmV0"},
		{`{"type": "header", "header": "X-Api-Key", "secret_env": "TINY_SECRET"}`, "s3cret"},
	}
	for _, tc := range cases {
		a, srv, err := startTiny(t, tc.auth, map[string]string{"TINY_SECRET": "s3cret"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Read(context.Background(), jordan, "get_plan", nil); err != nil {
			t.Fatal(err)
		}
		if got := srv.requests[0]; !strings.Contains(got, " "+tc.want+" ") {
			t.Errorf("%s: request %q, want authorization %q", tc.auth, got, tc.want)
		}
	}
}

// TestDryRunEndpoint: a system's own dry run is asked without a key, its
// answer fills the quote, and the write carries the key in the file's
// header; a 4xx answer maps through the file's rules.
func TestDryRunEndpoint(t *testing.T) {
	t.Parallel()
	a, srv, err := startTiny(t, `{"type": "none"}`, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	args := raw(t, map[string]any{"plan_id": "p1", "seats": 5})
	q, err := a.DryRun(context.Background(), jordan, "change_seats", args)
	if err != nil {
		t.Fatal(err)
	}
	if q.AmountCents == nil || *q.AmountCents != 5000 || q.Lines[0].To != "$50.00" || !q.Reversible {
		t.Errorf("quote %+v, want $50.00 from the dry-run endpoint", q)
	}
	call := adapter.Call{Action: "change_seats", Args: args, IdempotencyKey: "k-1", Quote: q}
	res, err := a.Execute(context.Background(), jordan, call)
	if err != nil || res.Reference != "chg_1" {
		t.Fatalf("execute: %+v, %v", res, err)
	}
	if v, err := a.Verify(context.Background(), jordan, call, &res); err != nil || !v.Verified {
		t.Errorf("verify: %+v, %v", v, err)
	}
	// Execute plans again from fresh reads, the system's dry run included;
	// Verify reads the target, then its verify path.
	want := []string{
		"GET /plans/p1   ",
		`POST /plans/p1/preview   {"seats":5}`,
		"GET /plans/p1   ",
		`POST /plans/p1/preview   {"seats":5}`,
		`PATCH /plans/p1  k-1 {"seats":5}`,
		"GET /plans/p1   ",
		"GET /plans/p1   ",
	}
	if got := strings.Join(srv.requests, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}

	big := raw(t, map[string]any{"plan_id": "p1", "seats": 45})
	q, err = a.DryRun(context.Background(), jordan, "change_seats", big)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Execute(context.Background(), jordan, adapter.Call{Action: "change_seats", Args: big, IdempotencyKey: "k-2", Quote: q})
	if ae, ok := adapter.AsError(err); !ok || ae.Code != "plan_refused" || ae.Outcome != adapter.Refused || ae.Hint != "Ask a person." {
		t.Errorf("execute above the limit: %v, want plan_refused", err)
	}
}
