package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/accounts"
	"countersign/internal/assistants"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// TestTaskCustomerIsVouchedForByTheBusiness opens tasks as an assistant
// without the any-customer grant: only a task assertion the shop's site
// signed for this assistant and customer, unexpired and unspent, opens
// one, and only for that system.
func TestTaskCustomerIsVouchedForByTheBusiness(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	b.Assistants.SetSiteSecrets(map[string][]byte{"shop": webtest.ShopSiteSecret})
	bot, key := b.NewVouchedAssistant(t, "widget-bot")
	const customer = "customer@demo.countersign.test"
	good := b.VouchFor(bot.ID, customer, nil)

	refused := map[string]string{
		"no assertion":       "",
		"another assistant":  b.VouchFor(b.Assistant.ID, customer, nil),
		"another customer":   b.VouchFor(bot.ID, "hannah.weiss@example.de", nil),
		"expired":            b.VouchFor(bot.ID, customer, func(a *confirmation.Assertion) { a.ExpiresAt = b.Clock.Now().Add(-time.Second).Unix() }),
		"too long-lived":     b.VouchFor(bot.ID, customer, func(a *confirmation.Assertion) { a.ExpiresAt = b.Clock.Now().Add(time.Hour).Unix() }),
		"unknown system":     b.VouchFor(bot.ID, customer, func(a *confirmation.Assertion) { a.Sys = "crm" }),
		"with a language":    b.VouchFor(bot.ID, customer, func(a *confirmation.Assertion) { a.Locale = "fr" }),
		"wrong secret":       confirmation.SignTaskAssertion([]byte("not the shop's secret at all, no"), confirmation.Assertion{Sub: customer, Sys: "shop", Aud: bot.ID, IssuedAt: b.Clock.Now().Unix(), ExpiresAt: b.Clock.Now().Add(time.Minute).Unix(), Nonce: "0123456789abcdef"}),
		"a confirmation's":   confirmation.SignAssertion(webtest.ShopSiteSecret, confirmation.Assertion{Sub: customer, Sys: "shop", IssuedAt: b.Clock.Now().Unix(), ExpiresAt: b.Clock.Now().Add(time.Minute).Unix(), Nonce: "0123456789abcdef"}),
		"tampered":           good[:len(good)-2] + "xx",
		"a malformed string": "not.an-assertion",
	}
	for name, assertion := range refused {
		res := b.Call(t, key, http.MethodPost, "/api/v1/tasks", webtest.OpenTaskBody(customer, "conv-"+name, assertion))
		if res.Status != http.StatusForbidden || res.JSON["code"] != "customer_not_vouched" || res.JSON["hint"] == "" {
			t.Errorf("%s: %d %s, want 403 customer_not_vouched with a hint", name, res.Status, res.Body)
		}
	}

	// A task for two systems cannot be vouched by one system's site.
	two := webtest.OpenTaskBody(customer, "conv-two", good)
	two["systems"] = []string{"shop", "crm"}
	if res := b.Call(t, key, http.MethodPost, "/api/v1/tasks", two); res.Status != http.StatusForbidden {
		t.Errorf("a task beyond the assertion's system: %d %s", res.Status, res.Body)
	}

	opened := b.Call(t, key, http.MethodPost, "/api/v1/tasks", webtest.OpenTaskBody(customer, "conv-ok", good)).Want(t, http.StatusCreated)
	if diff := cmp.Diff([]any{"shop"}, opened.JSON["systems"]); diff != "" {
		t.Errorf("the vouched task's systems (-want +got):\n%s", diff)
	}
	events, err := b.Store.EventsForTask(context.Background(), opened.JSON["id"].(string))
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
	replay := b.Call(t, key, http.MethodPost, "/api/v1/tasks", webtest.OpenTaskBody(customer, "conv-replay", good))
	if replay.Status != http.StatusForbidden || !strings.Contains(replay.Body, "used already") {
		t.Errorf("a replayed assertion: %d %s", replay.Status, replay.Body)
	}
	// The assistant's name stands for its id.
	byName := b.VouchFor("WIDGET-BOT", customer, func(a *confirmation.Assertion) { a.Nonce = "by-name-nonce-0123456789" })
	b.Call(t, key, http.MethodPost, "/api/v1/tasks", webtest.OpenTaskBody(customer, "conv-name", byName)).Want(t, http.StatusCreated)
}

// TestAnyCustomerGrantOpensTasksWithoutAssertion checks the admin's
// explicit grant: such an assistant opens a task for any customer, the
// event says by what right, and an assertion it does send is still
// checked.
func TestAnyCustomerGrantOpensTasksWithoutAssertion(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant()) // b.a has the grant
	b.Assistants.SetSiteSecrets(map[string][]byte{"shop": webtest.ShopSiteSecret})
	opened := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks", webtest.OpenTaskBody("anyone@example.test", "conv-any", "")).Want(t, http.StatusCreated)
	events, _ := b.Store.EventsForTask(context.Background(), opened.JSON["id"].(string))
	if len(events) == 0 || !strings.Contains(string(events[0].Data), `"vouched": {"by": "any_customer"}`) {
		t.Errorf("task.created does not record the grant: %v", events)
	}
	wrong := b.VouchFor(b.Assistant.ID, "someone-else@example.test", nil)
	if res := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks", webtest.OpenTaskBody("anyone@example.test", "conv-any-2", wrong)); res.Status != http.StatusForbidden {
		t.Errorf("a wrong assertion beside the grant: %d %s", res.Status, res.Body)
	}
}

// TestUnknownCustomerAnswersLikeAKnownOne opens a task and runs every read
// tool for a customer the shop does not know and for one it knows who has
// nothing: status and body are the same, so neither opening a task nor
// reading tells whether an address has an account.
func TestUnknownCustomerAnswersLikeAKnownOne(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	const known, unknown = "known-empty@example.test", "nobody-here@example.test"
	if _, err := b.Shop.CreateCustomer(context.Background(), demoshop.CustomerFixture{Email: known, Name: "Known Empty"}); err != nil {
		t.Fatal(err)
	}
	tasks := map[string]string{}
	var shapes []map[string]any
	for _, who := range []string{known, unknown} {
		res := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks", webtest.OpenTaskBody(who, "conv-"+who, "")).Want(t, http.StatusCreated)
		tasks[who] = res.JSON["id"].(string)
		shape := map[string]any{}
		for k, v := range res.JSON {
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
		k := b.Call(t, b.Key, http.MethodPost, "/api/v1/tools/"+tool, map[string]any{"task": tasks[known], "system": "shop", "args": args})
		u := b.Call(t, b.Key, http.MethodPost, "/api/v1/tools/"+tool, map[string]any{"task": tasks[unknown], "system": "shop", "args": args})
		if k.Status != u.Status || k.Body != u.Body {
			t.Errorf("%s: known %d %s, unknown %d %s", tool, k.Status, k.Body, u.Status, u.Body)
		}
		if strings.Contains(u.Body, "unknown_customer") || strings.Contains(u.Body, unknown) {
			t.Errorf("%s names the unknown customer: %s", tool, u.Body)
		}
	}
}

// TestTaskLimitsStayWithinTheAssistantsMaxima asks for limits above the
// assistant's maxima (refused, naming the field, the maximum and the fix),
// at them (accepted), and for none (the defaults, lowered to a maximum
// below them).
func TestTaskLimitsStayWithinTheAssistantsMaxima(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ask := func(conv string, limits map[string]any) webtest.APIResponse {
		body := webtest.OpenTaskBody("customer@demo.countersign.test", conv, "")
		for k, v := range limits {
			body[k] = v
		}
		return b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks", body)
	}
	for field, over := range map[string]int{"write_budget": 21, "inflight_limit": 6, "rate_per_minute": 31} {
		res := ask("conv-over-"+field, map[string]any{field: over})
		fields, _ := res.JSON["fields"].(map[string]any)
		msg, _ := fields[field].(string)
		if res.Status != http.StatusUnprocessableEntity || !strings.Contains(msg, "at most "+strconv.Itoa(over-1)) || !strings.Contains(msg, "/admin/assistants") {
			t.Errorf("%s=%d: %d %q", field, over, res.Status, msg)
		}
	}
	at := ask("conv-at", map[string]any{"write_budget": 20, "inflight_limit": 5, "rate_per_minute": 30}).Want(t, http.StatusCreated)
	if at.JSON["write_budget"] != 20.0 || at.JSON["inflight_limit"] != 5.0 || at.JSON["rate_per_minute"] != 30.0 {
		t.Errorf("at the maxima: %v", at.JSON)
	}
	def := ask("conv-default", nil).Want(t, http.StatusCreated)
	if def.JSON["write_budget"] != 5.0 || def.JSON["inflight_limit"] != 2.0 || def.JSON["rate_per_minute"] != 10.0 {
		t.Errorf("defaults: %v", def.JSON)
	}
	admin := b.Users[accounts.Admin]
	if _, err := b.Assistants.SetGrants(context.Background(), controlplane.UserActor(admin.ID, string(admin.Role), admin.Name), b.Assistant.ID,
		assistants.Grants{MaxWriteBudget: 3, MaxInflightLimit: 1, MaxRatePerMinute: 4, AnyCustomer: true}); err != nil {
		t.Fatal(err)
	}
	low := ask("conv-low", nil).Want(t, http.StatusCreated)
	if low.JSON["write_budget"] != 3.0 || low.JSON["inflight_limit"] != 1.0 || low.JSON["rate_per_minute"] != 4.0 {
		t.Errorf("defaults under lower maxima: %v", low.JSON)
	}
	if res := ask("conv-low-over", map[string]any{"write_budget": 4}); res.Status != http.StatusUnprocessableEntity {
		t.Errorf("above a lowered maximum: %d", res.Status)
	}
}

// TestOneAssertionOpensOneTaskUnderARace sends one assertion in eight
// concurrent requests, each for its own conversation: its nonce is spent
// in the transaction that opens the task, so exactly one opens.
func TestOneAssertionOpensOneTaskUnderARace(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	b.Assistants.SetSiteSecrets(map[string][]byte{"shop": webtest.ShopSiteSecret})
	bot, key := b.NewVouchedAssistant(t, "race-bot")
	signed := b.VouchFor(bot.ID, "customer@demo.countersign.test", nil)
	const n = 8
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- b.Call(t, key, http.MethodPost, "/api/v1/tasks",
				webtest.OpenTaskBody("customer@demo.countersign.test", "conv-race-"+strconv.Itoa(i), signed)).Status
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
