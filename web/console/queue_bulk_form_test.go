package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

func TestQueueBulkApprovesLowRiskAfterConfirmation(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop())
	f := newConsoleFixture(t, b)
	small := []controlplane.Invocation{f.describe(t, "Now in oak."), f.describe(t, "Now in walnut.")}
	big := f.refund(t, f.newOrder(t), 4200) // irreversible: not low-risk
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	res := c.get("/queue")
	bulk := cardForm(t, res, "bulk-form")
	form := url.Values{"_csrf": {bulk.Get("_csrf")}}
	res.doc(t).Find(`[data-testid="bulk-form"] input[name="id"]`).Each(func(_ int, s *goquery.Selection) {
		v, _ := s.Attr("value")
		form.Add("id", v)
	})
	form.Add("id", big.ID)
	confirm := c.post("/queue/bulk", form)
	if confirm.StatusCode != http.StatusOK {
		t.Fatalf("bulk review: %d\n%s", confirm.StatusCode, confirm.body)
	}
	if strings.Contains(confirm.body, big.ID) {
		t.Fatalf("the confirmation lists a request above the automatic limit")
	}
	final := url.Values{}
	confirm.doc(t).Find(`[data-testid="bulk-confirm-form"] input`).Each(func(_ int, s *goquery.Selection) {
		n, _ := s.Attr("name")
		v, _ := s.Attr("value")
		final.Add(n, v)
	})
	if res := c.post("/queue/bulk/approve", final); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("bulk approve: %d", res.StatusCode)
	}
	for _, inv := range small {
		if got := b.invocation(t, inv.ID).State; got != controlplane.Approved {
			t.Errorf("%s is %s after bulk approval", inv.ID, got)
		}
	}
	if got := b.invocation(t, big.ID).State; got != controlplane.AwaitingApproval {
		t.Errorf("the large refund is %s, want still pending", got)
	}
}

func TestQueueEditFormNestsObjectArgumentsInAFieldset(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop())
	f := newConsoleFixture(t, b)
	ctx := context.Background()
	if _, err := b.store.Pool().Exec(ctx, `UPDATE policies SET stage = 3, version = version + 1 WHERE action = 'change_shipping_address'`); err != nil {
		t.Fatal(err)
	}
	task, err := b.cp.CreateTask(ctx, controlplane.AssistantActor("asst_test", "Test assistant"), controlplane.NewTask{
		CustomerRef: f.cust.Email, ConversationID: fmt.Sprintf("conv-addr-%d", time.Now().UnixNano()),
		AllowedActions: []string{"change_shipping_address"}, WriteBudget: 5, InflightLimit: 1, RatePerMinute: 60,
		ExpiresAt: b.clock.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	order, err := b.shop.CreateOrder(ctx, demoshop.OrderFixture{CustomerID: f.cust.ID,
		Items: []demoshop.ItemFixture{{Name: "Walnut lamp", UnitPriceCents: 4200, Quantity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"order_id": order.ID, "address": map[string]any{"name": "Ada Buyer",
		"line1": "1 Main St", "city": "Springfield", "postal_code": "12345", "country": "US"}})
	inv, err := b.cp.Propose(ctx, controlplane.Proposal{TaskID: task.ID, Action: "change_shipping_address", Args: raw,
		Actor: controlplane.AssistantActor("asst_test", "Test assistant")})
	if err != nil {
		t.Fatal(err)
	}
	if inv.State != controlplane.AwaitingApproval {
		t.Fatalf("proposal is %s", inv.State)
	}
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	page := c.get("/queue/" + inv.ID)
	city := page.doc(t).Find(`[data-testid="edit-form"] fieldset input[name="arg.address.city"]`)
	if v, _ := city.Attr("value"); v != "Springfield" {
		t.Fatalf("no address fieldset with the city in the edit form (value %q)", v)
	}
	form := url.Values{}
	page.doc(t).Find(`[data-testid="edit-form"] input`).Each(func(_ int, s *goquery.Selection) {
		n, _ := s.Attr("name")
		v, _ := s.Attr("value")
		form.Set(n, v)
	})
	form.Set("arg.address.city", "Shelbyville")
	if res := c.post("/queue/"+inv.ID+"/edit", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit the city: %d\n%s", res.StatusCode, res.body)
	}
	diff := c.get("/queue/" + inv.ID).doc(t).Find(`[data-testid="diff"]`).Text()
	if !strings.Contains(diff, "Address city") || strings.Contains(diff, "address.city") || !strings.Contains(diff, "Shelbyville") {
		t.Fatalf("the diff does not show the city change:\n%s", diff)
	}
}
