package customer_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"countersign/web/webtest"

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
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	b.StageForCustomer(t, "issue_refund")
	res := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "  Customer@Demo.Countersign.TEST ",
		"conversation_id": "conv-case", "allowed_actions": []string{"issue_refund"}}).Want(t, http.StatusCreated)
	if got := res.JSON["customer_ref"]; got != webtest.Jordan {
		t.Errorf("stored customer_ref %q, want %q", got, webtest.Jordan)
	}
	taskID := res.JSON["id"].(string)

	// The adapter resolves "walnut lamp" among this customer's orders.
	prop := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+taskID+"/invocations", map[string]any{"action": "issue_refund",
		"args": map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}}).Want(t, http.StatusCreated)
	invID := prop.JSON["id"].(string)
	if prop.JSON["state"] != string(controlplane.AwaitingConfirmation) {
		t.Fatalf("proposal %v, want awaiting confirmation\n%s", prop.JSON["state"], prop.Body)
	}

	// The customer's account, signed in with yet another spelling.
	if _, err := b.Accounts.Create(context.Background(), accounts.NewUser{Email: webtest.Jordan, Name: "Jordan Lee", Role: accounts.Customer,
		Password: "correct horse jordan"}); err != nil {
		t.Fatal(err)
	}
	c := b.Client(t)
	c.MustSignIn(webtest.User{User: accounts.User{Email: " " + strings.ToUpper(webtest.Jordan), Role: accounts.Customer},
		Password: "correct horse jordan"})
	if res := c.Get("/requests"); res.StatusCode != http.StatusOK || !strings.Contains(res.Text, "/requests/"+invID) {
		t.Errorf("My requests: %d, want the request %s listed\n%.1000s", res.StatusCode, invID, res.Text)
	}
	if res := c.Get("/requests/" + invID); res.StatusCode != http.StatusOK {
		t.Errorf("the request's page: %d, want 200", res.StatusCode)
	}

	// A link issued for a differently spelled reference opens for the
	// customer.
	link := b.Link(t, b.Invocation(t, invID), "Customer@demo.countersign.test")
	if res := c.Get(link); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/requests/"+invID {
		t.Errorf("the link: %d to %q, want 303 to the request\n%.500s", res.StatusCode, res.Header.Get("Location"), res.Text)
	}
}
