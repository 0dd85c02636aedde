package httpadapter_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
)

// redirecting answers the first request for which match holds with a
// redirect to location (the same URL when ""), and sends the rest on.
type redirecting struct {
	status   int
	location string
	match    func(*http.Request) bool
	matched  atomic.Int32
}

func (r *redirecting) RoundTrip(req *http.Request) (*http.Response, error) {
	if r.match(req) && r.matched.Add(1) == 1 {
		loc := r.location
		if loc == "" {
			loc = req.URL.String()
		} else {
			loc += req.URL.RequestURI()
		}
		if req.Body != nil {
			_, _ = io.Copy(io.Discard, req.Body)
		}
		return &http.Response{StatusCode: r.status, Header: http.Header{"Location": {loc}}, Body: io.NopCloser(strings.NewReader("")),
			Request: req}, nil
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestARedirectedWriteIsSentOnceAndUnknown: a 307 to a write is not
// followed (Go would send the body again): the system received it once,
// nothing landed through a second send, and the outcome is unknown.
func TestARedirectedWriteIsSentOnceAndUnknown(t *testing.T) {
	pb := startPocketBase(t)
	tr := &redirecting{status: http.StatusTemporaryRedirect, match: func(r *http.Request) bool { return r.Method == http.MethodPost }}
	a := connectPBThrough(t, pb, pbFile(t), true, tr)
	args := json.RawMessage(`{"wallet_id": "w1", "amount_cents": 100}`)
	q, err := a.DryRun(context.Background(), ada, "withdraw", args)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Execute(context.Background(), ada, adapter.Call{Action: "withdraw", Args: args, IdempotencyKey: "k-redirect", Quote: q})
	ae, _ := adapter.AsError(err)
	if ae == nil || ae.Outcome != adapter.Unknown {
		t.Errorf("Execute after a 307 = %v, want an unknown outcome", err)
	}
	if n := tr.matched.Load(); n != 1 {
		t.Errorf("the write was sent %d times, want once", n)
	}
	if n := pb.withdrawals(""); n != 0 {
		t.Errorf("the redirect was followed: %d withdrawals landed", n)
	}
}

// TestARedirectElsewhereNeverGetsTheSecret: a read answered with a
// redirect to another host is not followed, so a header-type secret
// (X-Api-Key, which Go keeps across hosts) never reaches it; the read
// fails naming the redirect, nothing sent there.
func TestARedirectElsewhereNeverGetsTheSecret(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
		if r.Header.Get("X-Api-Key") != "" {
			t.Errorf("another host received the secret on %s", r.URL)
		}
		_, _ = w.Write([]byte(`{"items": []}`))
	}))
	defer other.Close()
	pb := startPocketBase(t)
	tr := &redirecting{status: http.StatusFound, location: other.URL, match: func(*http.Request) bool { return true }}
	a := connectPBThrough(t, pb, pbFile(t, `"header": "Authorization"`, `"header": "X-Api-Key"`), false, tr)
	_, err := a.Read(context.Background(), ada, "my_account", json.RawMessage(`{}`))
	ae, _ := adapter.AsError(err)
	if ae == nil || ae.Outcome != adapter.NotSent || ae.Code != "system_redirected" || !strings.Contains(ae.Message, "redirect") {
		t.Errorf("a read answered 302 = %v, want not sent, naming the redirect", err)
	}
	if leaked.Load() != 0 {
		t.Errorf("the redirect to another host was followed")
	}
}

// TestALinkStaysUnderTheBaseURL: a relative Link is read against the
// request's URL; one whose path climbs out with dot segments (here
// percent-encoded, which resolving leaves alone) is not
// followed.
func TestALinkStaysUnderTheBaseURL(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.RequestURI())
		switch r.URL.Query().Get("cursor") {
		case "":
			w.Header().Set("Link", `<?cursor=p2>; rel="next"`)
			_, _ = w.Write([]byte(`{"data":[{"id":"a"}]}`))
		case "p2":
			w.Header().Set("Link", `<http://`+r.Host+`/api/%2e%2e/admin/items?cursor=p3>; rel="next"`)
			_, _ = w.Write([]byte(`{"data":[{"id":"b"}]}`))
		default:
			_, _ = w.Write([]byte(`{"data":[{"id":"c"}]}`))
		}
	}))
	defer srv.Close()
	file := []byte(`{"name": "items", "base_url_env": "ITEMS_URL", "auth": {"type": "none"}, "idempotency_header": "Idempotency-Key",
		"objects": {"thing": {"get": "/things/{id}", "id": "/id", "display": "{object.id}"}},
		"read_tools": [{"name": "list_items", "title": "Items", "description": "Items.", "path": "/items", "items": "/data",
			"fields": ["/id"], "paging": {"link": true}}],
		"actions": [{"name": "touch", "title": "Touch", "description": "Touch.", "guidance": "Touch.", "risk": "reversible",
			"params": [{"name": "thing_id", "type": "string", "required": true, "description": "the thing"}],
			"target": {"kind": "thing", "param": "thing_id"},
			"quote": {"title": "Touch {target.id}", "lines": [], "consequences": [], "confirm_label": "Touch", "decline_label": "No"},
			"request": {"method": "POST", "path": "/things/{target.id}/touch"}, "result": {"reference": "{response.id}"},
			"verify": {"path": "/things/{target.id}", "fields": {"/id": "target.id"}}}],
		"errors": {"code": "/code"}}`)
	a, err := httpadapter.Load("items.json", file, httpadapter.Config{Getenv: func(string) string { return srv.URL + "/api" }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Read(context.Background(), ada, "list_items", json.RawMessage(`{}`))
	if err != nil || ids(t, res) != "a b" || !res.Truncated {
		t.Errorf("list_items = %v (truncated %v), %v; want a b, truncated", res.Data, res.Truncated, err)
	}
	if strings.Join(asked, " ") != "/api/items /api/items?cursor=p2" {
		t.Errorf("asked for %v", asked)
	}
}

// TestPagingStopsAtARepeatedCursorAndABadQuery: a cursor that comes round
// again ends the list (truncated) instead of paging to max_pages; a path
// whose query cannot be parsed is not paged on without its filter.
func TestPagingStopsAtARepeatedCursorAndABadQuery(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.RawQuery)
		_, _ = w.Write([]byte(`{"data":[{"id":"a"}],"next":"p2"}`))
	}))
	defer srv.Close()
	load := func(path string) *httpadapter.Adapter {
		file := []byte(`{"name": "items", "base_url_env": "ITEMS_URL", "auth": {"type": "none"}, "idempotency_header": "Idempotency-Key",
		"objects": {"thing": {"get": "/things/{id}", "id": "/id", "display": "{object.id}"}},
		"read_tools": [{"name": "list_items", "title": "Items", "description": "Items.", "path": "` + path + `", "items": "/data",
			"fields": ["/id"], "max_items": 50, "paging": {"next": "/next", "param": "cursor"}}],
		"actions": [{"name": "touch", "title": "Touch", "description": "Touch.", "guidance": "Touch.", "risk": "reversible",
			"params": [{"name": "thing_id", "type": "string", "required": true, "description": "the thing"}],
			"target": {"kind": "thing", "param": "thing_id"},
			"quote": {"title": "Touch {target.id}", "lines": [], "consequences": [], "confirm_label": "Touch", "decline_label": "No"},
			"request": {"method": "POST", "path": "/things/{target.id}/touch"}, "result": {"reference": "{response.id}"},
			"verify": {"path": "/things/{target.id}", "fields": {"/id": "target.id"}}}],
		"errors": {"code": "/code"}}`)
		a, err := httpadapter.Load("items.json", file, httpadapter.Config{Getenv: func(string) string { return srv.URL }})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	res, err := load("/items").Read(context.Background(), ada, "list_items", json.RawMessage(`{}`))
	if err != nil || !res.Truncated || len(asked) != 2 {
		t.Errorf("a repeating cursor: %v (truncated %v), %v after %d requests %v; want truncated after 2", res.Data, res.Truncated, err, len(asked), asked)
	}
	asked = nil
	res, err = load("/items?owner=me&bad=%zz").Read(context.Background(), ada, "list_items", json.RawMessage(`{}`))
	for _, q := range asked {
		if !strings.Contains(q, "owner=me") {
			t.Errorf("a page was asked without the file's query: %q", q)
		}
	}
	if err != nil || !res.Truncated {
		t.Errorf("a query that does not parse: %v (truncated %v), %v; want the first page, truncated", res.Data, res.Truncated, err)
	}
}
