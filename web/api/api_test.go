package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"countersign/internal/controlplane"
	"countersign/web/webtest"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
)

func TestAPICatalogFollowsTheThreeFilters(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	path := "/api/v1/tools?task=" + b.TaskID()
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

	got := webtest.ToolModes(t, b.Call(t, b.Key, http.MethodGet, path, nil).Want(t, http.StatusOK))
	want := with(map[string]string{"issue_refund": "approval", "change_shipping_address": "confirm", "resend_receipt": "auto",
		"cancel_subscription": "approval"})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("catalog of the task (-want +got):\n%s", diff)
	}

	// Without a task: every action the assistant has on.
	all := webtest.ToolModes(t, b.Call(t, b.Key, http.MethodGet, "/api/v1/tools", nil).Want(t, http.StatusOK))
	if all["update_product_description"] != "approval" || all["reinstate_subscription"] != "approval" {
		t.Errorf("catalog without a task lacks actions the task does not allow: %v", all)
	}

	// q searches names and descriptions.
	found := webtest.ToolModes(t, b.Call(t, b.Key, http.MethodGet, path+"&q=REFUND", nil).Want(t, http.StatusOK))
	if found["issue_refund"] != "approval" || found["resend_receipt"] != "" {
		t.Errorf("?q=REFUND found %v", found)
	}

	// Filter 2: the assistant turns an action off.
	if err := b.Assistants.SetAction(context.Background(), b.Assistant.ID, "shop", "issue_refund", false); err != nil {
		t.Fatal(err)
	}
	got = webtest.ToolModes(t, b.Call(t, b.Key, http.MethodGet, path, nil).Want(t, http.StatusOK))
	delete(want, "issue_refund")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after turning issue_refund off (-want +got):\n%s", diff)
	}
	res := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/invocations",
		map[string]any{"action": "issue_refund", "args": webtest.RefundArgs("ord_x", 100)}).Want(t, http.StatusForbidden)
	if res.JSON["code"] != "action_not_enabled" {
		t.Errorf("proposing a turned-off action: %s", res.Body)
	}

	// Filter 3: the policy's stage decides the mode; a disabled policy hides it.
	if _, err := b.Store.Pool().Exec(context.Background(), `UPDATE policies SET stage = 4, version = version + 1 WHERE action = 'cancel_subscription'`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.Pool().Exec(context.Background(), `UPDATE policies SET enabled = false, version = version + 1 WHERE action = 'resend_receipt'`); err != nil {
		t.Fatal(err)
	}
	got = webtest.ToolModes(t, b.Call(t, b.Key, http.MethodGet, path, nil).Want(t, http.StatusOK))
	want["cancel_subscription"] = "confirm"
	delete(want, "resend_receipt")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after the policy changes (-want +got):\n%s", diff)
	}

	// Filter 1: the business disconnects the shop.
	b.Web.Registry().Disconnect("shop")
	got = webtest.ToolModes(t, b.Call(t, b.Key, http.MethodGet, path, nil).Want(t, http.StatusOK))
	if diff := cmp.Diff(map[string]string{}, got); diff != "" {
		t.Errorf("after disconnecting the shop (-want +got):\n%s", diff)
	}
}

func TestAPIAuthenticationAndOwnership(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	taskPath := "/api/v1/tasks/" + b.TaskID()

	for name, key := range map[string]string{"no key": "", "unknown key": "csk_live_00000000000000000000000000000000", "not a key": "hunter2"} {
		res := b.Call(t, key, http.MethodGet, taskPath, nil)
		if res.Status != http.StatusUnauthorized || res.JSON["code"] == nil || res.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: %d %s (WWW-Authenticate %q), want 401 with a code", name, res.Status, res.Body, res.Header.Get("WWW-Authenticate"))
		}
	}

	// A revoked key stops at once; the assistant's other key still works.
	admin := b.Users[accounts.Admin].ID
	second, secondKey, err := b.Assistants.IssueKey(ctx, b.Assistant.ID, &admin)
	if err != nil {
		t.Fatal(err)
	}
	b.Call(t, secondKey, http.MethodGet, taskPath, nil).Want(t, http.StatusOK)
	if _, err := b.Assistants.RevokeKey(ctx, second.ID); err != nil {
		t.Fatal(err)
	}
	b.Call(t, secondKey, http.MethodGet, taskPath, nil).Want(t, http.StatusUnauthorized)
	b.Call(t, b.Key, http.MethodGet, taskPath, nil).Want(t, http.StatusOK)

	// Another assistant sees neither the task nor its invocations, and
	// cannot tell them from ids that do not exist.
	_, otherKey := b.NewAssistant(t, "other-bot")
	order := b.DamagedOrder(t)
	inv := b.Call(t, b.Key, http.MethodPost, taskPath+"/invocations", map[string]any{"action": "issue_refund",
		"args": webtest.RefundArgs(order, 1500), "summary": "Refund $15.00 for the damaged lamp"}).Want(t, http.StatusCreated)
	invPath := "/api/v1/invocations/" + inv.JSON["id"].(string)
	for _, c := range []struct{ method, path, missing string }{
		{http.MethodGet, taskPath, "/api/v1/tasks/tsk_00000000000000000000"},
		{http.MethodPost, taskPath + "/pause", "/api/v1/tasks/tsk_00000000000000000000/pause"},
		{http.MethodPost, taskPath + "/invocations", "/api/v1/tasks/tsk_00000000000000000000/invocations"},
		{http.MethodGet, invPath, "/api/v1/invocations/inv_00000000000000000000"},
		{http.MethodPost, invPath + "/reverse", "/api/v1/invocations/inv_00000000000000000000/reverse"},
		{http.MethodGet, "/api/v1/tools?task=" + b.TaskID(), "/api/v1/tools?task=tsk_00000000000000000000"},
	} {
		body := map[string]any{"expected_version": 1}
		if strings.HasSuffix(c.path, "/invocations") {
			body = map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 100)}
		}
		if c.method == http.MethodGet || strings.HasSuffix(c.path, "/reverse") {
			body = nil
		}
		theirs := b.Call(t, otherKey, c.method, c.path, body)
		missing := b.Call(t, otherKey, c.method, c.missing, body)
		if theirs.Status != http.StatusNotFound {
			t.Errorf("%s %s as another assistant: %d, want 404\n%s", c.method, c.path, theirs.Status, theirs.Body)
		}
		if diff := cmp.Diff(missing.JSON, theirs.JSON); diff != "" {
			t.Errorf("%s %s: another's object answers unlike a missing one (-missing +theirs):\n%s", c.method, c.path, diff)
		}
	}

	// A disabled assistant's keys stop working.
	if err := b.Assistants.SetDisabled(ctx, b.Assistant.ID, true); err != nil {
		t.Fatal(err)
	}
	b.Call(t, b.Key, http.MethodGet, taskPath, nil).Want(t, http.StatusUnauthorized)
}

// TestAPIErrorShapes checks every kind of error the API answers: the status,
// the code, and that the body is {code, message, retryable, hint, fields?}.
func TestAPIErrorShapes(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	taskPath := "/api/v1/tasks/" + b.TaskID()
	order := b.DamagedOrder(t)
	version := int(b.Task["version"].(float64))
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
		{"malformed JSON", b.Key, http.MethodPost, "/api/v1/tasks", `{"customer_ref":`, 400, "malformed_json", ""},
		{"not an object", b.Key, http.MethodPost, "/api/v1/tasks", `[1,2]`, 400, "malformed_json", ""},
		{"unknown field", b.Key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "x", "budget": 3}, 400, "unknown_field", "budget"},
		{"wrong type", b.Key, http.MethodPost, "/api/v1/tasks", map[string]any{"write_budget": "three"}, 422, "invalid", "write_budget"},
		{"bad time", b.Key, http.MethodPost, "/api/v1/tasks", map[string]any{"expires_at": "tomorrow"}, 422, "invalid", "expires_at"},
		{"missing fields", b.Key, http.MethodPost, "/api/v1/tasks", map[string]any{}, 422, "invalid", "customer_ref"},
		{"action not enabled for the assistant", b.Key, http.MethodPost, "/api/v1/tasks",
			map[string]any{"customer_ref": "customer@demo.countersign.test", "conversation_id": "c", "allowed_actions": []string{"launch_rocket"}}, 422, "invalid", "allowed_actions"},
		{"wrong intent enum", b.Key, http.MethodPost, "/api/v1/conversations/c1/events", map[string]any{"intent": "curious", "mode": "answered"}, 422, "invalid", "intent"},
		{"wrong mode enum", b.Key, http.MethodPost, "/api/v1/conversations/c1/events", map[string]any{"intent": "informational", "mode": "shrugged"}, 422, "invalid", "mode"},
		{"wrong argument enum", b.Key, http.MethodPost, taskPath + "/invocations",
			map[string]any{"action": "issue_refund", "args": map[string]any{"order_id": order, "amount_cents": 100, "reason_code": "whim"}}, 422, "invalid_arguments", "reason_code"},
		{"unknown argument", b.Key, http.MethodPost, taskPath + "/invocations",
			map[string]any{"action": "issue_refund", "args": map[string]any{"order_id": order, "amount_cents": 100, "reason_code": "damaged", "note": "x"}}, 422, "invalid_arguments", "note"},
		{"action not allowed by the task", b.Key, http.MethodPost, taskPath + "/invocations",
			map[string]any{"action": "update_product_description", "args": map[string]any{}}, 403, "action_not_allowed", ""},
		{"unknown task", b.Key, http.MethodGet, "/api/v1/tasks/tsk_nope", nil, 404, "not_found", ""},
		{"unknown read tool", b.Key, http.MethodPost, "/api/v1/tools/get_secrets", map[string]any{"task": b.TaskID()}, 404, "unknown_tool", ""},
		{"read without a task", b.Key, http.MethodPost, "/api/v1/tools/list_orders", map[string]any{}, 422, "invalid", "task"},
		{"stale version", b.Key, http.MethodPost, taskPath + "/pause", map[string]any{"expected_version": version + 7}, 409, "stale_version", ""},
		{"missing version", b.Key, http.MethodPost, taskPath + "/pause", map[string]any{}, 422, "invalid", "expected_version"},
		{"illegal transition", b.Key, http.MethodPost, taskPath + "/resume", map[string]any{"expected_version": version}, 409, "illegal_transition", ""},
		{"reconcile what is not unverified", b.Key, http.MethodPost, "/api/v1/invocations/" + b.ProposeRefund(t, order) + "/reconcile", nil, 409, "illegal_transition", ""},
		{"hand-off without a summary", b.Key, http.MethodPost, "/api/v1/conversations/c1/events", map[string]any{"intent": "transactional_high", "mode": "handed_off"}, 422, "invalid", "summary"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := b.Call(t, c.key, c.method, c.path, c.body)
			if res.Status != c.status || res.JSON["code"] != c.code {
				t.Fatalf("%d %v, want %d %s\n%s", res.Status, res.JSON["code"], c.status, c.code, res.Body)
			}
			for _, k := range []string{"code", "message", "retryable"} {
				if _, ok := res.JSON[k]; !ok {
					t.Errorf("error body lacks %q: %s", k, res.Body)
				}
			}
			if msg, _ := res.JSON["message"].(string); msg == "" {
				t.Errorf("empty message: %s", res.Body)
			}
			if c.field != "" {
				fields, _ := res.JSON["fields"].(map[string]any)
				if _, ok := fields[c.field]; !ok {
					t.Errorf("fields do not name %q: %s", c.field, res.Body)
				}
			}
		})
	}
}

func TestAPIIdempotencyKey(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	order := b.DamagedOrder(t)
	path := "/api/v1/tasks/" + b.TaskID() + "/invocations"
	body := map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 1500), "summary": "Refund $15.00 for the damaged lamp"}

	first := b.Call(t, b.Key, http.MethodPost, path, body, "Idempotency-Key", "req-1").Want(t, http.StatusCreated)
	if first.JSON["deduplicated"] != false || first.JSON["state"] != "awaiting_approval" {
		t.Fatalf("first answer: %s", first.Body)
	}
	for _, k := range []string{"id", "task_id", "action", "target", "state", "version", "args", "quote", "summary",
		"summary_disagrees", "idempotency_key", "deduplicated", "next", "result", "error", "say"} {
		if _, ok := first.JSON[k]; !ok {
			t.Errorf("invocation lacks %q", k)
		}
	}
	quote := first.JSON["quote"].(map[string]any)
	if quote["amount_cents"] != 1500.0 || quote["title"] == "" {
		t.Errorf("quote: %v", quote)
	}
	if next := first.JSON["next"].(map[string]any); next["kind"] != "approval" {
		t.Errorf("next: %v", next)
	}

	again := b.Call(t, b.Key, http.MethodPost, path, body, "Idempotency-Key", "req-1").Want(t, http.StatusOK)
	if again.JSON["id"] != first.JSON["id"] || again.JSON["deduplicated"] != true {
		t.Errorf("replay: %s", again.Body)
	}

	other := map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 1600), "summary": "Refund $16.00"}
	reused := b.Call(t, b.Key, http.MethodPost, path, other, "Idempotency-Key", "req-1").Want(t, http.StatusUnprocessableEntity)
	if reused.JSON["code"] != "idempotency_key_reused" {
		t.Errorf("same key, other request: %s", reused.Body)
	}

	fresh := b.Call(t, b.Key, http.MethodPost, path, other, "Idempotency-Key", "req-2").Want(t, http.StatusCreated)
	if fresh.JSON["id"] == first.JSON["id"] {
		t.Errorf("a new key for a new request returned the first invocation")
	}

	// While a first request with a key is still being processed, the same
	// request with the same key is a retryable conflict. The claim of a
	// request in flight is written here as the control plane writes it.
	var raw map[string]any
	argsJSON, _ := json.Marshal(webtest.RefundArgs(order, 1700))
	_ = json.Unmarshal(argsJSON, &raw)
	hash := sha256.Sum256([]byte("shop\x00issue_refund\x00" + string(adapter.Canonical(raw))))
	if _, err := b.Store.Pool().Exec(context.Background(), `INSERT INTO client_keys (task_id, key, request_hash, created_at) VALUES ($1, 'req-3', $2, $3)`,
		b.TaskID(), hash[:], b.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	busy := b.Call(t, b.Key, http.MethodPost, path, map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 1700)},
		"Idempotency-Key", "req-3").Want(t, http.StatusConflict)
	if busy.JSON["code"] != "idempotency_key_in_use" || busy.JSON["retryable"] != true {
		t.Errorf("same key while in flight: %s", busy.Body)
	}
}

func TestAPIDedupWindow(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	order := b.DamagedOrder(t)
	path := "/api/v1/tasks/" + b.TaskID() + "/invocations"
	body := map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 900), "summary": "Refund $9.00"}

	first := b.Call(t, b.Key, http.MethodPost, path, body).Want(t, http.StatusCreated)
	b.Clock.Advance(9 * time.Minute)
	same := b.Call(t, b.Key, http.MethodPost, path, body).Want(t, http.StatusOK)
	if same.JSON["id"] != first.JSON["id"] || same.JSON["deduplicated"] != true {
		t.Errorf("within ten minutes: %s", same.Body)
	}
	b.Clock.Advance(2 * time.Minute)
	later := b.Call(t, b.Key, http.MethodPost, path, body).Want(t, http.StatusCreated)
	if later.JSON["id"] == first.JSON["id"] || later.JSON["deduplicated"] != false {
		t.Errorf("after ten minutes: %s", later.Body)
	}

	task := b.Call(t, b.Key, http.MethodGet, "/api/v1/tasks/"+b.TaskID(), nil).Want(t, http.StatusOK)
	if n := len(task.JSON["invocations"].([]any)); n != 2 {
		t.Errorf("task lists %d invocations, want 2", n)
	}
	if by := task.JSON["invocations_by_state"].(map[string]any); by["awaiting_approval"] != 2.0 {
		t.Errorf("invocations_by_state: %v", by)
	}
}

func TestAPIRateLimitPerKey(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	srv := b.ServeAnother(t, webtest.WithAPIRate(3))
	_, otherKey := b.NewAssistant(t, "other-bot")

	for i := range 3 {
		if res := webtest.CallAPI(t, srv.URL, b.Key, http.MethodGet, "/api/v1/tools", nil); res.Status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i+1, res.Status, res.Body)
		}
	}
	res := webtest.CallAPI(t, srv.URL, b.Key, http.MethodGet, "/api/v1/tools", nil)
	if res.Status != http.StatusTooManyRequests || res.JSON["code"] != "rate_limited" || res.JSON["retryable"] != true {
		t.Fatalf("fourth request: %d %s", res.Status, res.Body)
	}
	if got := res.Header.Get("Retry-After"); got != "20" {
		t.Errorf("Retry-After %q, want 20 (3 a minute)", got)
	}
	// Another key has its own bucket.
	if res := webtest.CallAPI(t, srv.URL, otherKey, http.MethodGet, "/api/v1/tools", nil); res.Status != http.StatusOK {
		t.Errorf("another key: %d", res.Status)
	}
	b.Clock.Advance(20 * time.Second)
	if res := webtest.CallAPI(t, srv.URL, b.Key, http.MethodGet, "/api/v1/tools", nil); res.Status != http.StatusOK {
		t.Errorf("after waiting Retry-After: %d %s", res.Status, res.Body)
	}
}

func TestAPITaskLifecycleAndConversationEvents(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	path := "/api/v1/tasks/" + b.TaskID()
	v := b.Task["version"].(float64)
	paused := b.Call(t, b.Key, http.MethodPost, path+"/pause", map[string]any{"expected_version": v}).Want(t, http.StatusOK)
	if paused.JSON["state"] != "paused" {
		t.Fatalf("pause: %s", paused.Body)
	}
	order := b.DamagedOrder(t)
	refused := b.Call(t, b.Key, http.MethodPost, path+"/invocations", map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 100)}).Want(t, http.StatusConflict)
	if refused.JSON["code"] != "task_not_active" {
		t.Errorf("propose on a paused task: %s", refused.Body)
	}
	resumed := b.Call(t, b.Key, http.MethodPost, path+"/resume", map[string]any{"expected_version": paused.JSON["version"]}).Want(t, http.StatusOK)
	if resumed.JSON["state"] != "active" || resumed.JSON["budget_left"] != 10.0 {
		t.Errorf("resume: %s", resumed.Body)
	}

	res := b.Call(t, b.Key, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "transactional_high", "mode": "handed_off",
		"task_id": b.TaskID(), "summary": "Wants a refund above the limit for a lamp that arrived broken.",
		"facts": map[string]any{"order_id": order}, "would_propose": map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 90000)}}).Want(t, http.StatusCreated)
	if res.JSON["mode"] != "handed_off" {
		t.Errorf("event: %s", res.Body)
	}
	var data map[string]any
	var raw []byte
	if err := b.Store.Pool().QueryRow(context.Background(), `SELECT data FROM conversation_events WHERE conversation_id = 'conv-1'`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(raw, &data)
	if data["summary"] == nil || data["facts"] == nil || data["would_propose"].(map[string]any)["action"] != "issue_refund" {
		t.Errorf("event data %s lacks summary, facts or would_propose", raw)
	}
	_, otherKey := b.NewAssistant(t, "other-bot")
	b.Call(t, otherKey, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "informational", "mode": "answered",
		"task_id": b.TaskID()}).Want(t, http.StatusUnprocessableEntity)
}

func TestOpenAPIMatchesTheRouter(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	res := webtest.CallAPI(t, b.Server.URL, "", http.MethodGet, "/api/v1/openapi.json", nil)
	if res.Status != http.StatusOK || res.JSON["openapi"] != "3.1.0" {
		t.Fatalf("openapi.json: %d %.200s", res.Status, res.Body)
	}
	paths := res.JSON["paths"].(map[string]any)
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
	for _, r := range b.Web.Echo().Routes() {
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

func TestAPIFollowsAWriteToItsResultAndReverses(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	subs := b.Call(t, b.Key, http.MethodPost, "/api/v1/tools/list_subscriptions", map[string]any{"task": b.TaskID()}).Want(t, http.StatusOK)
	var pro string
	for _, s := range subs.JSON["data"].([]any) {
		if m := s.(map[string]any); m["plan"] == "Pro" {
			pro = m["subscription_id"].(string)
		}
	}
	inv := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/invocations", map[string]any{"action": "cancel_subscription",
		"args":    map[string]any{"subscription_id": pro, "reason_code": "too_expensive", "effective": "end_of_period"},
		"summary": "Cancel the Pro plan at the end of the period"}).Want(t, http.StatusCreated)
	id := inv.JSON["id"].(string)
	agent := b.Users[accounts.Agent]
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: agent.Actor(), InvocationID: id, Verb: controlplane.StaffApprove, Version: int32(inv.JSON["version"].(float64)), ArgsHash: b.Invocation(t, id).ArgsHash}); err != nil {
		t.Fatal(err)
	}
	approved := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id, nil).Want(t, http.StatusOK)
	if approved.JSON["next"].(map[string]any)["kind"] != "dispatch" || strings.Contains(approved.JSON["say"].(string), "Cancelled") {
		t.Errorf("approved, not yet sent: next %v, say %q", approved.JSON["next"], approved.JSON["say"])
	}
	if _, err := b.Control.Dispatch(ctx, id); err != nil {
		t.Fatal(err)
	}
	done := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id, nil).Want(t, http.StatusOK)
	if done.JSON["state"] != "completed" || done.JSON["next"].(map[string]any)["kind"] != "none" ||
		!strings.HasPrefix(done.JSON["say"].(string), "Cancelled. Reference: ") || done.JSON["result"] == nil {
		t.Fatalf("after dispatch: %s", done.Body)
	}
	if v, _ := done.JSON["verification"].(map[string]any); v["verified"] != true {
		t.Errorf("verification: %v", done.JSON["verification"])
	}

	// Reversal needs the compensation's action turned on.
	if err := b.Assistants.SetAction(ctx, b.Assistant.ID, "shop", "reinstate_subscription", false); err != nil {
		t.Fatal(err)
	}
	b.Call(t, b.Key, http.MethodPost, "/api/v1/invocations/"+id+"/reverse", nil).Want(t, http.StatusForbidden)
	if err := b.Assistants.SetAction(ctx, b.Assistant.ID, "shop", "reinstate_subscription", true); err != nil {
		t.Fatal(err)
	}
	rev := b.Call(t, b.Key, http.MethodPost, "/api/v1/invocations/"+id+"/reverse", nil).Want(t, http.StatusCreated)
	if rev.JSON["action"] != "reinstate_subscription" || rev.JSON["state"] != "awaiting_approval" {
		t.Errorf("reverse: %s", rev.Body)
	}
}
