package web_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/assistants"
	"countersign/internal/controlplane"
	"countersign/internal/lists"
	"countersign/internal/webhooks"
	"countersign/web"
	"countersign/web/kit"
)

// apiBundle is a console with a demo shop and one assistant that has every
// action turned on, with a live key and an open task for Jordan Lee.
type apiBundle struct {
	*testBundle
	asst *assistants.Service
	a    assistants.Assistant
	key  string
	task map[string]any
}

func setupAPI(t *testing.T) *apiBundle {
	t.Helper()
	b := setup(t, bundleOpts{shop: true})
	ab := &apiBundle{testBundle: b, asst: b.assistants}
	ab.a, ab.key = ab.newAssistant(t, "support-bot")
	ab.task = ab.newTask(t, ab.key, "conv-1", []string{"issue_refund", "change_shipping_address", "resend_receipt", "cancel_subscription"})
	return ab
}

// newAssistant adds an assistant with every action on and a live key. It
// may act for any customer (the tests of vouching use newVouchedAssistant).
func (b *apiBundle) newAssistant(t *testing.T, name string) (assistants.Assistant, string) {
	t.Helper()
	a, key := b.newVouchedAssistant(t, name)
	admin := b.users[accounts.Admin]
	g := a.Grants
	g.AnyCustomer = true
	a, err := b.asst.SetGrants(context.Background(), controlplane.UserActor(admin.ID, string(admin.Role), admin.Name), a.ID, g)
	if err != nil {
		t.Fatal(err)
	}
	return a, key
}

// newVouchedAssistant adds an assistant with every action on, a live key
// and the default grants: its tasks need the business's assertion.
func (b *apiBundle) newVouchedAssistant(t *testing.T, name string) (assistants.Assistant, string) {
	t.Helper()
	ctx := context.Background()
	admin := b.users[accounts.Admin].ID
	a, err := b.asst.Create(ctx, &admin, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.asst.EnableAll(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	_, key, err := b.asst.IssueKey(ctx, a.ID, &admin)
	if err != nil {
		t.Fatal(err)
	}
	return a, key
}

func (b *apiBundle) newTask(t *testing.T, key, conversation string, actions []string) map[string]any {
	t.Helper()
	res := b.call(t, key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "customer@demo.countersign.test",
		"conversation_id": conversation, "allowed_actions": actions, "write_budget": 10, "inflight_limit": 3, "rate_per_minute": 30})
	res.want(t, http.StatusCreated)
	return res.json
}

// apiResponse is an API answer with its decoded JSON object.
type apiResponse struct {
	status int
	header http.Header
	json   map[string]any
	body   string
}

func (r apiResponse) want(t *testing.T, status int) apiResponse {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d\n%s", r.status, status, r.body)
	}
	return r
}

// call sends a JSON request to the API with a bearer key (none when key is
// empty); body may be a string sent as is.
func (b *apiBundle) call(t *testing.T, key, method, path string, body any, headers ...string) apiResponse {
	t.Helper()
	return callAPI(t, b.srv.URL, key, method, path, body, headers...)
}

func callAPI(t *testing.T, base, key, method, path string, body any, headers ...string) apiResponse {
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
	out := apiResponse{status: res.StatusCode, header: res.Header, body: buf.String()}
	_ = json.Unmarshal(buf.Bytes(), &out.json)
	return out
}

func (b *apiBundle) taskID() string { return b.task["id"].(string) }

// damagedOrder finds Jordan Lee's damaged walnut lamp order with the read
// tool.
func (b *apiBundle) damagedOrder(t *testing.T) string {
	t.Helper()
	res := b.call(t, b.key, http.MethodPost, "/api/v1/tools/list_orders", map[string]any{"task": b.taskID(), "args": map[string]any{}}).want(t, http.StatusOK)
	for _, o := range res.json["data"].([]any) {
		if m := o.(map[string]any); strings.Contains(m["display"].(string), "Walnut desk lamp") {
			return m["order_id"].(string)
		}
	}
	t.Fatalf("no damaged order among %s", res.body)
	return ""
}

func refundArgs(order string, cents int) map[string]any {
	return map[string]any{"order_id": order, "amount_cents": cents, "reason_code": "damaged"}
}

// toolModes maps each write tool of the catalog to its mode ("read" for
// read tools).
func toolModes(t *testing.T, res apiResponse) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, x := range res.json["tools"].([]any) {
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

func TestAPICatalogFollowsTheThreeFilters(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	path := "/api/v1/tools?task=" + b.taskID()
	reads := map[string]string{"get_order": "read", "list_orders": "read", "list_subscriptions": "read", "get_invoice": "read",
		"get_product": "read", "check_inventory": "read"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range reads {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}

	got := toolModes(t, b.call(t, b.key, http.MethodGet, path, nil).want(t, http.StatusOK))
	want := with(map[string]string{"issue_refund": "approval", "change_shipping_address": "confirm", "resend_receipt": "auto",
		"cancel_subscription": "approval"})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("catalog of the task (-want +got):\n%s", diff)
	}

	// Without a task: every action the assistant has on.
	all := toolModes(t, b.call(t, b.key, http.MethodGet, "/api/v1/tools", nil).want(t, http.StatusOK))
	if all["update_product_description"] != "approval" || all["reinstate_subscription"] != "approval" {
		t.Errorf("catalog without a task lacks actions the task does not allow: %v", all)
	}

	// q searches names and descriptions.
	found := toolModes(t, b.call(t, b.key, http.MethodGet, path+"&q=REFUND", nil).want(t, http.StatusOK))
	if found["issue_refund"] != "approval" || found["resend_receipt"] != "" {
		t.Errorf("?q=REFUND found %v", found)
	}

	// Filter 2: the assistant turns an action off.
	if err := b.asst.SetAction(context.Background(), b.a.ID, "shop", "issue_refund", false); err != nil {
		t.Fatal(err)
	}
	got = toolModes(t, b.call(t, b.key, http.MethodGet, path, nil).want(t, http.StatusOK))
	delete(want, "issue_refund")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after turning issue_refund off (-want +got):\n%s", diff)
	}
	res := b.call(t, b.key, http.MethodPost, "/api/v1/tasks/"+b.taskID()+"/invocations",
		map[string]any{"action": "issue_refund", "args": refundArgs("ord_x", 100)}).want(t, http.StatusForbidden)
	if res.json["code"] != "action_not_enabled" {
		t.Errorf("proposing a turned-off action: %s", res.body)
	}

	// Filter 3: the policy's stage decides the mode; a disabled policy hides it.
	if _, err := b.store.Pool().Exec(context.Background(), `UPDATE policies SET stage = 4, version = version + 1 WHERE action = 'cancel_subscription'`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.Pool().Exec(context.Background(), `UPDATE policies SET enabled = false, version = version + 1 WHERE action = 'resend_receipt'`); err != nil {
		t.Fatal(err)
	}
	got = toolModes(t, b.call(t, b.key, http.MethodGet, path, nil).want(t, http.StatusOK))
	want["cancel_subscription"] = "confirm"
	delete(want, "resend_receipt")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after the policy changes (-want +got):\n%s", diff)
	}

	// Filter 1: the business disconnects the shop.
	b.web.Registry().Disconnect("shop")
	got = toolModes(t, b.call(t, b.key, http.MethodGet, path, nil).want(t, http.StatusOK))
	if diff := cmp.Diff(map[string]string{}, got); diff != "" {
		t.Errorf("after disconnecting the shop (-want +got):\n%s", diff)
	}
}

func TestAPIAuthenticationAndOwnership(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	ctx := context.Background()
	taskPath := "/api/v1/tasks/" + b.taskID()

	for name, key := range map[string]string{"no key": "", "unknown key": "csk_live_00000000000000000000000000000000", "not a key": "hunter2"} {
		res := b.call(t, key, http.MethodGet, taskPath, nil)
		if res.status != http.StatusUnauthorized || res.json["code"] == nil || res.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: %d %s (WWW-Authenticate %q), want 401 with a code", name, res.status, res.body, res.header.Get("WWW-Authenticate"))
		}
	}

	// A revoked key stops at once; the assistant's other key still works.
	admin := b.users[accounts.Admin].ID
	second, secondKey, err := b.asst.IssueKey(ctx, b.a.ID, &admin)
	if err != nil {
		t.Fatal(err)
	}
	b.call(t, secondKey, http.MethodGet, taskPath, nil).want(t, http.StatusOK)
	if _, err := b.asst.RevokeKey(ctx, second.ID); err != nil {
		t.Fatal(err)
	}
	b.call(t, secondKey, http.MethodGet, taskPath, nil).want(t, http.StatusUnauthorized)
	b.call(t, b.key, http.MethodGet, taskPath, nil).want(t, http.StatusOK)

	// Another assistant sees neither the task nor its invocations, and
	// cannot tell them from ids that do not exist.
	_, otherKey := b.newAssistant(t, "other-bot")
	order := b.damagedOrder(t)
	inv := b.call(t, b.key, http.MethodPost, taskPath+"/invocations", map[string]any{"action": "issue_refund",
		"args": refundArgs(order, 1500), "summary": "Refund $15.00 for the damaged lamp"}).want(t, http.StatusCreated)
	invPath := "/api/v1/invocations/" + inv.json["id"].(string)
	for _, c := range []struct{ method, path, missing string }{
		{http.MethodGet, taskPath, "/api/v1/tasks/tsk_00000000000000000000"},
		{http.MethodPost, taskPath + "/pause", "/api/v1/tasks/tsk_00000000000000000000/pause"},
		{http.MethodPost, taskPath + "/invocations", "/api/v1/tasks/tsk_00000000000000000000/invocations"},
		{http.MethodGet, invPath, "/api/v1/invocations/inv_00000000000000000000"},
		{http.MethodPost, invPath + "/reverse", "/api/v1/invocations/inv_00000000000000000000/reverse"},
		{http.MethodGet, "/api/v1/tools?task=" + b.taskID(), "/api/v1/tools?task=tsk_00000000000000000000"},
	} {
		body := map[string]any{"expected_version": 1}
		if strings.HasSuffix(c.path, "/invocations") {
			body = map[string]any{"action": "issue_refund", "args": refundArgs(order, 100)}
		}
		if c.method == http.MethodGet || strings.HasSuffix(c.path, "/reverse") {
			body = nil
		}
		theirs := b.call(t, otherKey, c.method, c.path, body)
		missing := b.call(t, otherKey, c.method, c.missing, body)
		if theirs.status != http.StatusNotFound {
			t.Errorf("%s %s as another assistant: %d, want 404\n%s", c.method, c.path, theirs.status, theirs.body)
		}
		if diff := cmp.Diff(missing.json, theirs.json); diff != "" {
			t.Errorf("%s %s: another's object answers unlike a missing one (-missing +theirs):\n%s", c.method, c.path, diff)
		}
	}

	// A disabled assistant's keys stop working.
	if err := b.asst.SetDisabled(ctx, b.a.ID, true); err != nil {
		t.Fatal(err)
	}
	b.call(t, b.key, http.MethodGet, taskPath, nil).want(t, http.StatusUnauthorized)
}

// TestAPIErrorShapes checks every kind of error the API answers: the status,
// the code, and that the body is {code, message, retryable, hint, fields?}.
func TestAPIErrorShapes(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	taskPath := "/api/v1/tasks/" + b.taskID()
	order := b.damagedOrder(t)
	version := int(b.task["version"].(float64))
	cases := []struct {
		name         string
		key          string
		method, path string
		body         any
		status       int
		code         string
		field        string
	}{
		{"no key", "", http.MethodGet, taskPath, nil, 401, "missing_api_key", ""},
		{"malformed JSON", b.key, http.MethodPost, "/api/v1/tasks", `{"customer_ref":`, 400, "malformed_json", ""},
		{"not an object", b.key, http.MethodPost, "/api/v1/tasks", `[1,2]`, 400, "malformed_json", ""},
		{"unknown field", b.key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "x", "budget": 3}, 400, "unknown_field", "budget"},
		{"wrong type", b.key, http.MethodPost, "/api/v1/tasks", map[string]any{"write_budget": "three"}, 422, "invalid", "write_budget"},
		{"bad time", b.key, http.MethodPost, "/api/v1/tasks", map[string]any{"expires_at": "tomorrow"}, 422, "invalid", "expires_at"},
		{"missing fields", b.key, http.MethodPost, "/api/v1/tasks", map[string]any{}, 422, "invalid", "customer_ref"},
		{"action not enabled for the assistant", b.key, http.MethodPost, "/api/v1/tasks",
			map[string]any{"customer_ref": "customer@demo.countersign.test", "conversation_id": "c", "allowed_actions": []string{"launch_rocket"}}, 422, "invalid", "allowed_actions"},
		{"wrong intent enum", b.key, http.MethodPost, "/api/v1/conversations/c1/events", map[string]any{"intent": "curious", "mode": "answered"}, 422, "invalid", "intent"},
		{"wrong mode enum", b.key, http.MethodPost, "/api/v1/conversations/c1/events", map[string]any{"intent": "informational", "mode": "shrugged"}, 422, "invalid", "mode"},
		{"wrong argument enum", b.key, http.MethodPost, taskPath + "/invocations",
			map[string]any{"action": "issue_refund", "args": map[string]any{"order_id": order, "amount_cents": 100, "reason_code": "whim"}}, 422, "invalid_arguments", "reason_code"},
		{"unknown argument", b.key, http.MethodPost, taskPath + "/invocations",
			map[string]any{"action": "issue_refund", "args": map[string]any{"order_id": order, "amount_cents": 100, "reason_code": "damaged", "note": "x"}}, 422, "invalid_arguments", "note"},
		{"action not allowed by the task", b.key, http.MethodPost, taskPath + "/invocations",
			map[string]any{"action": "update_product_description", "args": map[string]any{}}, 403, "action_not_allowed", ""},
		{"unknown task", b.key, http.MethodGet, "/api/v1/tasks/tsk_nope", nil, 404, "not_found", ""},
		{"unknown read tool", b.key, http.MethodPost, "/api/v1/tools/get_secrets", map[string]any{"task": b.taskID()}, 404, "unknown_tool", ""},
		{"read without a task", b.key, http.MethodPost, "/api/v1/tools/list_orders", map[string]any{}, 422, "invalid", "task"},
		{"stale version", b.key, http.MethodPost, taskPath + "/pause", map[string]any{"expected_version": version + 7}, 409, "stale_version", ""},
		{"missing version", b.key, http.MethodPost, taskPath + "/pause", map[string]any{}, 422, "invalid", "expected_version"},
		{"illegal transition", b.key, http.MethodPost, taskPath + "/resume", map[string]any{"expected_version": version}, 409, "illegal_transition", ""},
		{"reconcile what is not unverified", b.key, http.MethodPost, "/api/v1/invocations/" + b.proposeRefund(t, order) + "/reconcile", nil, 409, "illegal_transition", ""},
		{"hand-off without a summary", b.key, http.MethodPost, "/api/v1/conversations/c1/events", map[string]any{"intent": "transactional_high", "mode": "handed_off"}, 422, "invalid", "summary"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := b.call(t, c.key, c.method, c.path, c.body)
			if res.status != c.status || res.json["code"] != c.code {
				t.Fatalf("%d %v, want %d %s\n%s", res.status, res.json["code"], c.status, c.code, res.body)
			}
			for _, k := range []string{"code", "message", "retryable"} {
				if _, ok := res.json[k]; !ok {
					t.Errorf("error body lacks %q: %s", k, res.body)
				}
			}
			if msg, _ := res.json["message"].(string); msg == "" {
				t.Errorf("empty message: %s", res.body)
			}
			if c.field != "" {
				fields, _ := res.json["fields"].(map[string]any)
				if _, ok := fields[c.field]; !ok {
					t.Errorf("fields do not name %q: %s", c.field, res.body)
				}
			}
		})
	}
}

func (b *apiBundle) proposeRefund(t *testing.T, order string) string {
	t.Helper()
	res := b.call(t, b.key, http.MethodPost, "/api/v1/tasks/"+b.taskID()+"/invocations",
		map[string]any{"action": "issue_refund", "args": refundArgs(order, 700), "summary": "Refund $7.00"})
	if res.status != http.StatusCreated && res.status != http.StatusOK {
		t.Fatalf("propose: %d %s", res.status, res.body)
	}
	return res.json["id"].(string)
}

func TestAPIIdempotencyKey(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	order := b.damagedOrder(t)
	path := "/api/v1/tasks/" + b.taskID() + "/invocations"
	body := map[string]any{"action": "issue_refund", "args": refundArgs(order, 1500), "summary": "Refund $15.00 for the damaged lamp"}

	first := b.call(t, b.key, http.MethodPost, path, body, "Idempotency-Key", "req-1").want(t, http.StatusCreated)
	if first.json["deduplicated"] != false || first.json["state"] != "awaiting_approval" {
		t.Fatalf("first answer: %s", first.body)
	}
	for _, k := range []string{"id", "task_id", "action", "target", "state", "version", "args", "quote", "summary",
		"summary_disagrees", "idempotency_key", "deduplicated", "next", "result", "error", "say"} {
		if _, ok := first.json[k]; !ok {
			t.Errorf("invocation lacks %q", k)
		}
	}
	quote := first.json["quote"].(map[string]any)
	if quote["amount_cents"] != 1500.0 || quote["title"] == "" {
		t.Errorf("quote: %v", quote)
	}
	if next := first.json["next"].(map[string]any); next["kind"] != "approval" {
		t.Errorf("next: %v", next)
	}

	again := b.call(t, b.key, http.MethodPost, path, body, "Idempotency-Key", "req-1").want(t, http.StatusOK)
	if again.json["id"] != first.json["id"] || again.json["deduplicated"] != true {
		t.Errorf("replay: %s", again.body)
	}

	other := map[string]any{"action": "issue_refund", "args": refundArgs(order, 1600), "summary": "Refund $16.00"}
	reused := b.call(t, b.key, http.MethodPost, path, other, "Idempotency-Key", "req-1").want(t, http.StatusUnprocessableEntity)
	if reused.json["code"] != "idempotency_key_reused" {
		t.Errorf("same key, other request: %s", reused.body)
	}

	fresh := b.call(t, b.key, http.MethodPost, path, other, "Idempotency-Key", "req-2").want(t, http.StatusCreated)
	if fresh.json["id"] == first.json["id"] {
		t.Errorf("a new key for a new request returned the first invocation")
	}

	// While a first request with a key is still being processed, the same
	// request with the same key is a retryable conflict. The claim of a
	// request in flight is written here as the control plane writes it.
	var raw map[string]any
	argsJSON, _ := json.Marshal(refundArgs(order, 1700))
	_ = json.Unmarshal(argsJSON, &raw)
	hash := sha256.Sum256([]byte("shop\x00issue_refund\x00" + string(adapter.Canonical(raw))))
	if _, err := b.store.Pool().Exec(context.Background(), `INSERT INTO client_keys (task_id, key, request_hash, created_at) VALUES ($1, 'req-3', $2, $3)`,
		b.taskID(), hash[:], b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	busy := b.call(t, b.key, http.MethodPost, path, map[string]any{"action": "issue_refund", "args": refundArgs(order, 1700)},
		"Idempotency-Key", "req-3").want(t, http.StatusConflict)
	if busy.json["code"] != "idempotency_key_in_use" || busy.json["retryable"] != true {
		t.Errorf("same key while in flight: %s", busy.body)
	}
}

func TestAPIDedupWindow(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	order := b.damagedOrder(t)
	path := "/api/v1/tasks/" + b.taskID() + "/invocations"
	body := map[string]any{"action": "issue_refund", "args": refundArgs(order, 900), "summary": "Refund $9.00"}

	first := b.call(t, b.key, http.MethodPost, path, body).want(t, http.StatusCreated)
	b.clock.Advance(9 * time.Minute)
	same := b.call(t, b.key, http.MethodPost, path, body).want(t, http.StatusOK)
	if same.json["id"] != first.json["id"] || same.json["deduplicated"] != true {
		t.Errorf("within ten minutes: %s", same.body)
	}
	b.clock.Advance(2 * time.Minute)
	later := b.call(t, b.key, http.MethodPost, path, body).want(t, http.StatusCreated)
	if later.json["id"] == first.json["id"] || later.json["deduplicated"] != false {
		t.Errorf("after ten minutes: %s", later.body)
	}

	task := b.call(t, b.key, http.MethodGet, "/api/v1/tasks/"+b.taskID(), nil).want(t, http.StatusOK)
	if n := len(task.json["invocations"].([]any)); n != 2 {
		t.Errorf("task lists %d invocations, want 2", n)
	}
	if by := task.json["invocations_by_state"].(map[string]any); by["awaiting_approval"] != 2.0 {
		t.Errorf("invocations_by_state: %v", by)
	}
}

func TestAPIRateLimitPerKey(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	ws := web.New(web.Config{Database: b.store, Assistants: b.assistants, Metrics: b.metrics, Accounts: b.accounts, Sessions: kit.NewSessionStore(b.store, kit.SessionConfig{KeyPairs: testKey,
		Idle: time.Hour, Absolute: time.Hour, Now: b.clock.Now}), Now: b.clock.Now, Registry: b.web.Registry(), Control: b.cp, Lists: lists.New(b.store, b.clock.Now),
		APIRatePerMinute: 3})
	srv := httptest.NewServer(ws.Handler())
	t.Cleanup(srv.Close)
	_, otherKey := b.newAssistant(t, "other-bot")

	for i := range 3 {
		if res := callAPI(t, srv.URL, b.key, http.MethodGet, "/api/v1/tools", nil); res.status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i+1, res.status, res.body)
		}
	}
	res := callAPI(t, srv.URL, b.key, http.MethodGet, "/api/v1/tools", nil)
	if res.status != http.StatusTooManyRequests || res.json["code"] != "rate_limited" || res.json["retryable"] != true {
		t.Fatalf("fourth request: %d %s", res.status, res.body)
	}
	if got := res.header.Get("Retry-After"); got != "20" {
		t.Errorf("Retry-After %q, want 20 (3 a minute)", got)
	}
	// Another key has its own bucket.
	if res := callAPI(t, srv.URL, otherKey, http.MethodGet, "/api/v1/tools", nil); res.status != http.StatusOK {
		t.Errorf("another key: %d", res.status)
	}
	b.clock.Advance(20 * time.Second)
	if res := callAPI(t, srv.URL, b.key, http.MethodGet, "/api/v1/tools", nil); res.status != http.StatusOK {
		t.Errorf("after waiting Retry-After: %d %s", res.status, res.body)
	}
}

func TestAPITaskLifecycleAndConversationEvents(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	path := "/api/v1/tasks/" + b.taskID()
	v := b.task["version"].(float64)
	paused := b.call(t, b.key, http.MethodPost, path+"/pause", map[string]any{"expected_version": v}).want(t, http.StatusOK)
	if paused.json["state"] != "paused" {
		t.Fatalf("pause: %s", paused.body)
	}
	order := b.damagedOrder(t)
	refused := b.call(t, b.key, http.MethodPost, path+"/invocations", map[string]any{"action": "issue_refund", "args": refundArgs(order, 100)}).want(t, http.StatusConflict)
	if refused.json["code"] != "task_not_active" {
		t.Errorf("propose on a paused task: %s", refused.body)
	}
	resumed := b.call(t, b.key, http.MethodPost, path+"/resume", map[string]any{"expected_version": paused.json["version"]}).want(t, http.StatusOK)
	if resumed.json["state"] != "active" || resumed.json["budget_left"] != 10.0 {
		t.Errorf("resume: %s", resumed.body)
	}

	res := b.call(t, b.key, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "transactional_high", "mode": "handed_off",
		"task_id": b.taskID(), "summary": "Wants a refund above the limit for a lamp that arrived broken.",
		"facts": map[string]any{"order_id": order}, "would_propose": map[string]any{"action": "issue_refund", "args": refundArgs(order, 90000)}}).want(t, http.StatusCreated)
	if res.json["mode"] != "handed_off" {
		t.Errorf("event: %s", res.body)
	}
	var data map[string]any
	var raw []byte
	if err := b.store.Pool().QueryRow(context.Background(), `SELECT data FROM conversation_events WHERE conversation_id = 'conv-1'`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(raw, &data)
	if data["summary"] == nil || data["facts"] == nil || data["would_propose"].(map[string]any)["action"] != "issue_refund" {
		t.Errorf("event data %s lacks summary, facts or would_propose", raw)
	}
	_, otherKey := b.newAssistant(t, "other-bot")
	b.call(t, otherKey, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "informational", "mode": "answered",
		"task_id": b.taskID()}).want(t, http.StatusUnprocessableEntity)
}

func TestOpenAPIMatchesTheRouter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := callAPI(t, b.srv.URL, "", http.MethodGet, "/api/v1/openapi.json", nil)
	if res.status != http.StatusOK || res.json["openapi"] != "3.1.0" {
		t.Fatalf("openapi.json: %d %.200s", res.status, res.body)
	}
	paths := res.json["paths"].(map[string]any)
	documented := map[string]bool{}
	for p, ops := range paths {
		for method, op := range ops.(map[string]any) {
			key := strings.ToUpper(method) + " " + p
			documented[key] = true
			o := op.(map[string]any)
			if o["x-undocumented"] == true {
				t.Errorf("%s is routed but not documented: add it to apiDocs in web/api/openapi.go", key)
			}
			if o["x-no-route"] == true {
				t.Errorf("%s is documented but not routed: remove it from apiDocs or add the route", key)
			}
		}
	}
	routed := map[string]bool{}
	for _, r := range b.web.Echo().Routes() {
		rest, ok := strings.CutPrefix(r.Path, "/api/v1")
		if !ok {
			continue
		}
		segs := strings.Split(rest, "/")
		for i, s := range segs {
			if name, ok := strings.CutPrefix(s, ":"); ok {
				segs[i] = "{" + name + "}"
			}
		}
		routed[r.Method+" "+strings.Join(segs, "/")] = true
	}
	if diff := cmp.Diff(routed, documented); diff != "" {
		t.Errorf("router and OpenAPI document differ (-routed +documented):\n%s", diff)
	}
	if len(routed) < 13 {
		t.Errorf("only %d API routes found", len(routed))
	}
}

// controlplaneUser is the control-plane actor of a console user.
func controlplaneUser(u testUser) controlplane.Actor {
	return controlplane.UserActor(u.ID, string(u.Role), u.Name)
}

var matrixKeys sync.Map // *testBundle → key

// matrixKey returns a live key of an assistant made once per bundle.
func matrixKey(t *testing.T, b *testBundle) string {
	t.Helper()
	if k, ok := matrixKeys.Load(b); ok {
		return k.(string)
	}
	ab := &apiBundle{testBundle: b, asst: b.assistants}
	_, key := ab.newAssistant(t, "matrix-bot")
	matrixKeys.Store(b, key)
	return key
}

func TestAPIFollowsAWriteToItsResultAndReverses(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	ctx := context.Background()
	subs := b.call(t, b.key, http.MethodPost, "/api/v1/tools/list_subscriptions", map[string]any{"task": b.taskID()}).want(t, http.StatusOK)
	var pro string
	for _, s := range subs.json["data"].([]any) {
		if m := s.(map[string]any); m["plan"] == "Pro" {
			pro = m["subscription_id"].(string)
		}
	}
	inv := b.call(t, b.key, http.MethodPost, "/api/v1/tasks/"+b.taskID()+"/invocations", map[string]any{"action": "cancel_subscription",
		"args":    map[string]any{"subscription_id": pro, "reason_code": "too_expensive", "effective": "end_of_period"},
		"summary": "Cancel the Pro plan at the end of the period"}).want(t, http.StatusCreated)
	id := inv.json["id"].(string)
	agent := b.users[accounts.Agent]
	if _, err := b.cp.StaffDecide(ctx, controlplane.StaffDecision{Actor: controlplaneUser(agent), InvocationID: id, Verb: controlplane.StaffApprove, Version: int32(inv.json["version"].(float64)), ArgsHash: b.inv(t, id).ArgsHash}); err != nil {
		t.Fatal(err)
	}
	approved := b.call(t, b.key, http.MethodGet, "/api/v1/invocations/"+id, nil).want(t, http.StatusOK)
	if approved.json["next"].(map[string]any)["kind"] != "dispatch" || strings.Contains(approved.json["say"].(string), "Cancelled") {
		t.Errorf("approved, not yet sent: next %v, say %q", approved.json["next"], approved.json["say"])
	}
	if _, err := b.cp.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	done := b.call(t, b.key, http.MethodGet, "/api/v1/invocations/"+id, nil).want(t, http.StatusOK)
	if done.json["state"] != "completed" || done.json["next"].(map[string]any)["kind"] != "none" ||
		!strings.HasPrefix(done.json["say"].(string), "Cancelled. Reference: ") || done.json["result"] == nil {
		t.Fatalf("after dispatch: %s", done.body)
	}
	if v, _ := done.json["verification"].(map[string]any); v["verified"] != true {
		t.Errorf("verification: %v", done.json["verification"])
	}

	// Reversal needs the compensation's action turned on.
	if err := b.asst.SetAction(ctx, b.a.ID, "shop", "reinstate_subscription", false); err != nil {
		t.Fatal(err)
	}
	b.call(t, b.key, http.MethodPost, "/api/v1/invocations/"+id+"/reverse", nil).want(t, http.StatusForbidden)
	if err := b.asst.SetAction(ctx, b.a.ID, "shop", "reinstate_subscription", true); err != nil {
		t.Fatal(err)
	}
	rev := b.call(t, b.key, http.MethodPost, "/api/v1/invocations/"+id+"/reverse", nil).want(t, http.StatusCreated)
	if rev.json["action"] != "reinstate_subscription" || rev.json["state"] != "awaiting_approval" {
		t.Errorf("reverse: %s", rev.body)
	}
}

// receiveWebhooks registers a receiver as the assistant's outcome webhook
// and returns what it has been sent so far, in order.
func (b *apiBundle) receiveWebhooks(t *testing.T) func() []webhooks.Payload {
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
	admin := b.users[accounts.Admin].ID
	if _, _, err := webhooks.New(b.store, b.clock.Now, webhooks.Config{AllowPrivate: true}).Register(context.Background(), b.a.ID, &admin, recv.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	return func() []webhooks.Payload {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(posts)
	}
}
