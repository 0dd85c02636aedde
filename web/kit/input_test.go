package kit_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
)

// hostileTexts are what PostgreSQL cannot store in text: a NUL byte and
// invalid UTF-8, as raw text and as a JSON string.
var hostileTexts = []struct{ name, raw, json string }{
	{"NUL", "a\x00b", `"a\u0000b"`},
	{"invalid UTF-8", "a\xffb", "\"a\xffb\""},
}

// hostilePlaceholder marks, in a JSON body, the one string (value or key)
// that a hostile text replaces.
const hostilePlaceholder = "\u00a7hostile\u00a7"

// queryNames are every query parameter a handler reads, and one it does not.
var queryNames = []string{"task", "q", "state", "system", "action", "customer", "assistant", "from", "to", "intent",
	"mark", "next", "inspect", "signed_out", "unknown"}

// formNames are the fields of the console's forms.
var formNames = []string{"reason", "email", "name", "role", "password", "current", "new", "ids", "id", "args_hash",
	"version", "expected_version", "question", "back", "next", "stage", "owner", "review_on", "auto_max", "approval_above",
	"intent", "other", "enabled", "stopped"}

// TestHostileInputNeverAnswers5xx walks every route of the router with a
// NUL byte and invalid UTF-8 in each path parameter, in every query
// parameter, in the headers that reach the database, in every field of a
// console form, and in every string (and a key) of a valid JSON body of
// each API route. Nothing may answer 5xx.
func TestHostileInputNeverAnswers5xx(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	order := b.DamagedOrder(t)
	invID := b.ProposeRefund(t, order)
	staff := b.Client(t)
	staff.MustSignIn(b.Users[accounts.Admin])
	customer := b.Client(t)
	customer.MustSignIn(b.Users[accounts.Customer])
	clients := map[string]*webtest.Client{"admin": staff, "customer": customer}
	victim := b.CreateUser(t, accounts.Customer)

	validParam := func(path, name string) string {
		switch {
		case name == "*":
			return "app.css"
		case name == ":name":
			return "list_orders"
		case name == ":system":
			return "shop"
		case name == ":action":
			return "issue_refund"
		case name == ":file":
			return "metrics.csv"
		case name == ":token":
			return "x.y"
		case strings.Contains(path, "/tasks/"):
			return b.TaskID()
		case strings.Contains(path, "/admin/"), strings.Contains(path, "/handoffs/"):
			return strconv.FormatInt(victim.ID, 10)
		case strings.Contains(path, "/conversations/"):
			return "conv-1"
		}
		return invID
	}
	bodies := map[string]map[string]any{
		"/api/v1/tasks": {"customer_ref": "customer@demo.countersign.test", "conversation_id": "conv-h",
			"allowed_actions": []any{"issue_refund"}, "systems": []any{"shop"}},
		"/api/v1/tools/:name":           {"task": b.TaskID(), "system": "shop", "args": map[string]any{"status": "open"}},
		"/api/v1/tasks/:id/invocations": {"action": "issue_refund", "system": "shop", "args": webtest.RefundArgs(order, 200), "summary": "Refund $2.00"},
		"/api/v1/conversations/:id/events": {"intent": "transactional_high", "mode": "handed_off", "task_id": b.TaskID(),
			"summary": "Wants a refund", "facts": map[string]any{"order": order, "items": []any{"lamp"}},
			"would_propose": map[string]any{"action": "issue_refund", "args": map[string]any{"order_id": order}}},
		"/mcp": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-06-18",
			"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}}},
	}

	var failures, requests int
	send := func(what string, c *webtest.Client, req *http.Request) {
		t.Helper()
		requests++
		// The key's rate limit refills on the fake clock.
		b.Clock.Advance(time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := c.HTTP.Do(req.WithContext(ctx))
		if err != nil {
			failures++
			t.Errorf("%s: %v", what, err)
			return
		}
		defer res.Body.Close()
		var body bytes.Buffer
		_, _ = body.ReadFrom(res.Body)
		if res.StatusCode >= 500 {
			failures++
			t.Errorf("%s: %d\n%.300s", what, res.StatusCode, body.String())
		}
	}
	newRequest := func(method, path string, body []byte) *http.Request {
		req, err := http.NewRequest(method, b.Server.URL+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return req
	}

	routes := b.Web.Echo().Routes()
	// Signing in and out last keeps the clients signed in for every other
	// route.
	last := func(r *echo.Route) int {
		if r.Method == http.MethodPost && (r.Path == "/sign-out" || r.Path == "/sign-in") {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(routes, func(x, y *echo.Route) int { return cmp.Compare(last(x), last(y)) })
	for _, r := range routes {
		bearer := b.Web.BearerRoute(r.Method, r.Path)
		who := map[string]*webtest.Client{"assistant": b.Client(t)}
		if !bearer {
			who = clients
		}
		fill := func(hostile string, only string) string {
			p := r.Path
			for _, seg := range strings.Split(r.Path, "/") {
				if strings.HasPrefix(seg, ":") || seg == "*" {
					v := validParam(r.Path, seg)
					if seg == only {
						v = hostile
					}
					p = strings.Replace(p, seg, url.PathEscape(v), 1)
				}
			}
			return p
		}
		var params []string
		for _, seg := range strings.Split(r.Path, "/") {
			if strings.HasPrefix(seg, ":") || seg == "*" {
				params = append(params, seg)
			}
		}
		for name, c := range who {
			prepare := func(req *http.Request) *http.Request {
				if bearer {
					req.Header.Set("Authorization", "Bearer "+b.Key)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
				} else if req.Method == http.MethodPost {
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					req.Header.Set("Origin", b.Server.URL)
					req.Header.Set("Sec-Fetch-Site", "same-origin")
				}
				return req
			}
			form := func(extra url.Values) []byte {
				if bearer || r.Method != http.MethodPost {
					return nil
				}
				// A failed sign-in may have signed the client out.
				tok, _ := c.Get("/").Doc(t).Find(`input[name="_csrf"]`).Attr("value")
				if tok == "" {
					tok = c.CSRF("/sign-in")
				}
				v := url.Values{"_csrf": {tok}}
				maps.Copy(v, extra)
				return []byte(v.Encode())
			}
			for _, h := range hostileTexts {
				for _, p := range params {
					path := fill(h.raw, p)
					send(fmt.Sprintf("%s %s as %s: %s in %s (%s)", r.Method, r.Path, name, h.name, p, path), c,
						prepare(newRequest(r.Method, path, form(nil))))
				}
				q := url.Values{}
				for _, n := range queryNames {
					q.Set(n, h.raw)
				}
				q.Set(h.raw, "1")
				send(fmt.Sprintf("%s %s as %s: %s in the query", r.Method, r.Path, name, h.name), c,
					prepare(newRequest(r.Method, fill("", "")+"?"+q.Encode(), form(nil))))
				// HTTP itself refuses a NUL in a header.
				for _, header := range []string{"Idempotency-Key", "Countersign-Task"} {
					if !bearer || strings.IndexByte(h.raw, 0) >= 0 {
						continue
					}
					req := prepare(newRequest(r.Method, fill("", ""), form(nil)))
					req.Header.Set(header, h.raw)
					send(fmt.Sprintf("%s %s as %s: %s in %s", r.Method, r.Path, name, h.name, header), c, req)
				}
				if r.Method != http.MethodPost {
					continue
				}
				if !bearer {
					fields := url.Values{}
					for _, n := range formNames {
						fields.Set(n, h.raw)
					}
					fields.Set(h.raw, "1")
					send(fmt.Sprintf("%s %s as %s: %s in the form", r.Method, r.Path, name, h.name), c,
						prepare(newRequest(r.Method, fill("", ""), form(fields))))
					continue
				}
				path := fill("", "")
				if r.Path == "/mcp" {
					path += "?task=" + b.TaskID()
				}
				tmpl := bodies[r.Path]
				if tmpl == nil {
					tmpl = map[string]any{"expected_version": 1}
				}
				for _, v := range append(leafVariants(tmpl), withKey(tmpl)) {
					raw, _ := json.Marshal(v)
					raw = bytes.ReplaceAll(raw, []byte(strconv.Quote(hostilePlaceholder)), []byte(h.json))
					send(fmt.Sprintf("%s %s: %s in the body %s", r.Method, r.Path, h.name, raw), c,
						prepare(newRequest(r.Method, path, raw)))
				}
			}
		}
	}
	t.Logf("%d requests, %d answered 5xx or not at all", requests, failures)
}

// leafVariants returns copies of v, each with one string replaced by the
// hostile placeholder.
func leafVariants(v any) []any {
	switch x := v.(type) {
	case string:
		return []any{hostilePlaceholder}
	case map[string]any:
		var out []any
		for k, child := range x {
			for _, cv := range leafVariants(child) {
				m := maps.Clone(x)
				m[k] = cv
				out = append(out, m)
			}
		}
		return out
	case []any:
		var out []any
		for i, child := range x {
			for _, cv := range leafVariants(child) {
				s := append([]any(nil), x...)
				s[i] = cv
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// withKey returns a copy of m with one more member named by the placeholder.
func withKey(m map[string]any) map[string]any {
	out := maps.Clone(m)
	out[hostilePlaceholder] = "x"
	return out
}

// TestHostileInputIsA400NamingTheField checks what the refusals say: the
// error shape, code invalid_text and the field, wherever the text came in.
func TestHostileInputIsA400NamingTheField(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	task := "/api/v1/tasks/" + b.TaskID()
	cases := []struct {
		name, method, path, body string
		headers                  []string
		field                    string
	}{
		{"NUL in a path parameter", http.MethodGet, "/api/v1/tasks/tsk%00x", "", nil, "id"},
		{"invalid UTF-8 in a path parameter", http.MethodGet, "/api/v1/invocations/inv%FFx", "", nil, "id"},
		{"NUL in a query value", http.MethodGet, "/api/v1/tools?q=a%00", "", nil, "q"},
		{"invalid UTF-8 in a query value", http.MethodGet, "/api/v1/tools?task=%C3%28", "", nil, "task"},
		{"invalid UTF-8 in Idempotency-Key", http.MethodPost, task + "/invocations", `{"action":"issue_refund"}`,
			[]string{"Idempotency-Key", "k\xff"}, "Idempotency-Key"},
		{"\\u0000 in a JSON string", http.MethodPost, "/api/v1/tasks",
			`{"customer_ref":"a@b.test","conversation_id":"c\u0000","allowed_actions":["issue_refund"]}`, nil, "conversation_id"},
		{"\\u0000 deep in facts", http.MethodPost, "/api/v1/conversations/c1/events",
			`{"intent":"ambiguous","mode":"handed_off","summary":"s","facts":{"order":{"items":["lamp","\u0000"]}}}`, nil, "facts.order.items[1]"},
		{"\\u0000 in a JSON key", http.MethodPost, "/api/v1/conversations/c1/events",
			`{"intent":"ambiguous","mode":"answered","facts":{"a\u0000":1}}`, nil, `facts."a\x00"`},
		{"invalid UTF-8 in a JSON string", http.MethodPost, "/api/v1/tasks",
			"{\"customer_ref\":\"a@b.test\",\"allowed_actions\":[\"issue_refund\",\"x\xc3\"]}", nil, "allowed_actions[1]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := b.Call(t, b.Key, c.method, c.path, c.body, c.headers...)
			fields, _ := res.JSON["fields"].(map[string]any)
			if res.Status != http.StatusBadRequest || res.JSON["code"] != "invalid_text" || fields[c.field] == nil {
				t.Fatalf("%d %s, want 400 invalid_text naming %q", res.Status, res.Body, c.field)
			}
		})
	}

	// The console's pages and forms say the same on an error page.
	staff := b.Client(t)
	staff.MustSignIn(b.Users[accounts.Admin])
	for _, path := range []string{"/tasks?q=a%00", "/queue?customer=%FF", "/metrics?from=%00", "/tasks/tsk%00"} {
		res := staff.Get(path)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(res.Text, "must not contain NUL bytes") &&
			!strings.Contains(res.Text, "must be valid UTF-8") {
			t.Errorf("GET %s: %d, want 400 saying what is wrong\n%.500s", path, res.StatusCode, res.Text)
		}
	}
	res := staff.Post("/queue/inv_x/reject", url.Values{"_csrf": {staff.CSRF("/")}, "reason": {"no\x00"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(res.Text, "reason") {
		t.Errorf("a NUL in a form field: %d, want 400 naming reason\n%.500s", res.StatusCode, res.Text)
	}
}

// TestAPIRefusesOversizedInputNamingTheLimit sends what an assistant once
// had stored: each answer is a 4xx naming the field and its limit, and the
// hand-off page stays small.
func TestAPIRefusesOversizedInputNamingTheLimit(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	task := "/api/v1/tasks/" + b.TaskID()
	many := make([]string, 10000)
	for i := range many {
		many[i] = "issue_refund"
	}
	deep := strings.Repeat(`{"a":`, 2000) + "1" + strings.Repeat("}", 2000)
	wide := map[string]any{}
	for i := range 20000 {
		wide[strconv.FormatInt(int64(i), 36)] = 0
	}
	newTask := func(conv string, actions []string) map[string]any {
		return map[string]any{"customer_ref": "customer@demo.countersign.test", "conversation_id": conv, "allowed_actions": actions}
	}
	handoff := func(facts any) string {
		raw, _ := json.Marshal(facts)
		return `{"intent":"transactional_high","mode":"handed_off","summary":"s","facts":` + string(raw) + `}`
	}
	cases := []struct {
		name, method, path string
		body               any
		status             int
		code, field, limit string
	}{
		{"a 100 kB conversation_id", http.MethodPost, "/api/v1/tasks", newTask(strings.Repeat("c", 100_000), []string{"issue_refund"}),
			422, "over_limit", "conversation_id", "200 characters"},
		{"a 300-character customer_ref", http.MethodPost, "/api/v1/tasks",
			map[string]any{"customer_ref": strings.Repeat("j", 300) + "@example.com", "conversation_id": "c", "allowed_actions": []string{"issue_refund"}},
			422, "over_limit", "customer_ref", "254 characters"},
		{"10,000 allowed_actions", http.MethodPost, "/api/v1/tasks", newTask("c", many), 422, "over_limit", "allowed_actions", "50 items"},
		// The body and facts take two of the 32 levels: the 33rd is named.
		{"facts 2,000 levels deep", http.MethodPost, "/api/v1/conversations/c1/events", handoff(json.RawMessage(deep)),
			400, "json_too_deep", "facts" + strings.Repeat(".a", 31), "32 levels"},
		{"facts with 20,000 keys", http.MethodPost, "/api/v1/conversations/c1/events", handoff(wide), 400, "json_too_many_keys", "facts", "100 keys"},
		{"9 kB of facts", http.MethodPost, "/api/v1/conversations/c1/events", handoff(map[string]any{"note": strings.Repeat("n", 9000)}),
			422, "over_limit", "facts", "8192 bytes"},
		{"a 5,000-character summary", http.MethodPost, task + "/invocations",
			map[string]any{"action": "issue_refund", "args": map[string]any{}, "summary": strings.Repeat("s", 5000)}, 422, "over_limit", "summary", "4000 characters"},
		{"17 kB of args", http.MethodPost, task + "/invocations",
			map[string]any{"action": "issue_refund", "args": map[string]any{"order_id": strings.Repeat("o", 17000)}}, 422, "over_limit", "args", "16384 bytes"},
		{"a 300 kB body", http.MethodPost, "/api/v1/tasks", newTask(strings.Repeat("c", 300_000), nil), 413, "body_too_large", "", "256 KiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := b.Call(t, b.Key, c.method, c.path, c.body)
			if res.Status != c.status || res.JSON["code"] != c.code {
				t.Fatalf("%d %v, want %d %s\n%.500s", res.Status, res.JSON["code"], c.status, c.code, res.Body)
			}
			said, _ := res.JSON["message"].(string)
			if c.field != "" {
				fields, _ := res.JSON["fields"].(map[string]any)
				said, _ = fields[c.field].(string)
			}
			if !strings.Contains(said, c.limit) {
				t.Errorf("does not name %q with its limit %q: %.500s", c.field, c.limit, res.Body)
			}
		})
	}
	staff := b.Client(t)
	staff.MustSignIn(b.Users[accounts.Manager])
	if res := staff.Get("/handoffs"); res.StatusCode != http.StatusOK || len(res.Text) > 64<<10 {
		t.Errorf("hand-offs page: %d, %d bytes", res.StatusCode, len(res.Text))
	}
}

// TestFormPostsAreCappedBeforeTheCSRFCheck posts large bodies to a form
// route without a session: the answer is 413 before anything parses them,
// not the CSRF refusal that parsing would lead to.
func TestFormPostsAreCappedBeforeTheCSRFCheck(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	big := url.Values{"email": {strings.Repeat("e", 100<<10)}}.Encode()
	var multipart bytes.Buffer
	multipart.WriteString("--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n")
	multipart.WriteString(strings.Repeat("x", 1<<20))
	multipart.WriteString("\r\n--B--\r\n")
	cases := []struct {
		name, contentType string
		body              func() *bytes.Reader
		chunked           bool
	}{
		{"a 100 KiB form", "application/x-www-form-urlencoded", func() *bytes.Reader { return bytes.NewReader([]byte(big)) }, false},
		{"a 100 KiB form without a length", "application/x-www-form-urlencoded", func() *bytes.Reader { return bytes.NewReader([]byte(big)) }, true},
		{"a 1 MiB multipart upload", "multipart/form-data; boundary=B", func() *bytes.Reader { return bytes.NewReader(multipart.Bytes()) }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, b.Server.URL+"/sign-in", c.body())
			if c.chunked {
				req.ContentLength = -1
				req.Body = io.NopCloser(c.body())
			}
			req.Header.Set("Content-Type", c.contentType)
			res := b.Client(t).Do(req)
			if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(res.Text, "64 KiB") {
				t.Fatalf("%d, want 413 naming the 64 KiB limit\n%.500s", res.StatusCode, res.Text)
			}
		})
	}
}
