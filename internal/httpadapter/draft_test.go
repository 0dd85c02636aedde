package httpadapter_test

import (
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
