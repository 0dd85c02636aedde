package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/web/webtest"
)

// staffDoor is one way a staff person changes something that the audit
// trail records: do makes the change as c's person, after prepare set up
// what it needs, and fails the test if the console refused it.
type staffDoor struct {
	name string
	// route is the console's POST route of the door.
	route string
	// assistant builds the stack with a keyed assistant (WithAssistant).
	assistant bool
	// stepUp: the door's events also name the approval's passkey.
	stepUp  bool
	role    accounts.Role
	prepare func(t *testing.T, b *webtest.Stack, f *webtest.Shopper) string
	do      func(t *testing.T, b *webtest.Stack, c *webtest.Client, id string)
}

// post fails t unless the console answers path's form with a redirect.
func post(t *testing.T, c *webtest.Client, path string, form url.Values) {
	t.Helper()
	if res := c.Post(path, form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST %s: %d\n%s", path, res.StatusCode, res.Text)
	}
}

func csrf(c *webtest.Client) url.Values { return url.Values{"_csrf": {c.CSRF("/")}} }

// staffDoors are every console door through which a staff person's change
// is recorded (claiming a card records no event). A door added to the
// console belongs here.
var staffDoors = []staffDoor{
	{name: "approve a card", route: "/queue/:id/approve", role: accounts.Agent,
		prepare: func(t *testing.T, _ *webtest.Stack, f *webtest.Shopper) string {
			return f.Describe(t, "Now in oak.").ID
		},
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/queue/"+id+"/approve", webtest.CardForm(t, c.Get("/queue/"+id), "approve-form"))
		}},
	{name: "approve a card with a passkey", route: "/queue/:id/step-up", role: accounts.Agent,
		prepare: func(t *testing.T, b *webtest.Stack, f *webtest.Shopper) string {
			requireStepUp(t, b, "update_product_description")
			return f.Describe(t, "Now in elm.").ID
		},
		do: approveWithPasskey, stepUp: true},
	{name: "reject a card", route: "/queue/:id/reject", role: accounts.Agent,
		prepare: func(t *testing.T, _ *webtest.Stack, f *webtest.Shopper) string { return f.Refund(t, f.Order, 800).ID },
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			form := webtest.CardForm(t, c.Get("/queue/"+id), "reject-form")
			form.Set("reason", "The amount is more than this order allows.")
			post(t, c, "/queue/"+id+"/reject", form)
		}},
	{name: "send a card back", route: "/queue/:id/send-back", role: accounts.Agent,
		prepare: func(t *testing.T, _ *webtest.Stack, f *webtest.Shopper) string { return f.Refund(t, f.Order, 800).ID },
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			form := webtest.CardForm(t, c.Get("/queue/"+id), "send-back-form")
			form.Set("question", "Which item arrived damaged?")
			post(t, c, "/queue/"+id+"/send-back", form)
		}},
	{name: "edit a card", route: "/queue/:id/edit", role: accounts.Agent,
		// The id carries the order too: the edit form needs it.
		prepare: func(t *testing.T, _ *webtest.Stack, f *webtest.Shopper) string {
			return f.Refund(t, f.Order, 800).ID + " " + f.Order.ID
		},
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, idOrder string) {
			id, order, _ := strings.Cut(idOrder, " ")
			form := webtest.CardForm(t, c.Get("/queue/"+id), "edit-form")
			form.Set("arg.order_id", order)
			form.Set("arg.reason_code", "damaged")
			form.Set("arg.amount_cents", "$7.00")
			post(t, c, "/queue/"+id+"/edit", form)
		}},
	{name: "re-quote a card", route: "/queue/:id/requote", role: accounts.Agent,
		// Another refund of the order completed after the card's quote, so
		// the card offers to quote it again.
		prepare: func(t *testing.T, b *webtest.Stack, f *webtest.Shopper) string {
			small := f.Refund(t, f.Order, 800)
			big := f.Refund(t, f.Order, 4200)
			b.Clock.Advance(time.Minute)
			f.ApproveAndDispatch(t, big)
			return small.ID
		},
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/queue/"+id+"/requote", webtest.CardForm(t, c.Get("/queue/"+id), "requote-form"))
		}},
	{name: "bulk approval", route: "/queue/bulk/approve", role: accounts.Agent,
		prepare: func(t *testing.T, _ *webtest.Stack, f *webtest.Shopper) string {
			return f.Describe(t, "Now in walnut.").ID
		},
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			confirm := c.Post("/queue/bulk", url.Values{"_csrf": {c.CSRF("/queue")}, "id": {id}})
			if confirm.StatusCode != http.StatusOK {
				t.Fatalf("bulk review: %d\n%s", confirm.StatusCode, confirm.Text)
			}
			final := url.Values{}
			confirm.Doc(t).Find(`[data-testid="bulk-confirm-form"] input`).Each(func(_ int, s *goquery.Selection) {
				final.Add(s.AttrOr("name", ""), s.AttrOr("value", ""))
			})
			post(t, c, "/queue/bulk/approve", final)
		}},
	{name: "pause a task", route: "/tasks/:id/pause", role: accounts.Agent,
		prepare: func(_ *testing.T, _ *webtest.Stack, f *webtest.Shopper) string { return f.Task.ID },
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/tasks/"+id+"/pause", csrf(c))
		}},
	{name: "resume a task", route: "/tasks/:id/resume", role: accounts.Agent,
		prepare: func(t *testing.T, b *webtest.Stack, f *webtest.Shopper) string {
			if _, err := b.Control.ChangeTask(context.Background(), controlplane.SystemActor, f.Task.ID, controlplane.TaskPause, 0); err != nil {
				t.Fatal(err)
			}
			return f.Task.ID
		},
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/tasks/"+id+"/resume", csrf(c))
		}},
	{name: "cancel a task", route: "/tasks/:id/cancel", role: accounts.Agent,
		prepare: func(_ *testing.T, _ *webtest.Stack, f *webtest.Shopper) string { return f.Task.ID },
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/tasks/"+id+"/cancel", csrf(c))
		}},
	{name: "reconcile", route: "/invocations/:id/reconcile", role: accounts.Agent,
		prepare: func(t *testing.T, b *webtest.Stack, f *webtest.Shopper) string {
			inv := f.Refund(t, f.Order, 600)
			webtest.MarkUnverified(t, b, inv.ID)
			return inv.ID
		},
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/invocations/"+id+"/reconcile", csrf(c))
		}},
	{name: "reverse", route: "/invocations/:id/reverse", role: accounts.Agent,
		prepare: func(t *testing.T, b *webtest.Stack, f *webtest.Shopper) string {
			ctx := context.Background()
			sub, err := b.Shop.CreateSubscription(ctx, demoshop.SubscriptionFixture{CustomerID: f.Customer.ID, Plan: "Pro"})
			if err != nil {
				t.Fatal(err)
			}
			inv, err := b.Control.Propose(ctx, controlplane.Proposal{TaskID: f.Task.ID, Action: "cancel_subscription",
				Args:  []byte(`{"subscription_id":"` + sub.ID + `","reason_code":"switching","effective":"end_of_period"}`),
				Actor: controlplane.AssistantActor("asst_test", "Test assistant")})
			if err != nil {
				t.Fatal(err)
			}
			f.ApproveAndDispatch(t, inv)
			return inv.ID
		},
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/invocations/"+id+"/reverse", csrf(c))
		}},
	{name: "lift a block", route: "/tasks/:id/blocks/lift", role: accounts.Agent,
		// A refusal's block on the task's order, as a policy refusal leaves it.
		prepare: func(t *testing.T, b *webtest.Stack, f *webtest.Shopper) string {
			if _, err := b.Store.Pool().Exec(context.Background(), `INSERT INTO target_blocks (task_id, customer_ref, system, target_id, action, error, created_at)
				SELECT id, customer_ref, 'shop', $2, 'issue_refund', '{"code": "outside_refund_window"}', $3 FROM tasks WHERE id = $1`, f.Task.ID, f.Order.ID, b.Now()); err != nil {
				t.Fatal(err)
			}
			return f.Task.ID + " " + f.Order.ID
		},
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, idOrder string) {
			id, order, _ := strings.Cut(idOrder, " ")
			post(t, c, "/tasks/"+id+"/blocks/lift", url.Values{"_csrf": {c.CSRF("/")}, "system": {"shop"}, "target_id": {order},
				"reason": {"The customer sent the delivery note."}})
		}},
	{name: "change a policy", route: "/policies/:system/:action", role: accounts.Manager,
		prepare: func(*testing.T, *webtest.Stack, *webtest.Shopper) string { return "" },
		do: func(t *testing.T, b *webtest.Stack, c *webtest.Client, _ string) {
			post(t, c, "/policies/shop/issue_refund", webtest.PolicyForm(b, c.CSRF("/policies/shop/issue_refund"), "1", "3", "Tighter.", "save"))
		}},
	{name: "take a hand-off", route: "/handoffs/:id/take", role: accounts.Agent,
		prepare: func(t *testing.T, b *webtest.Stack, f *webtest.Shopper) string {
			return webtest.Itoa64(webtest.InsertHandoff(t, b, f.Task.ConversationID, f.Task.ID, "transactional_high", `{"summary":"Refund."}`, b.Now()))
		},
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/handoffs/"+id+"/take", csrf(c))
		}},
	{name: "take over a hand-off", route: "/handoffs/:id/take-over", role: accounts.Manager,
		prepare: takenHandoff,
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/handoffs/"+id+"/take-over", url.Values{"_csrf": {c.CSRF("/handoffs")}, "reason": {"Away."}})
		}},
	{name: "resolve a hand-off", route: "/handoffs/:id/resolve", role: accounts.Agent,
		prepare: takenHandoff,
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/handoffs/"+id+"/resolve", url.Values{"_csrf": {c.CSRF("/handoffs")}, "note": {"Refunded by phone."}})
		}},
	{name: "give a hand-off back", route: "/handoffs/:id/give-back", role: accounts.Agent,
		prepare: takenHandoff,
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/handoffs/"+id+"/give-back", url.Values{"_csrf": {c.CSRF("/handoffs")}, "note": {"Ask them again."}})
		}},
	{name: "send a hand-off's draft", route: "/handoffs/:id/draft/send", role: accounts.Agent, assistant: true,
		prepare: takenDraft,
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			action, values := pageForm(t, c, "/handoffs/"+id, sendForm)
			post(t, c, action, values)
		}},
	{name: "discard a hand-off's draft", route: "/handoffs/:id/draft/discard", role: accounts.Agent, assistant: true,
		prepare: takenDraft,
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			action, values := pageForm(t, c, "/handoffs/"+id, discardForm)
			post(t, c, action, values)
		}},
	{name: "stop every task", route: "/controls/global-stop", role: accounts.Admin,
		prepare: func(*testing.T, *webtest.Stack, *webtest.Shopper) string { return "" },
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, _ string) {
			form := csrf(c)
			form.Set("stopped", "true")
			post(t, c, "/controls/global-stop", form)
		}},
	{name: "change an assistant's grants", route: "/admin/assistants/:id/grants", role: accounts.Admin,
		prepare: func(t *testing.T, b *webtest.Stack, _ *webtest.Shopper) string {
			a, _ := b.NewAssistant(t, "grant-bot")
			return a.ID
		},
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/admin/assistants/"+id+"/grants", url.Values{"_csrf": {c.CSRF("/admin/assistants")}, "max_write_budget": {"50"},
				"max_inflight_limit": {"4"}, "max_rate_per_minute": {"60"}, "any_customer": {"on"}})
		}},
	{name: "send a test webhook", route: "/admin/assistants/:id/webhook/test", role: accounts.Admin,
		prepare: func(t *testing.T, b *webtest.Stack, _ *webtest.Shopper) string {
			b.Assistant, _ = b.NewAssistant(t, "hook-bot")
			b.ReceiveWebhooks(t)
			return b.Assistant.ID
		},
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/admin/assistants/"+id+"/webhook/test", url.Values{"_csrf": {c.CSRF("/admin/assistants")}})
		}},
	{name: "set up an authenticator app", route: "/account/factors/totp/confirm", role: accounts.Agent,
		prepare: func(*testing.T, *webtest.Stack, *webtest.Shopper) string { return "" },
		do: func(t *testing.T, b *webtest.Stack, c *webtest.Client, _ string) {
			setUpApp(t, b, c, b.Users[accounts.Agent].Password)
		}},
	{name: "make new recovery codes", route: "/account/factors/recovery", role: accounts.Agent,
		prepare: func(*testing.T, *webtest.Stack, *webtest.Shopper) string { return "" },
		do: func(t *testing.T, b *webtest.Stack, c *webtest.Client, _ string) {
			setUpApp(t, b, c, b.Users[accounts.Agent].Password)
			if res := c.Post("/account/factors/recovery", url.Values{"_csrf": {c.CSRF("/account/factors")},
				"password": {b.Users[accounts.Agent].Password}}); res.StatusCode != http.StatusOK {
				t.Fatalf("new recovery codes: %d\n%s", res.StatusCode, res.Text)
			}
		}},
	{name: "remove an authenticator app", route: "/account/factors/totp/remove", role: accounts.Agent,
		prepare: func(*testing.T, *webtest.Stack, *webtest.Shopper) string { return "" },
		do: func(t *testing.T, b *webtest.Stack, c *webtest.Client, _ string) {
			setUpApp(t, b, c, b.Users[accounts.Agent].Password)
			post(t, c, "/account/factors/totp/remove", url.Values{"_csrf": {c.CSRF("/account/factors")},
				"password": {b.Users[accounts.Agent].Password}})
		}},
	{name: "reset someone's second factor", route: "/admin/users/:id/factors/reset", role: accounts.Admin,
		prepare: func(t *testing.T, b *webtest.Stack, _ *webtest.Shopper) string {
			agent := b.Users[accounts.Agent]
			e, err := b.Factors.StartTOTP(t.Context(), agent.User)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Factors.ConfirmTOTP(t.Context(), agent.User, controlplane.Identification{Method: "password"},
				totpCode(t, b, strings.ReplaceAll(e.Secret, " ", ""))); err != nil {
				t.Fatal(err)
			}
			return webtest.Itoa64(agent.ID)
		},
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/admin/users/"+id+"/factors/reset", url.Values{"_csrf": {c.CSRF("/admin/users")}, "confirm": {"yes"}})
		}},
	{name: "require a second factor", route: "/admin/users/factors", role: accounts.Admin,
		prepare: func(*testing.T, *webtest.Stack, *webtest.Shopper) string { return "" },
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, _ string) {
			post(t, c, "/admin/users/factors", url.Values{"_csrf": {c.CSRF("/admin/users")}, "role": {"manager"}, "required": {"false"}})
		}},
	{name: "connect a client", route: "/oauth/authorize", role: accounts.Agent,
		prepare: func(t *testing.T, b *webtest.Stack, _ *webtest.Shopper) string {
			return b.RegisterOAuthClient(t, "Door client", doorRedirect)
		},
		do: func(t *testing.T, b *webtest.Stack, c *webtest.Client, id string) {
			_, challenge := webtest.PKCE()
			c.Consent(b.AuthorizeQuery(id, doorRedirect, challenge), "self", "allow")
		}},
	{name: "say whether clients need an approval", route: "/admin/clients/settings", role: accounts.Admin,
		prepare: func(*testing.T, *webtest.Stack, *webtest.Shopper) string { return "" },
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, _ string) {
			post(t, c, "/admin/clients/settings", url.Values{"_csrf": {c.CSRF("/admin/clients")}, "need_approval": {"on"}})
		}},
	{name: "approve a client", route: "/admin/clients/approve", role: accounts.Admin,
		prepare: func(t *testing.T, b *webtest.Stack, _ *webtest.Shopper) string {
			return b.RegisterOAuthClient(t, "Door client", doorRedirect)
		},
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/admin/clients/approve", url.Values{"_csrf": {c.CSRF("/admin/clients")}, "client_id": {id}})
		}},
	{name: "revoke a client", route: "/admin/clients/revoke", role: accounts.Admin,
		prepare: func(t *testing.T, b *webtest.Stack, _ *webtest.Shopper) string {
			return b.RegisterOAuthClient(t, "Door client", doorRedirect)
		},
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/admin/clients/revoke", url.Values{"_csrf": {c.CSRF("/admin/clients")}, "client_id": {id}, "confirm": {"yes"}})
		}},
	{name: "revoke a connection", route: "/admin/grants/:id/revoke", role: accounts.Admin,
		prepare: func(t *testing.T, b *webtest.Stack, _ *webtest.Shopper) string {
			agent := b.Client(t)
			agent.MustSignIn(b.Users[accounts.Agent])
			agent.OAuthTokens("self")
			var id string
			if err := b.Store.Pool().QueryRow(context.Background(), `SELECT id FROM oauth_grants`).Scan(&id); err != nil {
				t.Fatal(err)
			}
			return id
		},
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, id string) {
			post(t, c, "/admin/grants/"+id+"/revoke", url.Values{"_csrf": {c.CSRF("/admin/clients")}, "confirm": {"yes"}})
		}},
	{name: "sign a checkpoint of the trail", route: "/admin/audit/checkpoint", role: accounts.Admin,
		prepare: func(*testing.T, *webtest.Stack, *webtest.Shopper) string { return "" },
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, _ string) {
			post(t, c, "/admin/audit/checkpoint", url.Values{"_csrf": {c.CSRF("/admin/audit")}})
		}},
	{name: "export the trail", route: "/admin/audit/export", role: accounts.Admin,
		prepare: func(*testing.T, *webtest.Stack, *webtest.Shopper) string { return "" },
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, _ string) {
			day := time.Now().UTC()
			if res := c.Post("/admin/audit/export", url.Values{"_csrf": {c.CSRF("/admin/audit")},
				"from": {day.AddDate(0, 0, -1).Format(time.DateOnly)}, "to": {day.AddDate(0, 0, 1).Format(time.DateOnly)}}); res.StatusCode != http.StatusOK {
				t.Fatalf("POST /admin/audit/export: %d\n%s", res.StatusCode, res.Text)
			}
		}},
}

// doorRedirect is the redirect URI of the doors' OAuth clients.
const doorRedirect = "http://127.0.0.1:7777/callback"

// takenHandoff is a hand-off of f's task that the agent took.
func takenHandoff(t *testing.T, b *webtest.Stack, f *webtest.Shopper) string {
	id := webtest.Itoa64(webtest.InsertHandoff(t, b, f.Task.ConversationID, f.Task.ID, "transactional_high", `{"summary":"Refund."}`, b.Now()))
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	post(t, c, "/handoffs/"+id+"/take", csrf(c))
	return id
}

// takenDraft is a hand-off with a draft refund that the agent took.
func takenDraft(t *testing.T, b *webtest.Stack, _ *webtest.Shopper) string {
	id := webtest.Itoa64(handOffDraft(t, b, "Wants $5.00 back.", b.DamagedOrder(t), 500))
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	post(t, c, "/handoffs/"+id+"/take", csrf(c))
	return id
}
