package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/accounts"
	"countersign/internal/assistants"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// shopSiteSecret is the demo shop's site secret in these tests.
var shopSiteSecret = []byte("the shop's site secret, at least 32 bytes long")

// vouchFor is the task assertion the shop's site would hand the widget,
// changed by edit.
func (b *testBundle) vouchFor(aud, customer string, edit func(*confirmation.Assertion)) string {
	now := b.clock.Now()
	a := confirmation.Assertion{Sub: customer, Sys: "shop", Aud: aud, IssuedAt: now.Unix(),
		ExpiresAt: now.Add(5 * time.Minute).Unix(), Nonce: "n-" + strings.Repeat("0", 14) + now.Format("150405.000000000")}
	if edit != nil {
		edit(&a)
	}
	return confirmation.SignTaskAssertion(shopSiteSecret, a)
}

func openTaskBody(customer, conversation, assertion string) map[string]any {
	body := map[string]any{"customer_ref": customer, "conversation_id": conversation, "allowed_actions": []string{"issue_refund"}}
	if assertion != "" {
		body["customer_assertion"] = assertion
	}
	return body
}

// TestTaskCustomerIsVouchedForByTheBusiness opens tasks as an assistant
// without the any-customer grant: only a task assertion the shop's site
// signed for this assistant and customer, unexpired and unspent, opens
// one, and only for that system.
func TestTaskCustomerIsVouchedForByTheBusiness(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withAssistant())
	b.assistants.SetSiteSecrets(map[string][]byte{"shop": shopSiteSecret})
	bot, key := b.newVouchedAssistant(t, "widget-bot")
	const customer = "customer@demo.countersign.test"
	good := b.vouchFor(bot.ID, customer, nil)

	refused := map[string]string{
		"no assertion":       "",
		"another assistant":  b.vouchFor(b.a.ID, customer, nil),
		"another customer":   b.vouchFor(bot.ID, "hannah.weiss@example.de", nil),
		"expired":            b.vouchFor(bot.ID, customer, func(a *confirmation.Assertion) { a.ExpiresAt = b.clock.Now().Add(-time.Second).Unix() }),
		"too long-lived":     b.vouchFor(bot.ID, customer, func(a *confirmation.Assertion) { a.ExpiresAt = b.clock.Now().Add(time.Hour).Unix() }),
		"unknown system":     b.vouchFor(bot.ID, customer, func(a *confirmation.Assertion) { a.Sys = "crm" }),
		"wrong secret":       confirmation.SignTaskAssertion([]byte("not the shop's secret at all, no"), confirmation.Assertion{Sub: customer, Sys: "shop", Aud: bot.ID, IssuedAt: b.clock.Now().Unix(), ExpiresAt: b.clock.Now().Add(time.Minute).Unix(), Nonce: "0123456789abcdef"}),
		"a confirmation's":   confirmation.SignAssertion(shopSiteSecret, confirmation.Assertion{Sub: customer, Sys: "shop", IssuedAt: b.clock.Now().Unix(), ExpiresAt: b.clock.Now().Add(time.Minute).Unix(), Nonce: "0123456789abcdef"}),
		"tampered":           good[:len(good)-2] + "xx",
		"a malformed string": "not.an-assertion",
	}
	for name, assertion := range refused {
		res := b.call(t, key, http.MethodPost, "/api/v1/tasks", openTaskBody(customer, "conv-"+name, assertion))
		if res.status != http.StatusForbidden || res.json["code"] != "customer_not_vouched" || res.json["hint"] == "" {
			t.Errorf("%s: %d %s, want 403 customer_not_vouched with a hint", name, res.status, res.body)
		}
	}

	// A task for two systems cannot be vouched by one system's site.
	two := openTaskBody(customer, "conv-two", good)
	two["systems"] = []string{"shop", "crm"}
	if res := b.call(t, key, http.MethodPost, "/api/v1/tasks", two); res.status != http.StatusForbidden {
		t.Errorf("a task beyond the assertion's system: %d %s", res.status, res.body)
	}

	opened := b.call(t, key, http.MethodPost, "/api/v1/tasks", openTaskBody(customer, "conv-ok", good)).want(t, http.StatusCreated)
	if diff := cmp.Diff([]any{"shop"}, opened.json["systems"]); diff != "" {
		t.Errorf("the vouched task's systems (-want +got):\n%s", diff)
	}
	events, err := b.store.EventsForTask(context.Background(), opened.json["id"].(string))
	if err != nil || len(events) == 0 {
		t.Fatalf("events: %v", err)
	}
	var data struct {
		Vouched map[string]string `json:"vouched"`
	}
	_ = json.Unmarshal(events[0].Data, &data)
	if data.Vouched["by"] != "assertion" || data.Vouched["system"] != "shop" {
		t.Errorf("task.created records the vouch as %v", data.Vouched)
	}

	// Each assertion opens one task: a replay, even for another
	// conversation, is refused.
	replay := b.call(t, key, http.MethodPost, "/api/v1/tasks", openTaskBody(customer, "conv-replay", good))
	if replay.status != http.StatusForbidden || !strings.Contains(replay.body, "used already") {
		t.Errorf("a replayed assertion: %d %s", replay.status, replay.body)
	}
	// The assistant's name stands for its id.
	byName := b.vouchFor("WIDGET-BOT", customer, func(a *confirmation.Assertion) { a.Nonce = "by-name-nonce-0123456789" })
	b.call(t, key, http.MethodPost, "/api/v1/tasks", openTaskBody(customer, "conv-name", byName)).want(t, http.StatusCreated)
}

// TestAnyCustomerGrantOpensTasksWithoutAssertion checks the admin's
// explicit grant: such an assistant opens a task for any customer, the
// event says by what right, and an assertion it does send is still
// checked.
func TestAnyCustomerGrantOpensTasksWithoutAssertion(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withAssistant()) // b.a has the grant
	b.assistants.SetSiteSecrets(map[string][]byte{"shop": shopSiteSecret})
	opened := b.call(t, b.key, http.MethodPost, "/api/v1/tasks", openTaskBody("anyone@example.test", "conv-any", "")).want(t, http.StatusCreated)
	events, _ := b.store.EventsForTask(context.Background(), opened.json["id"].(string))
	if len(events) == 0 || !strings.Contains(string(events[0].Data), `"vouched": {"by": "any_customer"}`) {
		t.Errorf("task.created does not record the grant: %v", events)
	}
	wrong := b.vouchFor(b.a.ID, "someone-else@example.test", nil)
	if res := b.call(t, b.key, http.MethodPost, "/api/v1/tasks", openTaskBody("anyone@example.test", "conv-any-2", wrong)); res.status != http.StatusForbidden {
		t.Errorf("a wrong assertion beside the grant: %d %s", res.status, res.body)
	}
}

// TestUnknownCustomerAnswersLikeAKnownOne opens a task and runs every read
// tool for a customer the shop does not know and for one it knows who has
// nothing: status and body are the same, so neither opening a task nor
// reading tells whether an address has an account.
func TestUnknownCustomerAnswersLikeAKnownOne(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withAssistant())
	const known, unknown = "known-empty@example.test", "nobody-here@example.test"
	if _, err := b.shop.CreateCustomer(context.Background(), demoshop.CustomerFixture{Email: known, Name: "Known Empty"}); err != nil {
		t.Fatal(err)
	}
	tasks := map[string]string{}
	var shapes []map[string]any
	for _, who := range []string{known, unknown} {
		res := b.call(t, b.key, http.MethodPost, "/api/v1/tasks", openTaskBody(who, "conv-"+who, "")).want(t, http.StatusCreated)
		tasks[who] = res.json["id"].(string)
		shape := map[string]any{}
		for k, v := range res.json {
			if k != "id" && k != "customer_ref" && k != "conversation_id" && k != "created_at" && k != "expires_at" {
				shape[k] = v
			}
		}
		shapes = append(shapes, shape)
	}
	if diff := cmp.Diff(shapes[0], shapes[1]); diff != "" {
		t.Errorf("opening a task answers differently (-known +unknown):\n%s", diff)
	}
	reads := map[string]map[string]any{
		"list_orders": {}, "list_subscriptions": {}, "get_order": {"order_id": "ord_0000000000"},
		"get_invoice": {"invoice_id": "in_0000000000"},
	}
	for tool, args := range reads {
		k := b.call(t, b.key, http.MethodPost, "/api/v1/tools/"+tool, map[string]any{"task": tasks[known], "system": "shop", "args": args})
		u := b.call(t, b.key, http.MethodPost, "/api/v1/tools/"+tool, map[string]any{"task": tasks[unknown], "system": "shop", "args": args})
		if k.status != u.status || k.body != u.body {
			t.Errorf("%s: known %d %s, unknown %d %s", tool, k.status, k.body, u.status, u.body)
		}
		if strings.Contains(u.body, "unknown_customer") || strings.Contains(u.body, unknown) {
			t.Errorf("%s names the unknown customer: %s", tool, u.body)
		}
	}
}

// TestTaskLimitsStayWithinTheAssistantsMaxima asks for limits above the
// assistant's maxima (refused, naming the field, the maximum and the fix),
// at them (accepted), and for none (the defaults, lowered to a maximum
// below them).
func TestTaskLimitsStayWithinTheAssistantsMaxima(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withAssistant())
	ask := func(conv string, limits map[string]any) apiResponse {
		body := openTaskBody("customer@demo.countersign.test", conv, "")
		for k, v := range limits {
			body[k] = v
		}
		return b.call(t, b.key, http.MethodPost, "/api/v1/tasks", body)
	}
	for field, over := range map[string]int{"write_budget": 21, "inflight_limit": 6, "rate_per_minute": 31} {
		res := ask("conv-over-"+field, map[string]any{field: over})
		fields, _ := res.json["fields"].(map[string]any)
		msg, _ := fields[field].(string)
		if res.status != http.StatusUnprocessableEntity || !strings.Contains(msg, "at most "+strconv.Itoa(over-1)) || !strings.Contains(msg, "/admin/assistants") {
			t.Errorf("%s=%d: %d %q", field, over, res.status, msg)
		}
	}
	at := ask("conv-at", map[string]any{"write_budget": 20, "inflight_limit": 5, "rate_per_minute": 30}).want(t, http.StatusCreated)
	if at.json["write_budget"] != 20.0 || at.json["inflight_limit"] != 5.0 || at.json["rate_per_minute"] != 30.0 {
		t.Errorf("at the maxima: %v", at.json)
	}
	def := ask("conv-default", nil).want(t, http.StatusCreated)
	if def.json["write_budget"] != 5.0 || def.json["inflight_limit"] != 2.0 || def.json["rate_per_minute"] != 10.0 {
		t.Errorf("defaults: %v", def.json)
	}
	admin := b.users[accounts.Admin]
	if _, err := b.assistants.SetGrants(context.Background(), controlplane.UserActor(admin.ID, string(admin.Role), admin.Name), b.a.ID,
		assistants.Grants{MaxWriteBudget: 3, MaxInflightLimit: 1, MaxRatePerMinute: 4, AnyCustomer: true}); err != nil {
		t.Fatal(err)
	}
	low := ask("conv-low", nil).want(t, http.StatusCreated)
	if low.json["write_budget"] != 3.0 || low.json["inflight_limit"] != 1.0 || low.json["rate_per_minute"] != 4.0 {
		t.Errorf("defaults under lower maxima: %v", low.json)
	}
	if res := ask("conv-low-over", map[string]any{"write_budget": 4}); res.status != http.StatusUnprocessableEntity {
		t.Errorf("above a lowered maximum: %d", res.status)
	}
}

// TestOneAssertionOpensOneTaskUnderARace sends one assertion in eight
// concurrent requests, each for its own conversation: its nonce is spent
// in the transaction that opens the task, so exactly one opens.
func TestOneAssertionOpensOneTaskUnderARace(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withAssistant())
	b.assistants.SetSiteSecrets(map[string][]byte{"shop": shopSiteSecret})
	bot, key := b.newVouchedAssistant(t, "race-bot")
	signed := b.vouchFor(bot.ID, "customer@demo.countersign.test", nil)
	const n = 8
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- b.call(t, key, http.MethodPost, "/api/v1/tasks",
				openTaskBody("customer@demo.countersign.test", "conv-race-"+strconv.Itoa(i), signed)).status
		}()
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[http.StatusCreated] != 1 || count[http.StatusForbidden] != n-1 {
		t.Errorf("answers %v, want one 201 and %d 403", count, n-1)
	}
}
