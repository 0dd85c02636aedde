package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// Issue 11, item 3: the guards meant for people hold whatever an assistant
// holds (its key, its MCP session, other words for the same request).

// TestAssistantCannotLiftAPersonsPause: a pause made by an agent or an
// admin is refused to the assistant's resume (403 paused_by_person with a
// hint) and lifted by a person on the task page; a pause the assistant made
// itself (MCP pause_task) it may resume.
func TestAssistantCannotLiftAPersonsPause(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	ctx := context.Background()
	id := b.taskID()
	api := "/api/v1/tasks/" + id
	version := func() float64 {
		t.Helper()
		return b.call(t, b.key, http.MethodGet, api, nil).want(t, http.StatusOK).json["version"].(float64)
	}
	state := func() string {
		t.Helper()
		return b.call(t, b.key, http.MethodGet, api, nil).want(t, http.StatusOK).json["state"].(string)
	}

	agent := b.client(t)
	agent.mustSignIn(b.users[accounts.Agent])
	tok := agent.csrf("/tasks/" + id)
	if res := agent.post("/tasks/"+id+"/pause", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("agent pause: %d\n%s", res.StatusCode, res.body)
	}
	refused := b.call(t, b.key, http.MethodPost, api+"/resume", map[string]any{"expected_version": version()}).want(t, http.StatusForbidden)
	if refused.json["code"] != "paused_by_person" || refused.json["hint"] == "" || refused.json["retryable"] != false {
		t.Errorf("assistant resuming an agent's pause: %s", refused.body)
	}
	if got := state(); got != "paused" {
		t.Fatalf("after the refused resume the task is %s", got)
	}
	// MCP offers no way around it: no tool resumes a task.
	cs, err := b.mcpSession(t, b.key, id)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if strings.Contains(tl.Name, "resume") || strings.Contains(tl.Name, "unblock") || strings.Contains(tl.Name, "lift") {
			t.Errorf("MCP offers %s", tl.Name)
		}
	}
	if res := agent.post("/tasks/"+id+"/resume", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("agent resume: %d\n%s", res.StatusCode, res.body)
	}

	// An admin's pause holds the same way.
	admin := b.users[accounts.Admin]
	if _, err := b.cp.ChangeTask(ctx, controlplane.UserActor(admin.ID, "admin", admin.Name), id, controlplane.TaskPause, 0); err != nil {
		t.Fatal(err)
	}
	b.call(t, b.key, http.MethodPost, api+"/resume", map[string]any{"expected_version": version()}).want(t, http.StatusForbidden)
	if _, err := b.cp.ChangeTask(ctx, controlplane.UserActor(admin.ID, "admin", admin.Name), id, controlplane.TaskResume, 0); err != nil {
		t.Fatal(err)
	}

	// The assistant's own pause, through MCP, it may lift.
	if got := callTool(t, cs, "pause_task", map[string]any{}); got["state"] != "paused" {
		t.Fatalf("pause_task: %v", got)
	}
	resumed := b.call(t, b.key, http.MethodPost, api+"/resume", map[string]any{"expected_version": version()}).want(t, http.StatusOK)
	if resumed.json["state"] != "active" {
		t.Errorf("assistant resuming its own pause: %s", resumed.body)
	}
}

// TestPolicyRefusalBlocksTheTargetUntilAPersonLiftsIt checks over HTTP that
// a policy refusal is not something to guess around: damaged is refused the shipping, so the same money under
// wrong_item is a second try at the same order and is refused with the
// first refusal's reason, in a new task too; the assistant has no way to lift the block; an
// agent lifts it on the task page with a reason, and the next proposal is
// dry-run again.
func TestPolicyRefusalBlocksTheTargetUntilAPersonLiftsIt(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	ctx := context.Background()
	id := b.taskID()
	order := b.damagedOrder(t)
	propose := func(cents int, reason string) apiResponse {
		t.Helper()
		return b.call(t, b.key, http.MethodPost, "/api/v1/tasks/"+id+"/invocations", map[string]any{"action": "issue_refund",
			"args": map[string]any{"order_id": order, "amount_cents": cents, "reason_code": reason}})
	}
	// $89.00 lamp + $12.00 shipping: damaged covers the lamp only.
	first := propose(10100, "damaged").want(t, http.StatusUnprocessableEntity)
	if first.json["code"] != "amount_above_refundable" || !strings.Contains(first.json["message"].(string), "Shipping isn't refunded") {
		t.Fatalf("damaged with shipping: %s", first.body)
	}
	for _, retry := range []struct {
		cents  int
		reason string
	}{{10100, "wrong_item"}, {8900, "damaged"}, {10100, "not_received"}} {
		res := propose(retry.cents, retry.reason).want(t, http.StatusConflict)
		details, _ := res.json["details"].(map[string]any)
		if res.json["code"] != "blocked_after_refusal" || details["original_code"] != "amount_above_refundable" ||
			!strings.Contains(res.json["message"].(string), "Shipping isn't refunded") {
			t.Errorf("retry %d %s: %s", retry.cents, retry.reason, res.body)
		}
	}

	// A new task of the same customer is no way around it: refused the
	// same, and its task page lists the block made in the first task.
	next := b.newTask(t, b.key, "conv-after-refusal", []string{"issue_refund"})["id"].(string)
	if res := b.call(t, b.key, http.MethodPost, "/api/v1/tasks/"+next+"/invocations", map[string]any{"action": "issue_refund",
		"args": map[string]any{"order_id": order, "amount_cents": 8900, "reason_code": "wrong_item"}}).want(t, http.StatusConflict); res.json["code"] != "blocked_after_refusal" {
		t.Errorf("retry in a new task: %s", res.body)
	}
	viewer := b.client(t)
	viewer.mustSignIn(b.users[accounts.Agent])
	if n := viewer.get("/tasks/" + next).doc(t).Find(`[data-testid="block-shop-` + order + `"]`).Length(); n != 1 {
		t.Errorf("the new task's page shows the block %d times, want 1", n)
	}

	// No route of the assistant's lifts a block, and its key opens no
	// console form.
	for _, r := range b.web.Echo().Routes() {
		if b.web.BearerRoute(r.Method, r.Path) && (strings.Contains(r.Path, "block") || strings.Contains(r.Path, "lift")) {
			t.Errorf("the assistant's API routes %s %s", r.Method, r.Path)
		}
	}
	form := url.Values{"system": {"shop"}, "target_id": {order}, "reason": {"the assistant says so"}}
	b.call(t, b.key, http.MethodPost, "/tasks/"+id+"/blocks/lift", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
	propose(10100, "wrong_item").want(t, http.StatusConflict)

	// A manager sees the block but may not lift it.
	m := b.client(t)
	m.mustSignIn(b.users[accounts.Manager])
	page := m.get("/tasks/" + id).doc(t)
	if page.Find(`[data-testid="block-shop-`+order+`"]`).Length() != 1 || page.Find(`[data-testid="lift-block-form"]`).Length() != 0 {
		t.Errorf("manager's task page: block shown %d, lift forms %d", page.Find(`[data-testid="block-shop-`+order+`"]`).Length(),
			page.Find(`[data-testid="lift-block-form"]`).Length())
	}
	if res := m.post("/tasks/"+id+"/blocks/lift", url.Values{"_csrf": {m.csrf("/tasks/" + id)}, "system": {"shop"}, "target_id": {order},
		"reason": {"managers set policy"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("manager lifting: %d, want 403", res.StatusCode)
	}

	// The agent lifts it from the page's own form; a reason is required.
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	lift := cardForm(t, c.get("/tasks/"+id), "lift-block-form")
	if lift.Get("target_id") != order || lift.Get("system") != "shop" {
		t.Fatalf("lift form for %v", lift)
	}
	res := c.post("/tasks/"+id+"/blocks/lift", lift)
	if res.StatusCode != http.StatusUnprocessableEntity || res.doc(t).Find(`[data-testid="reason-error"]`).Length() != 1 {
		t.Fatalf("lift without a reason: %d", res.StatusCode)
	}
	if ids := errorSummary(t, res.doc(t)); len(ids) != 1 || ids[0] != "lift-reason-0" {
		t.Errorf("the refused lift's error summary links to %v, want [lift-reason-0]", ids)
	}
	propose(10100, "wrong_item").want(t, http.StatusConflict)
	lift.Set("reason", "Photo shows the wrong lamp was sent; the customer returns it.")
	if res := c.post("/tasks/"+id+"/blocks/lift", lift); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("lift: %d\n%s", res.StatusCode, res.body)
	}
	var raw []byte
	if err := b.store.Pool().QueryRow(ctx, `SELECT data FROM events WHERE action = 'target.unblocked' AND task_id = $1 AND actor_kind = 'user' AND actor_id = $2`,
		id, itoa64(b.users[accounts.Agent].ID)).Scan(&raw); err != nil {
		t.Fatalf("no audit event of the lift by the agent: %v", err)
	}
	var data map[string]any
	_ = json.Unmarshal(raw, &data)
	if data["reason"] != "Photo shows the wrong lamp was sent; the customer returns it." || data["target_id"] != order {
		t.Errorf("lift event %s", raw)
	}
	if c.get("/tasks/"+id).doc(t).Find(`[data-testid="blocks"]`).Length() != 0 {
		t.Errorf("the lifted block is still listed")
	}
	propose(10100, "wrong_item").want(t, http.StatusCreated)
}

// TestConversationsBelongToOneAssistant: another assistant's events into a
// conversation answer 404 like another assistant's task, and it cannot open
// a task in it; duplicates are found per task, so a new task after a cancel
// proposes afresh.
func TestConversationsBelongToOneAssistant(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	ctx := context.Background()
	_, otherKey := b.newAssistant(t, "other-bot")
	event := map[string]any{"intent": "transactional_high", "mode": "handed_off", "summary": "Wants a refund"}

	hiddenTask := b.call(t, otherKey, http.MethodGet, "/api/v1/tasks/"+b.taskID(), nil).want(t, http.StatusNotFound)
	hidden := b.call(t, otherKey, http.MethodPost, "/api/v1/conversations/conv-1/events", event).want(t, http.StatusNotFound)
	if hidden.json["code"] != "conversation_not_found" || hidden.json["hint"] == nil || hiddenTask.json["code"] != "not_found" {
		t.Errorf("another assistant's conversation: %s (its task: %s)", hidden.body, hiddenTask.body)
	}
	res := b.call(t, otherKey, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "customer@demo.countersign.test",
		"conversation_id": "conv-1", "allowed_actions": []string{"issue_refund"}}).want(t, http.StatusUnprocessableEntity)
	if fields, _ := res.json["fields"].(map[string]any); fields["conversation_id"] == nil {
		t.Errorf("another assistant's task in conv-1: %s", res.body)
	}
	var n int
	if err := b.store.Pool().QueryRow(ctx, `SELECT count(*) FROM conversation_events WHERE conversation_id = 'conv-1'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("conv-1 has %d events (%v), want none", n, err)
	}
	b.newTask(t, otherKey, "conv-other", []string{"issue_refund"}) // a hand-off needs a task of its conversation
	b.call(t, otherKey, http.MethodPost, "/api/v1/conversations/conv-other/events", event).want(t, http.StatusCreated)
	b.call(t, b.key, http.MethodPost, "/api/v1/conversations/conv-1/events", event).want(t, http.StatusCreated)

	// The same refund in a new task of the same conversation, after the
	// first task was cancelled, is a new proposal.
	order := b.damagedOrder(t)
	body := map[string]any{"action": "issue_refund", "args": refundArgs(order, 700)}
	first := b.call(t, b.key, http.MethodPost, "/api/v1/tasks/"+b.taskID()+"/invocations", body).want(t, http.StatusCreated)
	b.call(t, b.key, http.MethodPost, "/api/v1/tasks/"+b.taskID()+"/cancel", map[string]any{"expected_version": b.task["version"]}).want(t, http.StatusOK)
	next := b.newTask(t, b.key, "conv-1", []string{"issue_refund"})
	fresh := b.call(t, b.key, http.MethodPost, "/api/v1/tasks/"+next["id"].(string)+"/invocations", body).want(t, http.StatusCreated)
	if fresh.json["id"] == first.json["id"] || fresh.json["task_id"] != next["id"] {
		t.Errorf("the new task got %s of task %s back", fresh.json["id"], fresh.json["task_id"])
	}
	again := b.call(t, b.key, http.MethodPost, "/api/v1/tasks/"+next["id"].(string)+"/invocations", body).want(t, http.StatusOK)
	if again.json["id"] != fresh.json["id"] || again.json["deduplicated"] != true {
		t.Errorf("the same request in the same task: %s", again.body)
	}
}

// TestReverseIsOfferedOnlyWhereItCanRun: a product description has no
// compensation Reverse can propose, so the task page offers none and the
// API and the console say why with 422; a cancellation offers it.
func TestReverseIsOfferedOnlyWhereItCanRun(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{shop: true})
	f := newConsoleFixture(t, b)
	ctx := context.Background()
	desc := f.describe(t, "Solid walnut, linen shade.")
	f.approveAndDispatch(t, desc)
	sub, err := b.shop.CreateSubscription(ctx, demoshop.SubscriptionFixture{CustomerID: f.cust.ID, Plan: "Pro"})
	if err != nil {
		t.Fatal(err)
	}
	cancel, err := b.cp.Propose(ctx, controlplane.Proposal{TaskID: f.task.ID, Action: "cancel_subscription",
		Args:  []byte(`{"subscription_id":"` + sub.ID + `","reason_code":"switching","effective":"end_of_period"}`),
		Actor: controlplane.AssistantActor("asst_test", "Test assistant")})
	if err != nil {
		t.Fatal(err)
	}
	f.approveAndDispatch(t, cancel)

	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	doc := c.get("/tasks/" + f.task.ID).doc(t)
	if got := b.invocation(t, desc.ID).State; got != controlplane.Completed {
		t.Fatalf("description is %s", got)
	}
	if doc.Find(`[data-testid="inv-`+desc.ID+`"] [data-testid="reverse"]`).Length() != 0 {
		t.Errorf("a product description offers Reverse")
	}
	if doc.Find(`[data-testid="inv-`+cancel.ID+`"] [data-testid="reverse"]`).Length() != 1 {
		t.Errorf("a cancellation offers no Reverse")
	}
	res := c.post("/invocations/"+desc.ID+"/reverse", url.Values{"_csrf": {c.csrf("/tasks/" + f.task.ID)}})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "update_product_description yourself") {
		t.Errorf("console reverse of a description: %d", res.StatusCode)
	}
}

// TestAPIReverseOfAnActionWithoutCompensationSaysWhy: 422 no_compensation
// with a hint, and nothing proposed.
func TestAPIReverseOfAnActionWithoutCompensationSaysWhy(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	ctx := context.Background()
	task := b.newTask(t, b.key, "conv-products", []string{"update_product_description"})
	p, err := b.shop.CreateProduct(ctx, demoshop.ProductFixture{Name: "Desk lamp", Description: "A lamp.", PriceCents: 3900, Stock: 5})
	if err != nil {
		t.Fatal(err)
	}
	inv := b.call(t, b.key, http.MethodPost, "/api/v1/tasks/"+task["id"].(string)+"/invocations", map[string]any{"action": "update_product_description",
		"args": map[string]any{"product_id": p.ID, "description": "Solid walnut."}}).want(t, http.StatusCreated)
	agent := b.users[accounts.Agent]
	if _, err := b.cp.StaffDecide(ctx, controlplane.StaffDecision{Actor: controlplaneUser(agent), InvocationID: inv.json["id"].(string), Verb: controlplane.StaffApprove, Version: 0, ArgsHash: b.inv(t, inv.json["id"].(string)).ArgsHash}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.cp.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	res := b.call(t, b.key, http.MethodPost, "/api/v1/invocations/"+inv.json["id"].(string)+"/reverse", nil).want(t, http.StatusUnprocessableEntity)
	if res.json["code"] != "no_compensation" || !strings.Contains(res.json["hint"].(string), "update_product_description") {
		t.Errorf("reverse of a description: %s", res.body)
	}
	if q := inv.json["quote"].(map[string]any); q["reversible"] != false {
		t.Errorf("the quote says reversible %v for an action Reverse refuses", q["reversible"])
	}
	all := b.call(t, b.key, http.MethodGet, "/api/v1/tasks/"+task["id"].(string), nil).want(t, http.StatusOK)
	if n := len(all.json["invocations"].([]any)); n != 1 {
		t.Errorf("the task has %d invocations after a refused reverse, want 1", n)
	}
}

// TestAPIIdempotencyKeyClaimOfACrashedRequestExpires: a claim left in
// progress (its request died between claim and bind) answers "in use"
// while it is young and is taken over by the next request with the key
// once it is older than the claim's bound (a minute).
func TestAPIIdempotencyKeyClaimOfACrashedRequestExpires(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	ctx := context.Background()
	order := b.damagedOrder(t)
	path := "/api/v1/tasks/" + b.taskID() + "/invocations"
	body := map[string]any{"action": "issue_refund", "args": refundArgs(order, 1700)}
	// The claim is written as the control plane writes it for this request.
	hash := sha256.Sum256([]byte("shop\x00issue_refund\x00" + string(adapter.Canonical(map[string]any{"order_id": order,
		"amount_cents": float64(1700), "reason_code": "damaged"}))))
	if _, err := b.store.Pool().Exec(ctx, `INSERT INTO client_keys (task_id, key, request_hash, created_at) VALUES ($1, 'crashed', $2, $3)`,
		b.taskID(), hash[:], b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(30 * time.Second)
	busy := b.call(t, b.key, http.MethodPost, path, body, "Idempotency-Key", "crashed").want(t, http.StatusConflict)
	if busy.json["code"] != "idempotency_key_in_use" {
		t.Fatalf("young claim: %s", busy.body)
	}
	b.clock.Advance(31 * time.Second)
	taken := b.call(t, b.key, http.MethodPost, path, body, "Idempotency-Key", "crashed").want(t, http.StatusCreated)
	replay := b.call(t, b.key, http.MethodPost, path, body, "Idempotency-Key", "crashed").want(t, http.StatusOK)
	if replay.json["id"] != taken.json["id"] || replay.json["deduplicated"] != true {
		t.Errorf("after the takeover the key replays %s, want %s", replay.json["id"], taken.json["id"])
	}

	// A request that died after its invocation committed: the stale claim
	// is bound to that invocation, and nothing is proposed twice.
	if _, err := b.store.Pool().Exec(ctx, `INSERT INTO client_keys (task_id, key, request_hash, created_at) VALUES ($1, 'died-late', '\x00', $2)`,
		b.taskID(), b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.Pool().Exec(ctx, `UPDATE invocations SET client_key = 'died-late' WHERE id = $1`, taken.json["id"]); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(2 * time.Minute)
	bound := b.call(t, b.key, http.MethodPost, path, map[string]any{"action": "issue_refund", "args": refundArgs(order, 1800)},
		"Idempotency-Key", "died-late").want(t, http.StatusUnprocessableEntity)
	if bound.json["code"] != "idempotency_key_reused" {
		t.Errorf("a stale claim whose request made an invocation: %s", bound.body)
	}
}

// TestPolicyPageRefusesStageFiveMoneyWithoutACeiling: 422 naming the
// field and the fix; the policy is unchanged.
func TestPolicyPageRefusesStageFiveMoneyWithoutACeiling(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{shop: true})
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Manager])
	path := "/policies/shop/issue_refund"
	form := policyForm(b, c.csrf(path), "1", "5", "Refunds are small; let them run.", "save")
	form.Set("auto_max", "")
	res := c.post(path, form)
	doc := res.doc(t)
	if res.StatusCode != http.StatusUnprocessableEntity || doc.Find(`#auto_max[aria-invalid="true"]`).Length() != 1 ||
		!strings.Contains(doc.Find(`[data-testid="auto_max-error"]`).Text(), "ceiling") {
		t.Fatalf("stage 5 refunds without a ceiling: %d\n%s", res.StatusCode, doc.Find(`[data-testid="auto_max-error"]`).Text())
	}
	if p, _ := b.cp.Policy(context.Background(), "shop", "issue_refund"); p.Version != 1 || p.Stage != controlplane.StagePropose {
		t.Errorf("the refused save changed the policy: v%d stage %d", p.Version, p.Stage)
	}
}

// TestAPIReverseTwiceReturnsTheLiveCompensation: a second reverse, after
// the ten-minute dedup window, answers 200 with the compensation already
// proposed instead of proposing another.
func TestAPIReverseTwiceReturnsTheLiveCompensation(t *testing.T) {
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
		"args": map[string]any{"subscription_id": pro, "reason_code": "too_expensive", "effective": "end_of_period"}}).want(t, http.StatusCreated)
	id := inv.json["id"].(string)
	if _, err := b.cp.StaffDecide(ctx, controlplane.StaffDecision{Actor: controlplaneUser(b.users[accounts.Agent]), InvocationID: id, Verb: controlplane.StaffApprove, Version: 0, ArgsHash: b.inv(t, id).ArgsHash}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.cp.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	first := b.call(t, b.key, http.MethodPost, "/api/v1/invocations/"+id+"/reverse", nil).want(t, http.StatusCreated)
	b.clock.Advance(11 * time.Minute)
	second := b.call(t, b.key, http.MethodPost, "/api/v1/invocations/"+id+"/reverse", nil).want(t, http.StatusOK)
	if second.json["id"] != first.json["id"] || second.json["deduplicated"] != true {
		t.Errorf("second reverse: %s, want %s deduplicated", second.json["id"], first.json["id"])
	}
}
