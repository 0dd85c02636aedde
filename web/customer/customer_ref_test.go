package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
)

// TestCustomerRefIsOneCustomerWhateverTheCase opens a task over the API for
// the customer's e-mail spelled with capitals and spaces: it is stored in
// the one form, the shop adapter resolves the customer's words for it, and
// the customer's account (e-mail in lower case) sees the request on their
// own pages and opens a link issued for yet another spelling.
func TestCustomerRefIsOneCustomerWhateverTheCase(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withAssistant())
	b.stageForCustomer(t, "issue_refund")
	res := b.call(t, b.key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "  Customer@Demo.Countersign.TEST ",
		"conversation_id": "conv-case", "allowed_actions": []string{"issue_refund"}}).want(t, http.StatusCreated)
	if got := res.json["customer_ref"]; got != jordan {
		t.Errorf("stored customer_ref %q, want %q", got, jordan)
	}
	taskID := res.json["id"].(string)

	// The adapter resolves "walnut lamp" among this customer's orders.
	prop := b.call(t, b.key, http.MethodPost, "/api/v1/tasks/"+taskID+"/invocations", map[string]any{"action": "issue_refund",
		"args": map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}}).want(t, http.StatusCreated)
	invID := prop.json["id"].(string)
	if prop.json["state"] != string(controlplane.AwaitingConfirmation) {
		t.Fatalf("proposal %v, want awaiting confirmation\n%s", prop.json["state"], prop.body)
	}

	// The customer's account, signed in with yet another spelling.
	if _, err := b.accounts.Create(context.Background(), accounts.NewUser{Email: jordan, Name: "Jordan Lee", Role: accounts.Customer,
		Password: "correct horse jordan"}); err != nil {
		t.Fatal(err)
	}
	c := b.client(t)
	c.mustSignIn(testUser{User: accounts.User{Email: " " + strings.ToUpper(jordan), Role: accounts.Customer},
		Password: "correct horse jordan"})
	if res := c.get("/requests"); res.StatusCode != http.StatusOK || !strings.Contains(res.body, "/requests/"+invID) {
		t.Errorf("My requests: %d, want the request %s listed\n%.1000s", res.StatusCode, invID, res.body)
	}
	if res := c.get("/requests/" + invID); res.StatusCode != http.StatusOK {
		t.Errorf("the request's page: %d, want 200", res.StatusCode)
	}

	// A link issued for a differently spelled reference opens for the
	// customer.
	link := b.link(t, b.inv(t, invID), "Customer@demo.countersign.test")
	if res := c.get(link); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/requests/"+invID {
		t.Errorf("the link: %d to %q, want 303 to the request\n%.500s", res.StatusCode, res.Header.Get("Location"), res.body)
	}
}
