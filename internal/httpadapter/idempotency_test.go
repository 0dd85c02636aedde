package httpadapter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// seatsSystem is a system without idempotency headers: it keeps each
// change under the op_id its body carries, in a unique index (a second
// change with an op_id it has is refused 409), and lists changes by op_id.
type seatsSystem struct {
	*httptest.Server
	mu      sync.Mutex
	seats   int
	version int
	// interleave makes another writer change the plan just before the
	// next write is applied.
	interleave bool
	changes    []map[string]any
	// paths and headers of the writes it was sent
	writes []*http.Request
	bodies []map[string]any
}

func newSeatsSystem(t *testing.T) *seatsSystem {
	s := &seatsSystem{seats: 3, version: 1}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *seatsSystem) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/plans/p1":
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "p1", "name": "Team", "seats": s.seats, "version": s.version})
	case r.Method == http.MethodGet && r.URL.Path == "/changes":
		list := []map[string]any{}
		for _, c := range s.changes {
			if op := r.URL.Query().Get("op_id"); op == "" || c["op_id"] == op {
				list = append(list, c)
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": list})
	case r.Method == http.MethodPatch || r.Method == http.MethodPut:
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		s.writes, s.bodies = append(s.writes, r), append(s.bodies, body)
		if s.interleave {
			// Another writer's change commits just before this one arrives.
			s.interleave = false
			s.seats, s.version = 9, s.version+1
		}
		current := strconv.Itoa(s.version)
		if m := r.Header.Get("If-Match"); m != "" && m != current {
			w.WriteHeader(http.StatusPreconditionFailed)
			_, _ = w.Write([]byte(`{"code":"precondition_failed"}`))
			return
		}
		if v, ok := body["expected_version"]; ok && v != float64(s.version) {
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"code":"version_conflict"}`))
			return
		}
		if v := r.URL.Query().Get("version"); v != "" && v != "eq."+current {
			_, _ = w.Write([]byte(`[]`)) // the filter matched no row: nothing updated
			return
		}
		op, _ := body["op_id"].(string)
		if meta, ok := body["meta"].(map[string]any); ok {
			op, _ = meta["op_id"].(string)
		}
		if op == "" && strings.HasPrefix(r.URL.Path, "/plans/p1/changes/") {
			op = strings.TrimPrefix(r.URL.Path, "/plans/p1/changes/")
		}
		for _, c := range s.changes {
			if c["op_id"] == op {
				w.WriteHeader(http.StatusConflict)
				_, _ = w.Write([]byte(`{"code":"duplicate_op_id"}`))
				return
			}
		}
		n, _ := body["seats"].(float64)
		s.seats, s.version = int(n), s.version+1
		c := map[string]any{"id": "chg_" + op, "op_id": op, "seats": s.seats, "at": "2026-04-12T15:04:05Z", "kind": "seats.changed"}
		s.changes = append(s.changes, c)
		_ = json.NewEncoder(w).Encode(c)
	default:
		http.NotFound(w, r)
	}
}

// seatsFile describes seatsSystem; idempotency is its "idempotency" (or
// idempotency_header) member, request its change_seats request.
func seatsFile(idempotency, request string) string {
	if idempotency != "" {
		idempotency += ","
	}
	return `{
  "name": "seats", "title": "Seats", "base_url_env": "SEATS_URL", "auth": {"type": "none"},
  ` + idempotency + `
  "objects": {"plan": {"get": "/plans/{id}", "id": "/id", "version": "/version", "display": "the {object.name} plan"}},
  "actions": [{
    "name": "change_seats", "title": "Change the seats of a plan", "description": "Sets how many people a plan is for.",
    "guidance": "Ask how many seats.", "risk": "reversible", "compensation": "change_seats",
    "params": [
      {"name": "plan_id", "type": "string", "required": true, "description": "the plan"},
      {"name": "seats", "type": "integer", "required": true, "minimum": 1, "maximum": 50, "description": "how many seats"}
    ],
    "target": {"kind": "plan", "param": "plan_id"},
    "quote": {"title": "Change {target.name} to {args.seats} seats", "lines": [{"label": "Seats", "from": "{target.seats}", "to": "{args.seats}"}],
      "consequences": ["The next invoice counts {args.seats} seats."], "confirm_label": "Change seats", "decline_label": "Keep the seats"},
    "request": ` + request + `,
    "result": {"reference": "{response.id}"},
    "verify": {"path": "/changes?op_id={key}", "items": "/data", "fields": {"/seats": "args.seats", "/op_id": "key"}},
    "evidence": {"match": "effect.op_id == key", "reference": "{effect.id}"}
  }],
  "errors": {"code": "/code", "rules": []},
  "effects": {"path": "/changes", "items": "/data", "id": "/id", "at": "/at", "kind": "/kind"}
}`
}

func loadSeats(t *testing.T, sys *seatsSystem, file string, ledger *adapter.Ledger) (*httpadapter.Adapter, error) {
	t.Helper()
	return httpadapter.Load("seats.json", []byte(file), httpadapter.Config{Ledger: ledger, Now: clock,
		Getenv: func(k string) string { return map[string]string{"SEATS_URL": sys.URL}[k] }})
}

// changeSeats dry-runs and executes change_seats to n with key.
func changeSeats(t *testing.T, a *httpadapter.Adapter, n int, key string) (adapter.Call, adapter.Result, error) {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"plan_id": "p1", "seats": n})
	p := adapter.Principal{CustomerRef: "ada@example.com"}
	q, err := a.DryRun(context.Background(), p, "change_seats", args)
	if err != nil {
		t.Fatal(err)
	}
	call := adapter.Call{Action: "change_seats", Args: args, IdempotencyKey: key, Quote: q}
	res, err := a.Execute(context.Background(), p, call)
	return call, res, err
}

// TestKeyInABodyField: with "idempotency": {"body_field": …} every write's
// body carries the call's key at that pointer (objects on the way made)
// and no header does; verify.path, verify.fields and evidence.match read
// {key}, so the change is verified, and a Lookup without a ledger row
// recognises its effect among others by the key.
func TestKeyInABodyField(t *testing.T) {
	t.Parallel()
	sys := newSeatsSystem(t)
	ledger := adapter.NewLedger(store.New(dbtest.New(t)), clock)
	a, err := loadSeats(t, sys, seatsFile(`"idempotency": {"body_field": "/meta/op_id"}`,
		`{"method": "PATCH", "path": "/plans/{target.id}", "body": {"seats": "{args.seats}", "meta": {"source": "countersign"}}}`), ledger)
	if err != nil {
		t.Fatal(err)
	}
	call, res, err := changeSeats(t, a, 5, "key-one")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := changeSeats(t, a, 7, "key-two"); err != nil {
		t.Fatal(err)
	}
	if len(sys.bodies) != 2 {
		t.Fatalf("%d writes, want 2", len(sys.bodies))
	}
	meta, _ := sys.bodies[0]["meta"].(map[string]any)
	if meta["op_id"] != "key-one" || meta["source"] != "countersign" || sys.bodies[0]["seats"] != 5.0 {
		t.Errorf("the first write's body is %v, want seats 5 and meta {source, op_id: key-one}", sys.bodies[0])
	}
	for _, h := range []string{"Idempotency-Key", "X-Request-Id"} {
		if sys.writes[0].Header.Get(h) != "" {
			t.Errorf("the write carries a %s header", h)
		}
	}
	// The plan now has 7 seats; the first change is still found by its key.
	v, err := a.Verify(context.Background(), adapter.Principal{CustomerRef: "ada@example.com"}, call, &res)
	if err != nil || !v.Verified {
		t.Errorf("verify of key-one: %+v, %v; want verified through /changes?op_id=key-one", v, err)
	}
	bare, err := loadSeats(t, sys, seatsFile(`"idempotency": {"body_field": "/meta/op_id"}`,
		`{"method": "PATCH", "path": "/plans/{target.id}", "body": {"seats": "{args.seats}"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	call.IdempotencyKey = "key-two"
	look, err := bare.Lookup(context.Background(), adapter.Principal{CustomerRef: "ada@example.com"}, call)
	if err != nil || look.Result == nil || look.Result.Reference != "chg_key-two" {
		t.Errorf("lookup of key-two among every change: %+v, %v; want the effect whose op_id is the key", look, err)
	}
}

// TestKeyDerivedInTheRequest: with "in_request": true the file itself puts
// the key in the request (an id derived from it in the path), sends no
// header, and a file whose request does not use key does not load.
func TestKeyDerivedInTheRequest(t *testing.T) {
	t.Parallel()
	sys := newSeatsSystem(t)
	ledger := adapter.NewLedger(store.New(dbtest.New(t)), clock)
	a, err := loadSeats(t, sys, seatsFile(`"idempotency": {"in_request": true}`,
		`{"method": "PUT", "path": "/plans/{target.id}/changes/{key}", "body": {"seats": "{args.seats}"}}`), ledger)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := changeSeats(t, a, 5, "key-one"); err != nil {
		t.Fatal(err)
	}
	if len(sys.writes) != 1 || sys.writes[0].URL.Path != "/plans/p1/changes/key-one" {
		t.Fatalf("writes %v, want one PUT /plans/p1/changes/key-one", sys.writes)
	}
	_, err = loadSeats(t, sys, seatsFile(`"idempotency": {"in_request": true}`,
		`{"method": "PATCH", "path": "/plans/{target.id}", "body": {"seats": "{args.seats}"}}`), ledger)
	if err == nil || !strings.Contains(err.Error(), "change_seats's request does not use key") || !strings.Contains(err.Error(), "fix: use {key}") {
		t.Errorf("a request without the key loaded: %v", err)
	}
}

// TestHowTheKeyTravelsIsSaidOnce: a file names one way; none, two, a body
// field the request writes itself, or a body field without a body, does
// not load.
func TestHowTheKeyTravelsIsSaidOnce(t *testing.T) {
	t.Parallel()
	sys := newSeatsSystem(t)
	patch := `{"method": "PATCH", "path": "/plans/{target.id}", "body": {"seats": "{args.seats}"}}`
	cases := []struct{ idem, request, want string }{
		{"", patch, "does not say how a write carries its idempotency key"},
		{`"idempotency_header": "X-Request-Id", "idempotency": {"header": "X-Request-Id"}`, patch, "both idempotency and idempotency_header"},
		{`"idempotency": {"header": "X-Request-Id", "in_request": true}`, patch, "/idempotency"},
		{`"idempotency": {"body_field": "/seats"}`, patch, "writes /seats itself"},
		{`"idempotency": {"body_field": "/op_id"}`, `{"method": "POST", "path": "/plans/{target.id}/changes"}`, "sends no JSON object body"},
	}
	for _, tc := range cases {
		_, err := loadSeats(t, sys, seatsFile(tc.idem, tc.request), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.idem, err, tc.want)
		}
	}
	if _, err := loadSeats(t, sys, seatsFile(`"idempotency": {"header": "Idempotency-Key"}`, patch), nil); err != nil {
		t.Errorf(`"idempotency": {"header": …}: %v`, err)
	}
}

// TestEffectTimesInCommonFormats: an effect's "at" is read in RFC 3339,
// with a space for the T as PostgreSQL writes it, without a zone, and as
// Unix seconds or milliseconds; anything else is left zero (and logged).
func TestEffectTimesInCommonFormats(t *testing.T) {
	t.Parallel()
	want := time.Date(2026, 12, 1, 18, 17, 10, 542000000, time.UTC)
	for _, at := range []any{"2026-12-01T18:17:10.542Z", "2026-12-01 18:17:10.542Z", "2026-12-01 18:17:10.542+00",
		"2026-12-01 19:17:10.542+01:00", "2026-12-01T18:17:10.542", 1796149030.542, 1796149030542, "yesterday"} {
		sys := newSeatsSystem(t)
		sys.changes = []map[string]any{{"id": "chg_1", "op_id": "k", "at": at, "kind": "seats.changed"}}
		a, err := loadSeats(t, sys, seatsFile(`"idempotency_header": "X-Request-Id"`, seatsPatch), nil)
		if err != nil {
			t.Fatal(err)
		}
		args, _ := json.Marshal(map[string]any{"plan_id": "p1", "seats": 4})
		look, err := a.Lookup(context.Background(), adapter.Principal{CustomerRef: "ada@example.com"},
			adapter.Call{Action: "change_seats", Args: args, IdempotencyKey: "k"})
		if err != nil || len(look.Effects) != 1 {
			t.Fatalf("%v: lookup %+v, %v", at, look, err)
		}
		got := look.Effects[0].At
		if at == "yesterday" {
			if !got.IsZero() {
				t.Errorf("%v read as %v", at, got)
			}
		} else if !got.Equal(want) {
			t.Errorf("%v read as %v, want %v", at, got, want)
		}
	}
}
