package httpadapter_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// formSystem keeps the plan seatsFile reads and records every write as it
// arrived: its content type, its raw body, and the fields the server's own
// form parser reads from it.
type formSystem struct {
	*httptest.Server
	mu     sync.Mutex
	writes []formWrite
}

type formWrite struct {
	contentType, raw string
	fields           url.Values
}

func newFormSystem(t *testing.T) *formSystem {
	fs := &formSystem{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "p1", "name": "Team", "seats": 3, "version": 1})
			return
		}
		raw, _ := io.ReadAll(r.Body)
		fields, _ := url.ParseQuery(string(raw))
		fs.writes = append(fs.writes, formWrite{contentType: r.Header.Get("Content-Type"), raw: string(raw), fields: fields})
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "chg_1"})
	}))
	t.Cleanup(fs.Close)
	return fs
}

func loadForm(t *testing.T, url, top, request string) (*httpadapter.Adapter, error) {
	t.Helper()
	return httpadapter.Load("form.json", []byte(seatsFile(`"idempotency_header": "Idempotency-Key"`+top, request)), httpadapter.Config{
		Ledger: adapter.NewLedger(store.New(dbtest.New(t)), clock), Now: clock,
		Getenv: func(k string) string { return map[string]string{"SEATS_URL": url}[k] }})
}

// TestFormBodies: a request with "body_encoding": "form" sends its body as
// application/x-www-form-urlencoded, nested objects and lists in Stripe's
// bracket style by default and lists as repeated names in the repeat
// style, fields in name order; the file's body_encoding applies to every
// request, and a request's own overrides it.
func TestFormBodies(t *testing.T) {
	t.Parallel()
	nested := `"body": {"seats": "{args.seats}", "note": null, "metadata": {"reason": "more people & desks", "by": "countersign"}, "items": [{"id": "seat", "qty": "{args.seats}"}, {"id": "desk", "qty": 1}]}`
	cases := []struct {
		name, top, request string
		wantType, wantRaw  string
		wantFields         url.Values
	}{
		{"brackets", "", `{"method": "PATCH", "path": "/plans/{target.id}", "body_encoding": "form", ` + nested + `}`,
			"application/x-www-form-urlencoded",
			"items%5B0%5D%5Bid%5D=seat&items%5B0%5D%5Bqty%5D=5&items%5B1%5D%5Bid%5D=desk&items%5B1%5D%5Bqty%5D=1&metadata%5Bby%5D=countersign&metadata%5Breason%5D=more+people+%26+desks&seats=5",
			url.Values{"seats": {"5"}, "metadata[reason]": {"more people & desks"}, "metadata[by]": {"countersign"},
				"items[0][id]": {"seat"}, "items[0][qty]": {"5"}, "items[1][id]": {"desk"}, "items[1][qty]": {"1"}}},
		{"repeat", "", `{"method": "POST", "path": "/plans/{target.id}/tags", "body_encoding": "form", "form_style": "repeat", "body": {"tag": ["gold", "{args.seats}"], "seats": "{args.seats}", "paid": true}}`,
			"application/x-www-form-urlencoded", "paid=true&seats=5&tag=gold&tag=5",
			url.Values{"paid": {"true"}, "seats": {"5"}, "tag": {"gold", "5"}}},
		{"the file's encoding", `, "body_encoding": "form", "form_style": "repeat"`, `{"method": "POST", "path": "/plans/{target.id}/tags", "body": {"tag": ["a", "b"], "seats": "{args.seats}"}}`,
			"application/x-www-form-urlencoded", "seats=5&tag=a&tag=b", url.Values{"seats": {"5"}, "tag": {"a", "b"}}},
		{"a request's own JSON", `, "body_encoding": "form"`, `{"method": "PATCH", "path": "/plans/{target.id}", "body_encoding": "json", "body": {"seats": "{args.seats}"}}`,
			"application/json", `{"seats":5}`, url.Values{`{"seats":5}`: {""}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := newFormSystem(t)
			a, err := loadForm(t, fs.URL, tc.top, tc.request)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := changeSeats(t, a, 5, "k-1"); err != nil {
				t.Fatal(err)
			}
			if len(fs.writes) != 1 {
				t.Fatalf("%d writes, want 1", len(fs.writes))
			}
			got := fs.writes[0]
			if got.contentType != tc.wantType || got.raw != tc.wantRaw {
				t.Errorf("sent %s %q\nwant %s %q", got.contentType, got.raw, tc.wantType, tc.wantRaw)
			}
			if diff := cmp.Diff(tc.wantFields, got.fields); diff != "" {
				t.Errorf("the fields the system parsed (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFormBodiesCheckedAtLoad: what a form body cannot say does not load,
// naming the line and the fix.
func TestFormBodiesCheckedAtLoad(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, top, request, want string }{
		{"an object in the repeat style", "",
			`{"method": "POST", "path": "/p", "body_encoding": "form", "form_style": "repeat", "body": {"seats": "{args.seats}", "metadata": {"a": "b"}}}`,
			`/actions/0/request/body/metadata: metadata is an object, which form_style repeat cannot send (it names each field once per value: tag=a&tag=b) (fix: use "form_style": "brackets"`},
		{"a list of objects in the repeat style", "",
			`{"method": "POST", "path": "/p", "body_encoding": "form", "form_style": "repeat", "body": {"seats": "{args.seats}", "items": [{"id": "a"}]}}`,
			`/actions/0/request/body/items/0: items holds an object, which form_style repeat cannot send`},
		{"a form body that is a list", "",
			`{"method": "POST", "path": "/p", "body_encoding": "form", "body": ["{args.seats}"]}`,
			`/actions/0/request/body: a form body is an object of fields, and this one is a list (fix: write the body as an object`},
		{"form_style on a JSON request", "",
			`{"method": "POST", "path": "/p", "form_style": "repeat", "body": {"seats": "{args.seats}"}}`,
			`/actions/0/request/form_style: form_style applies to a form body, and this request sends JSON (fix: add "body_encoding": "form"`},
		{"form_style on a JSON file", `, "form_style": "brackets"`,
			`{"method": "POST", "path": "/p", "body": {"seats": "{args.seats}"}}`,
			`/form_style: form_style applies to form bodies, and the file's bodies are JSON`},
		{"an encoding that is not one", "",
			`{"method": "POST", "path": "/p", "body_encoding": "xml", "body": {"seats": "{args.seats}"}}`,
			`/actions/0/request/body_encoding: value must be one of 'json', 'form'`},
	}
	for _, tc := range cases {
		_, err := httpadapter.Load("form.json", []byte(seatsFile(`"idempotency_header": "Idempotency-Key"`+tc.top, tc.request)),
			httpadapter.Config{Getenv: func(string) string { return "http://127.0.0.1:1" }})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v\nwant an error with %q", tc.name, err, tc.want)
		}
	}
	// The key at /meta/op_id cannot be said in the repeat style.
	_, err := httpadapter.Load("form.json", []byte(seatsFile(`"idempotency": {"body_field": "/meta/op_id"}`,
		`{"method": "POST", "path": "/p", "body_encoding": "form", "form_style": "repeat", "body": {"seats": "{args.seats}"}}`)),
		httpadapter.Config{Getenv: func(string) string { return "http://127.0.0.1:1" }})
	if err == nil || !strings.Contains(err.Error(), "action change_seats sends a repeat-style form, which cannot hold /meta/op_id inside an object") {
		t.Errorf("a nested key in a repeat-style form loaded: %v", err)
	}
}
