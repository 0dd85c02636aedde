package console_test

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/fakeslack"
	"countersign/store"
	"countersign/web/kit"
	"countersign/web/webtest"
)

// staffDoor is one way a staff person changes something that the audit
// trail records: do makes the change as c's person, after prepare set up
// what it needs, and fails the test if the console refused it.
type staffDoor struct {
	name string
	// route is the console's POST route of the door.
	route   string
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
	{name: "require a second factor", route: "/admin/users/factors", role: accounts.Admin,
		prepare: func(*testing.T, *webtest.Stack, *webtest.Shopper) string { return "" },
		do: func(t *testing.T, _ *webtest.Stack, c *webtest.Client, _ string) {
			post(t, c, "/admin/users/factors", url.Values{"_csrf": {c.CSRF("/admin/users")}, "role": {"manager"}, "required": {"false"}})
		}},
}

// takenHandoff is a hand-off of f's task that the agent took.
func takenHandoff(t *testing.T, b *webtest.Stack, f *webtest.Shopper) string {
	id := webtest.Itoa64(webtest.InsertHandoff(t, b, f.Task.ConversationID, f.Task.ID, "transactional_high", `{"summary":"Refund."}`, b.Now()))
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	post(t, c, "/handoffs/"+id+"/take", csrf(c))
	return id
}

// staffSessions are the ways a session's person was identified: set
// rewrites the signed-in session as a sign-in of that kind left it, and
// want is what the audit trail must record.
var staffSessions = []struct {
	name string
	set  map[string]any
	drop []string
	want controlplane.Identification
}{
	{name: "password", want: controlplane.Identification{Method: "password"}},
	{name: "password and an authenticator app", set: map[string]any{kit.KeyIdentifiedBy: "password+totp"},
		want: controlplane.Identification{Method: "password+totp"}},
	{name: "password and a recovery code", set: map[string]any{kit.KeyIdentifiedBy: "password+recovery"},
		want: controlplane.Identification{Method: "password+recovery"}},
	{name: "single sign-on", set: map[string]any{kit.KeyIdentifiedBy: "oidc", kit.KeyIdentityIssuer: "https://idp.example.test",
		kit.KeyIdentitySubject: "sam-0042", kit.KeySignedInUntil: time.Now().Add(24 * time.Hour).Unix()},
		want: controlplane.Identification{Method: "oidc", Issuer: "https://idp.example.test", Subject: "sam-0042"}},
	{name: "a password session from before the method was recorded", drop: []string{kit.KeyIdentifiedBy},
		want: controlplane.Identification{Method: "password"}},
	{name: "a provider's session without the method", drop: []string{kit.KeyIdentifiedBy},
		set: map[string]any{kit.KeySignedInUntil: time.Now().Add(24 * time.Hour).Unix()}, want: controlplane.Identification{Method: "unknown"}},
}

// TestEveryStaffDoorRecordsHowThePersonWasIdentified walks every staff
// door with every kind of session, and a Slack click, and checks that
// each event the change recorded names how its person was identified: a
// door that builds its actor without the session records "unknown" and
// fails here.
func TestEveryStaffDoorRecordsHowThePersonWasIdentified(t *testing.T) {
	t.Parallel()
	for _, door := range staffDoors {
		for _, s := range staffSessions {
			t.Run(door.name+"/"+s.name, func(t *testing.T) {
				t.Parallel()
				b := webtest.New(t, webtest.WithShop())
				f := webtest.NewShopper(t, b)
				id := door.prepare(t, b, f)
				u := b.Users[door.role]
				c := b.Client(t)
				c.MustSignIn(u)
				rewriteSession(t, b, u.ID, s.set, s.drop)
				since := lastEvent(t, b)
				door.do(t, b, c, id)
				checkIdentified(t, b, u.ID, since, s.want)
			})
		}
	}
	t.Run("slack click", func(t *testing.T) {
		t.Parallel()
		b := webtest.New(t, webtest.WithShop(), webtest.WithSlack())
		f := webtest.NewShopper(t, b)
		f.Describe(t, "Now in ash.")
		ctx := context.Background()
		if err := b.Bot.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		msgs := b.Slack.Messages()
		if len(msgs) != 1 {
			t.Fatalf("%d messages posted, want 1", len(msgs))
		}
		sam := b.Slack.AddUser(fakeslack.User{ID: "U0SAM", Name: "Sam"})
		u := b.Users[accounts.Agent]
		click, _ := b.Slack.Click(sam, msgs[0], "approve")
		if err := b.Store.LinkSlackUser(ctx, store.SlackLink{Team: slackTeam(t, click.Body), User: sam.ID, UserID: u.ID, How: "code", LinkedAt: b.Now()}); err != nil {
			t.Fatal(err)
		}
		since := lastEvent(t, b)
		if status, body, err := click.Send(b.Server.URL + "/slack/interactions"); err != nil || status != http.StatusOK {
			t.Fatalf("the click: %d %s %v", status, body, err)
		}
		checkIdentified(t, b, u.ID, since, controlplane.Identification{Method: "slack", Issuer: slackTeam(t, click.Body), Subject: sam.ID})
	})
}

// slackTeam is the workspace a click was made in.
func slackTeam(t *testing.T, body []byte) string {
	t.Helper()
	form, err := url.ParseQuery(string(body))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Team struct {
			ID string `json:"id"`
		} `json:"team"`
	}
	if err := json.Unmarshal([]byte(form.Get("payload")), &p); err != nil || p.Team.ID == "" {
		t.Fatalf("the click names no team: %v", err)
	}
	return p.Team.ID
}

// rewriteSession leaves every live session of userID as a sign-in that
// set set and not drop would have.
func rewriteSession(t *testing.T, b *webtest.Stack, userID int64, set map[string]any, drop []string) {
	t.Helper()
	ctx := context.Background()
	rows, err := b.Store.Pool().Query(ctx, `SELECT id_hash, data FROM sessions WHERE user_id = $1 AND revoked_at IS NULL`, userID)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ hash, data []byte }
	var live []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.hash, &r.data); err != nil {
			t.Fatal(err)
		}
		live = append(live, r)
	}
	if rows.Err() != nil || len(live) == 0 {
		t.Fatalf("no live session of user %d: %v", userID, rows.Err())
	}
	for _, r := range live {
		rewriteValues(t, b, r.hash, r.data, set, drop)
	}
}

// rewriteValues stores the session hash's values data with set set and
// drop dropped.
func rewriteValues(t *testing.T, b *webtest.Stack, hash, data []byte, set map[string]any, drop []string) {
	t.Helper()
	values := map[any]any{}
	if len(data) > 0 {
		if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&values); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range set {
		values[k] = v
	}
	for _, k := range drop {
		delete(values, k)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(values); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.Pool().Exec(context.Background(), `UPDATE sessions SET data = $2 WHERE id_hash = $1`, hash, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
}

// lastEvent is the id of the newest audit event.
func lastEvent(t *testing.T, b *webtest.Stack) int64 {
	t.Helper()
	var id int64
	if err := b.Store.Pool().QueryRow(context.Background(), `SELECT coalesce(max(id), 0) FROM events`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// checkIdentified fails t unless userID's change after event since
// recorded at least one event, each naming want as identified_by.
func checkIdentified(t *testing.T, b *webtest.Stack, userID, since int64, want controlplane.Identification) {
	t.Helper()
	rows, err := b.Store.Pool().Query(context.Background(), `SELECT action, coalesce(data->'identified_by', 'null') FROM events
		WHERE id > $1 AND actor_kind = 'user' AND actor_id = $2::bigint::text ORDER BY id`, since, userID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var action string
		var raw []byte
		if err := rows.Scan(&action, &raw); err != nil {
			t.Fatal(err)
		}
		n++
		var got controlplane.Identification
		if err := json.Unmarshal(raw, &got); err != nil || got != want {
			t.Errorf("event %s records identified_by %s, want %+v", action, raw, want)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Errorf("the change recorded no event by the person")
	}
}
