package httpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
)

// plansFile is testdata/example/plans.json with each old → new
// replacement made (the test fails when old is not there).
func plansFile(t *testing.T, pairs ...string) []byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/example/plans.json")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if !bytes.Contains(raw, []byte(pairs[i])) {
			t.Fatalf("plans.json has no %s", pairs[i])
		}
		raw = bytes.Replace(raw, []byte(pairs[i]), []byte(pairs[i+1]), 1)
	}
	return raw
}

// plansServer answers the customer lookup and GET /plans/p1 with a plan.
func plansServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/customers":
			_ = json.NewEncoder(w).Encode(map[string]any{"data": []any{map[string]any{"id": "c1", "email": "ada@example.com"}}})
		case r.Method == http.MethodGet && r.URL.Path == "/plans/p1":
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "p1", "customer": "c1", "name": "Team", "seats": 3, "status": "active", "version": 7})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func loadPlans(t *testing.T, raw []byte, url string) (*httpadapter.Adapter, error) {
	t.Helper()
	return httpadapter.Load("plans.json", raw, httpadapter.Config{
		Getenv: func(name string) string { return map[string]string{"PLANS_URL": url}[name] }})
}

// TestMisspelledNamesFailAtLoad: an expression naming an argument or a var
// the file does not declare stops the load, naming the action, the field
// it is written in, the unknown name and the declared name it is nearest.
func TestMisspelledNamesFailAtLoad(t *testing.T) {
	cases := []struct {
		name  string
		pairs []string
		want  []string
	}{
		{"an argument", []string{`"to": "{args.seats}"`, `"to": "{args.saets}"`},
			[]string{"plans.json:29: /actions/0/quote/lines/0/to", "action change_seats", "args.saets is not a declared parameter",
				"did you mean args.seats?"}},
		{"an argument in a guard", []string{`"require": "target.status == 'active'"`, `"require": "target.status == 'active' || args.plan_idd == ''"`},
			[]string{"/actions/0/guards/0/require", "args.plan_idd is not a declared parameter", "did you mean args.plan_id?"}},
		{"a var used before it is declared", []string{`"target": {"kind": "plan", "param": "plan_id"},`,
			`"target": {"kind": "plan", "param": "plan_id"}, "vars": [{"name": "a", "expr": "vars.b + 1"}, {"name": "b", "expr": "args.seats"}],`},
			[]string{"/actions/0/vars/0/expr", "vars.b is not a var declared before this expression", "move var b before this one"}},
		{"a variable not bound in a quote", []string{`"title": "Change {target.name} to`, `"title": "Change {response.name} to`},
			[]string{"/actions/0/quote/title", "action change_seats: response.name uses response, which is not bound here",
				"fix: here an expression may use args, target, account, vars, now, principal"}},
		{"the key in a guard", []string{`"require": "target.status == 'active'"`, `"require": "target.status == 'active' && key != ''"`},
			[]string{"/actions/0/guards/0/require", "uses key, which is not bound here"}},
		{"a var that does not exist", []string{`"title": "Change {target.name} to {args.seats} seats"`,
			`"title": "Change {target.name} to {vars.seat} seats"`},
			[]string{"/actions/0/quote/title", "vars.seat is not a var", "declare it first"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadPlans(t, plansFile(t, tc.pairs...), "http://127.0.0.1:1")
			if err == nil {
				t.Fatal("the file loaded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestARunTimeFailureNamesTheExpression: an expression that compiles and
// names only declared values but fails on the system's data answers with a
// description_error naming the action and the expression, with the
// expression's place in the file as the field.
func TestARunTimeFailureNamesTheExpression(t *testing.T) {
	srv := plansServer(t)
	a, err := loadPlans(t, plansFile(t, `"title": "Change {target.name} to`, `"title": "Change {target.nmae} to`), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.DryRun(context.Background(), adapter.Principal{CustomerRef: "ada@example.com"}, "change_seats",
		json.RawMessage(`{"plan_id": "p1", "seats": 5}`))
	ae, ok := adapter.AsError(err)
	if !ok || ae.Code != "description_error" {
		t.Fatalf("DryRun: %v, want a description_error", err)
	}
	for _, w := range []string{"action change_seats", "target.nmae", "/actions/0/quote/title", "plans.json:28"} {
		if !strings.Contains(ae.Message, w) {
			t.Errorf("message %q does not name %q", ae.Message, w)
		}
	}
	if f := ae.Fields["/actions/0/quote/title"]; !strings.Contains(f, "target.nmae") {
		t.Errorf("fields %v do not name the expression at /actions/0/quote/title", ae.Fields)
	}
}

// TestADoubleUnderscoreNameFailsAtLoad: MCP names a tool system__name
// when two systems offer it, so a tool or action name with "__" does not
// load, and the error names the field.
func TestADoubleUnderscoreNameFailsAtLoad(t *testing.T) {
	_, err := loadPlans(t, plansFile(t, `"name": "change_seats"`, `"name": "change__seats"`), "http://127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "/actions/0/name") || !strings.Contains(err.Error(), "change_seats") {
		t.Errorf("an action named change__seats loaded: %v", err)
	}
}
