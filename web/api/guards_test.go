package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

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
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	id := b.TaskID()
	api := "/api/v1/tasks/" + id
	version := func() float64 {
		t.Helper()
		return b.Call(t, b.Key, http.MethodGet, api, nil).Want(t, http.StatusOK).JSON["version"].(float64)
	}
	state := func() string {
		t.Helper()
		return b.Call(t, b.Key, http.MethodGet, api, nil).Want(t, http.StatusOK).JSON["state"].(string)
	}

	agent := b.Client(t)
	agent.MustSignIn(b.Users[accounts.Agent])
	tok := agent.CSRF("/tasks/" + id)
	if res := agent.Post("/tasks/"+id+"/pause", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("agent pause: %d\n%s", res.StatusCode, res.Text)
	}
	refused := b.Call(t, b.Key, http.MethodPost, api+"/resume", map[string]any{"expected_version": version()}).Want(t, http.StatusForbidden)
	if refused.JSON["code"] != "paused_by_person" || refused.JSON["hint"] == "" || refused.JSON["retryable"] != false {
		t.Errorf("assistant resuming an agent's pause: %s", refused.Body)
	}
	if got := state(); got != "paused" {
		t.Fatalf("after the refused resume the task is %s", got)
	}
	// MCP offers no way around it: no tool resumes a task.
	cs, err := mcpSession(t, b, b.Key, id)
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
	if res := agent.Post("/tasks/"+id+"/resume", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("agent resume: %d\n%s", res.StatusCode, res.Text)
	}

	// An admin's pause holds the same way.
	admin := b.Users[accounts.Admin]
	if _, err := b.Control.ChangeTask(ctx, controlplane.UserActor(admin.ID, "admin", admin.Name), id, controlplane.TaskPause, 0); err != nil {
		t.Fatal(err)
	}
	b.Call(t, b.Key, http.MethodPost, api+"/resume", map[string]any{"expected_version": version()}).Want(t, http.StatusForbidden)
	if _, err := b.Control.ChangeTask(ctx, controlplane.UserActor(admin.ID, "admin", admin.Name), id, controlplane.TaskResume, 0); err != nil {
		t.Fatal(err)
	}

	// The assistant's own pause, through MCP, it may lift.
	if got := callTool(t, cs, "pause_task", map[string]any{}); got["state"] != "paused" {
		t.Fatalf("pause_task: %v", got)
	}
	resumed := b.Call(t, b.Key, http.MethodPost, api+"/resume", map[string]any{"expected_version": version()}).Want(t, http.StatusOK)
	if resumed.JSON["state"] != "active" {
		t.Errorf("assistant resuming its own pause: %s", resumed.Body)
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
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	id := b.TaskID()
	order := b.DamagedOrder(t)
	propose := func(cents int, reason string) webtest.APIResponse {
		t.Helper()
		return b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+id+"/invocations", map[string]any{"action": "issue_refund",
			"args": map[string]any{"order_id": order, "amount_cents": cents, "reason_code": reason}})
	}
	// $89.00 lamp + $12.00 shipping: damaged covers the lamp only.
	first := propose(10100, "damaged").Want(t, http.StatusUnprocessableEntity)
	if first.JSON["code"] != "amount_above_refundable" || !strings.Contains(first.JSON["message"].(string), "Shipping isn't refunded") {
		t.Fatalf("damaged with shipping: %s", first.Body)
	}
	for _, retry := range []struct {
		cents  int
		reason string
	}{{10100, "wrong_item"}, {8900, "damaged"}, {10100, "not_received"}} {
		res := propose(retry.cents, retry.reason).Want(t, http.StatusConflict)
		details, _ := res.JSON["details"].(map[string]any)
		if res.JSON["code"] != "blocked_after_refusal" || details["original_code"] != "amount_above_refundable" ||
			!strings.Contains(res.JSON["message"].(string), "Shipping isn't refunded") {
			t.Errorf("retry %d %s: %s", retry.cents, retry.reason, res.Body)
		}
	}

	// A new task of the same customer is no way around it: refused the
	// same, and its task page lists the block made in the first task.
	next := b.NewTask(t, b.Key, "conv-after-refusal", []string{"issue_refund"})["id"].(string)
	if res := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+next+"/invocations", map[string]any{"action": "issue_refund",
		"args": map[string]any{"order_id": order, "amount_cents": 8900, "reason_code": "wrong_item"}}).Want(t, http.StatusConflict); res.JSON["code"] != "blocked_after_refusal" {
		t.Errorf("retry in a new task: %s", res.Body)
	}
	viewer := b.Client(t)
	viewer.MustSignIn(b.Users[accounts.Agent])
	if n := viewer.Get("/tasks/" + next).Doc(t).Find(`[data-testid="block-shop-` + order + `"]`).Length(); n != 1 {
		t.Errorf("the new task's page shows the block %d times, want 1", n)
	}

	// No route of the assistant's lifts a block, and its key opens no
	// console form.
	for _, r := range b.Web.Echo().Routes() {
		if b.Web.BearerRoute(r.Method, r.Path) && (strings.Contains(r.Path, "block") || strings.Contains(r.Path, "lift")) {
			t.Errorf("the assistant's API routes %s %s", r.Method, r.Path)
		}
	}
	form := url.Values{"system": {"shop"}, "target_id": {order}, "reason": {"the assistant says so"}}
	b.Call(t, b.Key, http.MethodPost, "/tasks/"+id+"/blocks/lift", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
	propose(10100, "wrong_item").Want(t, http.StatusConflict)

	// A manager sees the block but may not lift it.
	m := b.Client(t)
	m.MustSignIn(b.Users[accounts.Manager])
	page := m.Get("/tasks/" + id).Doc(t)
	if page.Find(`[data-testid="block-shop-`+order+`"]`).Length() != 1 || page.Find(`[data-testid="lift-block-form"]`).Length() != 0 {
		t.Errorf("manager's task page: block shown %d, lift forms %d", page.Find(`[data-testid="block-shop-`+order+`"]`).Length(),
			page.Find(`[data-testid="lift-block-form"]`).Length())
	}
	if res := m.Post("/tasks/"+id+"/blocks/lift", url.Values{"_csrf": {m.CSRF("/tasks/" + id)}, "system": {"shop"}, "target_id": {order},
		"reason": {"managers set policy"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("manager lifting: %d, want 403", res.StatusCode)
	}

	// The agent lifts it from the page's own form; a reason is required.
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	lift := webtest.CardForm(t, c.Get("/tasks/"+id), "lift-block-form")
	if lift.Get("target_id") != order || lift.Get("system") != "shop" {
		t.Fatalf("lift form for %v", lift)
	}
	res := c.Post("/tasks/"+id+"/blocks/lift", lift)
	if res.StatusCode != http.StatusUnprocessableEntity || res.Doc(t).Find(`[data-testid="reason-error"]`).Length() != 1 {
		t.Fatalf("lift without a reason: %d", res.StatusCode)
	}
	if ids := webtest.ErrorSummary(t, res.Doc(t)); len(ids) != 1 || ids[0] != "lift-reason-0" {
		t.Errorf("the refused lift's error summary links to %v, want [lift-reason-0]", ids)
	}
	propose(10100, "wrong_item").Want(t, http.StatusConflict)
	lift.Set("reason", "Photo shows the wrong lamp was sent; the customer returns it.")
	if res := c.Post("/tasks/"+id+"/blocks/lift", lift); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("lift: %d\n%s", res.StatusCode, res.Text)
	}
	var raw []byte
	if err := b.Store.Pool().QueryRow(ctx, `SELECT data FROM events WHERE action = 'target.unblocked' AND task_id = $1 AND actor_kind = 'user' AND actor_id = $2`,
		id, webtest.Itoa64(b.Users[accounts.Agent].ID)).Scan(&raw); err != nil {
		t.Fatalf("no audit event of the lift by the agent: %v", err)
	}
	var data map[string]any
	_ = json.Unmarshal(raw, &data)
	if data["reason"] != "Photo shows the wrong lamp was sent; the customer returns it." || data["target_id"] != order {
		t.Errorf("lift event %s", raw)
	}
	if c.Get("/tasks/"+id).Doc(t).Find(`[data-testid="blocks"]`).Length() != 0 {
		t.Errorf("the lifted block is still listed")
	}
	propose(10100, "wrong_item").Want(t, http.StatusCreated)
}

// TestConversationsBelongToOneAssistant: another assistant's events into a
// conversation answer 404 like another assistant's task, and it cannot open
// a task in it; duplicates are found per task, so a new task after a cancel
// proposes afresh.
func TestConversationsBelongToOneAssistant(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	_, otherKey := b.NewAssistant(t, "other-bot")
	event := map[string]any{"intent": "transactional_high", "mode": "handed_off", "summary": "Wants a refund"}

	hiddenTask := b.Call(t, otherKey, http.MethodGet, "/api/v1/tasks/"+b.TaskID(), nil).Want(t, http.StatusNotFound)
	hidden := b.Call(t, otherKey, http.MethodPost, "/api/v1/conversations/conv-1/events", event).Want(t, http.StatusNotFound)
	if hidden.JSON["code"] != "conversation_not_found" || hidden.JSON["hint"] == nil || hiddenTask.JSON["code"] != "not_found" {
		t.Errorf("another assistant's conversation: %s (its task: %s)", hidden.Body, hiddenTask.Body)
	}
	res := b.Call(t, otherKey, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "customer@demo.countersign.test",
		"conversation_id": "conv-1", "allowed_actions": []string{"issue_refund"}}).Want(t, http.StatusUnprocessableEntity)
	if fields, _ := res.JSON["fields"].(map[string]any); fields["conversation_id"] == nil {
		t.Errorf("another assistant's task in conv-1: %s", res.Body)
	}
	var n int
	if err := b.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM conversation_events WHERE conversation_id = 'conv-1'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("conv-1 has %d events (%v), want none", n, err)
	}
	b.NewTask(t, otherKey, "conv-other", []string{"issue_refund"}) // a hand-off needs a task of its conversation
	b.Call(t, otherKey, http.MethodPost, "/api/v1/conversations/conv-other/events", event).Want(t, http.StatusCreated)
	b.Call(t, b.Key, http.MethodPost, "/api/v1/conversations/conv-1/events", event).Want(t, http.StatusCreated)

	// The same refund in a new task of the same conversation, after the
	// first task was cancelled, is a new proposal.
	order := b.DamagedOrder(t)
	body := map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 700)}
	first := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/invocations", body).Want(t, http.StatusCreated)
	b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/cancel", map[string]any{"expected_version": b.Task["version"]}).Want(t, http.StatusOK)
	next := b.NewTask(t, b.Key, "conv-1", []string{"issue_refund"})
	fresh := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+next["id"].(string)+"/invocations", body).Want(t, http.StatusCreated)
	if fresh.JSON["id"] == first.JSON["id"] || fresh.JSON["task_id"] != next["id"] {
		t.Errorf("the new task got %s of task %s back", fresh.JSON["id"], fresh.JSON["task_id"])
	}
	again := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+next["id"].(string)+"/invocations", body).Want(t, http.StatusOK)
	if again.JSON["id"] != fresh.JSON["id"] || again.JSON["deduplicated"] != true {
		t.Errorf("the same request in the same task: %s", again.Body)
	}
}

// TestReverseIsOfferedOnlyWhereItCanRun: a product description has no
// compensation Reverse can propose, so the task page offers none and the
// API and the console say why with 422; a cancellation offers it.
func TestReverseIsOfferedOnlyWhereItCanRun(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	ctx := context.Background()
	desc := f.Describe(t, "Solid walnut, linen shade.")
	f.ApproveAndDispatch(t, desc)
	sub, err := b.Shop.CreateSubscription(ctx, demoshop.SubscriptionFixture{CustomerID: f.Customer.ID, Plan: "Pro"})
	if err != nil {
		t.Fatal(err)
	}
	cancel, err := b.Control.Propose(ctx, controlplane.Proposal{TaskID: f.Task.ID, Action: "cancel_subscription",
		Args:  []byte(`{"subscription_id":"` + sub.ID + `","reason_code":"switching","effective":"end_of_period"}`),
		Actor: controlplane.AssistantActor("asst_test", "Test assistant")})
	if err != nil {
		t.Fatal(err)
	}
	f.ApproveAndDispatch(t, cancel)

	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	doc := c.Get("/tasks/" + f.Task.ID).Doc(t)
	if got := b.Invocation(t, desc.ID).State; got != controlplane.Completed {
		t.Fatalf("description is %s", got)
	}
	if doc.Find(`[data-testid="inv-`+desc.ID+`"] [data-testid="reverse"]`).Length() != 0 {
		t.Errorf("a product description offers Reverse")
	}
	if doc.Find(`[data-testid="inv-`+cancel.ID+`"] [data-testid="reverse"]`).Length() != 1 {
		t.Errorf("a cancellation offers no Reverse")
	}
	res := c.Post("/invocations/"+desc.ID+"/reverse", url.Values{"_csrf": {c.CSRF("/tasks/" + f.Task.ID)}})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.Text, "update_product_description yourself") {
		t.Errorf("console reverse of a description: %d", res.StatusCode)
	}
}

// TestAPIReverseOfAnActionWithoutCompensationSaysWhy: 422 no_compensation
// with a hint, and nothing proposed.
func TestAPIReverseOfAnActionWithoutCompensationSaysWhy(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	task := b.NewTask(t, b.Key, "conv-products", []string{"update_product_description"})
	p, err := b.Shop.CreateProduct(ctx, demoshop.ProductFixture{Name: "Desk lamp", Description: "A lamp.", PriceCents: 3900, Stock: 5})
	if err != nil {
		t.Fatal(err)
	}
	inv := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+task["id"].(string)+"/invocations", map[string]any{"action": "update_product_description",
		"args": map[string]any{"product_id": p.ID, "description": "Solid walnut."}}).Want(t, http.StatusCreated)
	agent := b.Users[accounts.Agent]
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: agent.Actor(), InvocationID: inv.JSON["id"].(string), Verb: controlplane.StaffApprove, Version: 0, ArgsHash: b.Invocation(t, inv.JSON["id"].(string)).ArgsHash}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Control.Dispatch(ctx, inv.JSON["id"].(string)); err != nil {
		t.Fatal(err)
	}
	res := b.Call(t, b.Key, http.MethodPost, "/api/v1/invocations/"+inv.JSON["id"].(string)+"/reverse", nil).Want(t, http.StatusUnprocessableEntity)
	if res.JSON["code"] != "no_compensation" || !strings.Contains(res.JSON["hint"].(string), "update_product_description") {
		t.Errorf("reverse of a description: %s", res.Body)
	}
	if q := inv.JSON["quote"].(map[string]any); q["reversible"] != false {
		t.Errorf("the quote says reversible %v for an action Reverse refuses", q["reversible"])
	}
	all := b.Call(t, b.Key, http.MethodGet, "/api/v1/tasks/"+task["id"].(string), nil).Want(t, http.StatusOK)
	if n := len(all.JSON["invocations"].([]any)); n != 1 {
		t.Errorf("the task has %d invocations after a refused reverse, want 1", n)
	}
}

// TestAPIIdempotencyKeyClaimOfACrashedRequestExpires: a claim left in
// progress (its request died between claim and bind) answers "in use"
// while it is young and is taken over by the next request with the key
// once it is older than the claim's bound (a minute).
func TestAPIIdempotencyKeyClaimOfACrashedRequestExpires(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	order := b.DamagedOrder(t)
	path := "/api/v1/tasks/" + b.TaskID() + "/invocations"
	body := map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 1700)}
	// The claim is written as the control plane writes it for this request.
	hash := sha256.Sum256([]byte("shop\x00issue_refund\x00" + string(adapter.Canonical(map[string]any{"order_id": order,
		"amount_cents": float64(1700), "reason_code": "damaged"}))))
	if _, err := b.Store.Pool().Exec(ctx, `INSERT INTO client_keys (task_id, key, request_hash, created_at) VALUES ($1, 'crashed', $2, $3)`,
		b.TaskID(), hash[:], b.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	b.Clock.Advance(30 * time.Second)
	busy := b.Call(t, b.Key, http.MethodPost, path, body, "Idempotency-Key", "crashed").Want(t, http.StatusConflict)
	if busy.JSON["code"] != "idempotency_key_in_use" {
		t.Fatalf("young claim: %s", busy.Body)
	}
	b.Clock.Advance(31 * time.Second)
	taken := b.Call(t, b.Key, http.MethodPost, path, body, "Idempotency-Key", "crashed").Want(t, http.StatusCreated)
	replay := b.Call(t, b.Key, http.MethodPost, path, body, "Idempotency-Key", "crashed").Want(t, http.StatusOK)
	if replay.JSON["id"] != taken.JSON["id"] || replay.JSON["deduplicated"] != true {
		t.Errorf("after the takeover the key replays %s, want %s", replay.JSON["id"], taken.JSON["id"])
	}

	// A request that died after its invocation committed: the stale claim
	// is bound to that invocation, and nothing is proposed twice.
	if _, err := b.Store.Pool().Exec(ctx, `INSERT INTO client_keys (task_id, key, request_hash, created_at) VALUES ($1, 'died-late', '\x00', $2)`,
		b.TaskID(), b.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.Pool().Exec(ctx, `UPDATE invocations SET client_key = 'died-late' WHERE id = $1`, taken.JSON["id"]); err != nil {
		t.Fatal(err)
	}
	b.Clock.Advance(2 * time.Minute)
	bound := b.Call(t, b.Key, http.MethodPost, path, map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 1800)},
		"Idempotency-Key", "died-late").Want(t, http.StatusUnprocessableEntity)
	if bound.JSON["code"] != "idempotency_key_reused" {
		t.Errorf("a stale claim whose request made an invocation: %s", bound.Body)
	}
}

// TestPolicyPageRefusesStageFiveMoneyWithoutACeiling: 422 naming the
// field and the fix; the policy is unchanged.
func TestPolicyPageRefusesStageFiveMoneyWithoutACeiling(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])
	path := "/policies/shop/issue_refund"
	form := webtest.PolicyForm(b, c.CSRF(path), "1", "5", "Refunds are small; let them run.", "save")
	form.Set("auto_max", "")
	res := c.Post(path, form)
	doc := res.Doc(t)
	if res.StatusCode != http.StatusUnprocessableEntity || doc.Find(`#auto_max[aria-invalid="true"]`).Length() != 1 ||
		!strings.Contains(doc.Find(`[data-testid="auto_max-error"]`).Text(), "ceiling") {
		t.Fatalf("stage 5 refunds without a ceiling: %d\n%s", res.StatusCode, doc.Find(`[data-testid="auto_max-error"]`).Text())
	}
	if p, _ := b.Control.Policy(context.Background(), "shop", "issue_refund"); p.Version != 1 || p.Stage != controlplane.StagePropose {
		t.Errorf("the refused save changed the policy: v%d stage %d", p.Version, p.Stage)
	}
}

// TestAPIReverseTwiceReturnsTheLiveCompensation: a second reverse, after
// the ten-minute dedup window, answers 200 with the compensation already
// proposed instead of proposing another.
func TestAPIReverseTwiceReturnsTheLiveCompensation(t *testing.T) {
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
		"args": map[string]any{"subscription_id": pro, "reason_code": "too_expensive", "effective": "end_of_period"}}).Want(t, http.StatusCreated)
	id := inv.JSON["id"].(string)
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: b.Users[accounts.Agent].Actor(), InvocationID: id, Verb: controlplane.StaffApprove, Version: 0, ArgsHash: b.Invocation(t, id).ArgsHash}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Control.Dispatch(ctx, id); err != nil {
		t.Fatal(err)
	}
	first := b.Call(t, b.Key, http.MethodPost, "/api/v1/invocations/"+id+"/reverse", nil).Want(t, http.StatusCreated)
	b.Clock.Advance(11 * time.Minute)
	second := b.Call(t, b.Key, http.MethodPost, "/api/v1/invocations/"+id+"/reverse", nil).Want(t, http.StatusOK)
	if second.JSON["id"] != first.JSON["id"] || second.JSON["deduplicated"] != true {
		t.Errorf("second reverse: %s, want %s deduplicated", second.JSON["id"], first.JSON["id"])
	}
}
