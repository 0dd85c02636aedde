package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/assistants"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/webhooks"
)

// NewAssistant adds an assistant with every action on and a live key. It
// may act for any customer (the tests of vouching use newVouchedAssistant).
func (b *Stack) NewAssistant(t *testing.T, name string) (assistants.Assistant, string) {
	t.Helper()
	a, key := b.NewVouchedAssistant(t, name)
	admin := b.Users[accounts.Admin]
	g := a.Grants
	g.AnyCustomer = true
	a, err := b.Assistants.SetGrants(context.Background(), controlplane.UserActor(admin.ID, string(admin.Role), admin.Name), a.ID, g)
	if err != nil {
		t.Fatal(err)
	}
	return a, key
}

// NewVouchedAssistant adds an assistant with every action on, a live key
// and the default grants: its tasks need the business's assertion.
func (b *Stack) NewVouchedAssistant(t *testing.T, name string) (assistants.Assistant, string) {
	t.Helper()
	ctx := context.Background()
	admin := b.Users[accounts.Admin].ID
	a, err := b.Assistants.Create(ctx, &admin, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Assistants.EnableAll(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	_, key, err := b.Assistants.IssueKey(ctx, a.ID, &admin)
	if err != nil {
		t.Fatal(err)
	}
	return a, key
}

// NewTask opens a task over the API with key for Jordan Lee in
// conversation, allowing actions, and returns the API's answer.
func (b *Stack) NewTask(t *testing.T, key, conversation string, actions []string) map[string]any {
	t.Helper()
	res := b.Call(t, key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "customer@demo.countersign.test",
		"conversation_id": conversation, "allowed_actions": actions, "write_budget": 10, "inflight_limit": 3, "rate_per_minute": 30})
	res.Want(t, http.StatusCreated)
	return res.JSON
}

// APIResponse is an API answer with its decoded JSON object.
type APIResponse struct {
	Status int
	Header http.Header
	JSON   map[string]any
	Body   string
}

// Want fails the test unless the answer has status; it returns r.
func (r APIResponse) Want(t *testing.T, status int) APIResponse {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d\n%s", r.Status, status, r.Body)
	}
	return r
}

// Call sends a JSON request to the API with a bearer key (none when key is
// empty); body may be a string sent as is.
func (b *Stack) Call(t *testing.T, key, method, path string, body any, headers ...string) APIResponse {
	t.Helper()
	return CallAPI(t, b.Server.URL, key, method, path, body, headers...)
}

// CallAPI sends a JSON request to the API at base with a bearer key (none
// when key is empty); body may be a string sent as is, headers are name,
// value pairs.
func CallAPI(t *testing.T, base, key, method, path string, body any, headers ...string) APIResponse {
	t.Helper()
	var rdr *bytes.Reader
	switch v := body.(type) {
	case nil:
		rdr = bytes.NewReader(nil)
	case string:
		rdr = bytes.NewReader([]byte(v))
	default:
		raw, _ := json.Marshal(v)
		rdr = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, base+path, rdr)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	out := APIResponse{Status: res.StatusCode, Header: res.Header, Body: buf.String()}
	_ = json.Unmarshal(buf.Bytes(), &out.JSON)
	return out
}

// TaskID is the id of the task WithAssistant opened.
func (b *Stack) TaskID() string { return b.Task["id"].(string) }

// DamagedOrder finds Jordan Lee's damaged walnut lamp order with the read
// tool.
func (b *Stack) DamagedOrder(t *testing.T) string {
	t.Helper()
	res := b.Call(t, b.Key, http.MethodPost, "/api/v1/tools/list_orders", map[string]any{"task": b.TaskID(), "args": map[string]any{}}).Want(t, http.StatusOK)
	for _, o := range res.JSON["data"].([]any) {
		if m := o.(map[string]any); strings.Contains(m["display"].(string), "Walnut desk lamp") {
			return m["order_id"].(string)
		}
	}
	t.Fatalf("no damaged order among %s", res.Body)
	return ""
}

// RefundArgs are issue_refund's arguments for cents of order, damaged.
func RefundArgs(order string, cents int) map[string]any {
	return map[string]any{"order_id": order, "amount_cents": cents, "reason_code": "damaged"}
}

// ToolModes maps each write tool of the catalog to its mode ("read" for
// read tools).
func ToolModes(t *testing.T, res APIResponse) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, x := range res.JSON["tools"].([]any) {
		tool := x.(map[string]any)
		if tool["kind"] == "read" {
			out[tool["name"].(string)] = "read"
			continue
		}
		out[tool["name"].(string)], _ = tool["mode"].(string)
		if _, ok := tool["input_schema"].(map[string]any); !ok {
			t.Errorf("tool %v has no input_schema", tool["name"])
		}
	}
	return out
}

// ProposeRefund proposes a $7.00 refund of order in the stack's task
// over the API and returns the invocation's id.
func (b *Stack) ProposeRefund(t *testing.T, order string) string {
	t.Helper()
	res := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/invocations",
		map[string]any{"action": "issue_refund", "args": RefundArgs(order, 700), "summary": "Refund $7.00"})
	if res.Status != http.StatusCreated && res.Status != http.StatusOK {
		t.Fatalf("propose: %d %s", res.Status, res.Body)
	}
	return res.JSON["id"].(string)
}

// Actor is the control-plane actor of a console user.
func (u User) Actor() controlplane.Actor {
	return controlplane.UserActor(u.ID, string(u.Role), u.Name)
}

// ReceiveWebhooks registers a receiver as the assistant's outcome webhook
// and returns what it has been sent so far, in order.
func (b *Stack) ReceiveWebhooks(t *testing.T) func() []webhooks.Payload {
	t.Helper()
	var mu sync.Mutex
	var posts []webhooks.Payload
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p webhooks.Payload
		_ = json.Unmarshal(body, &p)
		mu.Lock()
		posts = append(posts, p)
		mu.Unlock()
	}))
	t.Cleanup(recv.Close)
	admin := b.Users[accounts.Admin].ID
	if _, _, err := webhooks.New(b.Store, b.Clock.Now, webhooks.Config{AllowPrivate: true}).Register(context.Background(), b.Assistant.ID, &admin, recv.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	return func() []webhooks.Payload {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(posts)
	}
}

// ShopSiteSecret is the demo shop's site secret in these tests.
var ShopSiteSecret = []byte("the shop's site secret, at least 32 bytes long")

// VouchFor is the task assertion the shop's site would hand the widget,
// changed by edit.
func (b *Stack) VouchFor(aud, customer string, edit func(*confirmation.Assertion)) string {
	now := b.Clock.Now()
	a := confirmation.Assertion{Sub: customer, Sys: "shop", Aud: aud, IssuedAt: now.Unix(),
		ExpiresAt: now.Add(5 * time.Minute).Unix(), Nonce: "n-" + strings.Repeat("0", 14) + now.Format("150405.000000000")}
	if edit != nil {
		edit(&a)
	}
	return confirmation.SignTaskAssertion(ShopSiteSecret, a)
}

// OpenTaskBody is the body of a task opened for customer in
// conversation, with assertion when it is not empty.
func OpenTaskBody(customer, conversation, assertion string) map[string]any {
	body := map[string]any{"customer_ref": customer, "conversation_id": conversation, "allowed_actions": []string{"issue_refund"}}
	if assertion != "" {
		body["customer_assertion"] = assertion
	}
	return body
}
