package api_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/web/webtest"
)

// TestAnOperatorsTokenNeverApprovesItsOwnProposal: a person who connects
// a client to act as themselves gets their own assistant; the tasks it
// opens name them as accountable, and what it proposes waits for another
// person: their own approval is refused, a colleague's goes through.
func TestAnOperatorsTokenNeverApprovesItsOwnProposal(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	agent := b.Users[accounts.Agent]
	c := b.Client(t)
	c.MustSignIn(agent)
	access := c.OAuthTokens("self")["access_token"].(string)

	open, err := mcpSession(t, b, access, "")
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	task := callTool(t, open, "open_task", map[string]any{"customer_ref": webtest.Jordan, "conversation_id": "own-1",
		"allowed_actions": []string{"issue_refund"}})
	cs, err := mcpSession(t, b, access, task["id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	inv := callTool(t, cs, "propose_issue_refund", map[string]any{"order_id": b.DamagedOrder(t), "amount_cents": 1500,
		"reason_code": "damaged", "summary": "Refund $15.00 for the damaged lamp", "idempotency_key": "own-1"})
	if inv["state"] != "awaiting_approval" {
		t.Fatalf("the own assistant's proposal: %v", inv)
	}
	var accountable, name string
	if err := b.Store.Pool().QueryRow(context.Background(), `SELECT data->>'accountable_user_id', data->>'actor_name' FROM events
		WHERE task_id = $1 AND action = 'task.created'`, task["id"]).Scan(&accountable, &name); err != nil {
		t.Fatal(err)
	}
	if accountable != strconv.FormatInt(agent.ID, 10) || name != agent.Name+"'s own assistant" {
		t.Errorf("task.created names %q (%q) as accountable, want the agent %d (%q)", accountable, name, agent.ID, agent.Name)
	}

	id := inv["id"].(string)
	res := c.Post("/queue/"+id+"/approve", webtest.CardForm(t, c.Get("/queue/"+id), "approve-form"))
	if res.StatusCode == http.StatusSeeOther || !strings.Contains(res.Text, "another person must approve it") {
		t.Fatalf("the operator approving their own assistant's proposal: %d\n%.600s", res.StatusCode, res.Text)
	}
	colleague := b.Client(t)
	colleague.MustSignIn(b.CreateUser(t, accounts.Agent))
	if res := colleague.Post("/queue/"+id+"/approve", webtest.CardForm(t, colleague.Get("/queue/"+id), "approve-form")); res.StatusCode != http.StatusSeeOther {
		t.Errorf("a colleague approving: %d\n%.600s", res.StatusCode, res.Text)
	}
}

// TestAnOwnAssistantTakesAnotherNameWhenItsIsTaken: an admin's assistant
// named like a person's own assistant does not stop the person from
// connecting a client as themselves.
func TestAnOwnAssistantTakesAnotherNameWhenItsIsTaken(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	agent := b.Users[accounts.Agent]
	if _, err := b.Assistants.Create(context.Background(), nil, "own-"+strconv.FormatInt(agent.ID, 10)); err != nil {
		t.Fatal(err)
	}
	c := b.Client(t)
	c.MustSignIn(agent)
	if s := mcpStatus(t, b, b.Server.URL, c.OAuthTokens("self")["access_token"].(string)); s != http.StatusOK {
		t.Errorf("the own assistant's token on /mcp: %d", s)
	}
}

// TestConnectingAgainKeepsWhatAnAdminTurnedOff: a person's own assistant
// starts with every action on; an admin may turn one off, and the
// person's next consent (connecting another client as themselves) does
// not turn it back on.
func TestConnectingAgainKeepsWhatAnAdminTurnedOff(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	ctx := context.Background()
	agent := b.Users[accounts.Agent]
	c := b.Client(t)
	c.MustSignIn(agent)
	c.OAuthTokens("self")
	own, err := b.Store.OperatorAssistant(ctx, agent.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Assistants.SetAction(ctx, own, "shop", "issue_refund", false); err != nil {
		t.Fatal(err)
	}
	c.OAuthTokens("self")
	a, err := b.Assistants.Get(ctx, own)
	if err != nil {
		t.Fatal(err)
	}
	if a.Enabled["shop/issue_refund"] {
		t.Errorf("the admin turned shop/issue_refund off for %s; the person's next consent turned it on again", a.Name)
	}
	if !a.Enabled["shop/change_shipping_address"] {
		t.Errorf("the own assistant's other actions: %v, want them on", a.Enabled)
	}
}
