package httpadapter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"countersign/internal/httpadapter"
)

// A draft from a system's OpenAPI document loads as it is, and what only
// a person can say is left as TODOs that Unfinished names.
func TestDraftFromOpenAPILoads(t *testing.T) {
	for _, tc := range []struct {
		doc   string
		write []string
		env   []string
		want  []string // in the file
	}{
		{"shop.yaml", []string{"changeShippingAddress", "sendInvoice", "createRefund"}, []string{"DEMO_SHOP_TOKEN"},
			[]string{`"base_url": "http://localhost:8081"`, `"header": "X-Request-Id"`, `"order_id": "{target.id}"`, `"shipping_address": "{args.shipping_address}"`}},
		{"pocketbase.json", []string{"updateTask", "deleteTask"}, []string{"POCKETBASE_TASKS_API_KEY", "POCKETBASE_TASKS_URL"},
			[]string{`"header": "Authorization"`, `"get": "/api/collections/tasks/records/{id}"`, `"version": "/updated"`, `"{args.done == 'true'}"`}},
	} {
		t.Run(tc.doc, func(t *testing.T) {
			raw, err := os.ReadFile("testdata/openapi/" + tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			d, err := httpadapter.DraftFromOpenAPI(raw, httpadapter.DraftOptions{Write: tc.write})
			if err != nil {
				t.Fatalf("DraftFromOpenAPI: %v", err)
			}
			if strings.Join(d.Env, ",") != strings.Join(tc.env, ",") {
				t.Errorf("Env = %v, want %v", d.Env, tc.env)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(d.File), w) {
					t.Errorf("the draft has no %s:\n%s", w, d.File)
				}
			}
			env := map[string]string{}
			for _, e := range d.Env {
				env[e] = "http://secret.example"
			}
			a, err := httpadapter.Load("draft.json", d.File, httpadapter.Config{Getenv: func(k string) string { return env[k] }})
			if err != nil {
				t.Fatalf("the draft does not load: %v\n%s", err, d.File)
			}
			if got := len(a.Actions()); got != len(tc.write) {
				t.Errorf("%d actions, want %d", got, len(tc.write))
			}
			left, err := httpadapter.Unfinished("draft.json", d.File)
			if err != nil {
				t.Fatal(err)
			}
			for _, ptr := range []string{"/actions/0/guards/0/message", "/actions/0/quote/title", "/actions/0/quote/consequences/0", "/read_tools/0/description"} {
				found := false
				for _, l := range left {
					found = found || l.Pointer == ptr
				}
				if !found {
					t.Errorf("Unfinished does not name %s: %v", ptr, left)
				}
			}
		})
	}
}

// TestADraftLoadsClosed: a draft names no principal mapping and no owner
// a person has not written, so it loads closed: every object is refused
// to every customer, a GET whose path takes a customer's id from the
// model is left out, and an amount in cents is the action's amount_param.
func TestADraftLoadsClosed(t *testing.T) {
	raw, err := os.ReadFile("testdata/openapi/shop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := httpadapter.DraftFromOpenAPI(raw, httpadapter.DraftOptions{Write: []string{"createRefund"}})
	if err != nil {
		t.Fatal(err)
	}
	file := string(d.File)
	for _, w := range []string{`"principal": {`, `"owner": "'TODO: say whose it is`, `"amount_param": "amount_cents"`} {
		if !strings.Contains(file, w) {
			t.Errorf("the draft has no %s:\n%s", w, file)
		}
	}
	if strings.Contains(file, "/customers/{args.") {
		t.Errorf("the draft reads a customer named by the model:\n%s", file)
	}
	if !strings.Contains(strings.Join(d.Notes, " "), "GET /customers/{id}/orders (listCustomerOrders) is not drafted") {
		t.Errorf("the notes do not say the customer's orders tool is left out: %v", d.Notes)
	}
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		_, _ = w.Write([]byte(`{"id": "ord_1", "customer_id": "c1", "data": [{"id": "c1", "email": "ada@example.com"}]}`))
	}))
	defer srv.Close()
	draft := strings.Replace(file, `"base_url": "http://localhost:8081"`, `"base_url": "`+srv.URL+`"`, 1)
	a, err := httpadapter.Load("draft.json", []byte(draft), httpadapter.Config{Getenv: func(string) string { return "t" }})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := a.Read(context.Background(), ada, "get_order", json.RawMessage(`{"order_id": "ord_1"}`)); err == nil {
		t.Errorf("a draft read an order for any customer: %v (asked %v)", res.Data, asked)
	}
}

// A chosen operation that cannot be an action is named with the fix.
func TestDraftFromOpenAPIRefusesNamingTheOperation(t *testing.T) {
	raw, err := os.ReadFile("testdata/openapi/shop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		write []string
		want  string
	}{
		{nil, "-write sendInvoice,changeShippingAddress,createProduct,createRefund"},
		{[]string{"getOrder"}, "-write getOrder: it is GET /orders/{id}, a read"},
		{[]string{"voidEverything"}, "-write voidEverything: the document has no operation with that operationId (fix: use one of sendInvoice, changeShippingAddress"},
		{[]string{"createProduct"}, "-write createProduct (POST /products): the draft cannot tell which object it changes"},
	} {
		_, err := httpadapter.DraftFromOpenAPI(raw, httpadapter.DraftOptions{Write: tc.write})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("-write %v: err = %v, want one saying %q", tc.write, err, tc.want)
		}
	}
}
