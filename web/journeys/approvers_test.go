package journeys_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/fakeslack"
)

// approverDoor is one way a person can approve a card; approve tries it
// as role and fails the test when the door's own answer (a button shown
// or not, a status, a message) disagrees with may.
type approverDoor struct {
	name    string
	approve func(t *testing.T, role accounts.Role, inv controlplane.Invocation, may bool)
}

// setDeciders has a manager set who decides an action's cards.
func setDeciders(t *testing.T, b *webtest.Stack, action string, roles ...string) {
	t.Helper()
	ctx := context.Background()
	p, err := b.Control.Policy(ctx, "shop", action)
	if err != nil {
		t.Fatal(err)
	}
	p.ApproverRoles = roles
	m := b.Users[accounts.Manager]
	if _, err := b.Control.ChangePolicy(ctx, controlplane.UserActor(m.ID, "manager", m.Name), p, p.Version, "who decides"); err != nil {
		t.Fatal(err)
	}
}

// TestEveryDoorAsksWhoMayApprove: the console's card, bulk approval, a
// Slack button and the control plane's own call each let exactly the
// roles the action's policy lists approve: agents only by default, and
// managers too once a manager adds them; admins in neither. A door that
// refuses says so in its own way (no Approve button and 403
// role_may_not_approve; not offered for bulk; an ephemeral Slack answer;
// the error code) and the card stays waiting.
func TestEveryDoorAsksWhoMayApprove(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithSlack())
	f := webtest.NewShopper(t, b)
	ctx := context.Background()
	roles := []accounts.Role{accounts.Agent, accounts.Manager, accounts.Admin}
	clients := map[accounts.Role]*webtest.Client{}
	slackers := map[accounts.Role]fakeslack.User{}
	for _, role := range roles {
		clients[role] = b.Client(t)
		clients[role].MustSignIn(b.Users[role])
		su := b.Slack.AddUser(fakeslack.User{ID: "U0" + strings.ToUpper(string(role)), Name: string(role)})
		if _, err := b.Store.Pool().Exec(ctx, `INSERT INTO slack_links VALUES ($1, $2, $3, 'code', now())`, su.Team, su.ID, b.Users[role].ID); err != nil {
			t.Fatal(err)
		}
		slackers[role] = su
	}
	doors := []approverDoor{
		{"console card", func(t *testing.T, role accounts.Role, inv controlplane.Invocation, may bool) {
			c := clients[role]
			page := c.Get("/queue/" + inv.ID).Doc(t)
			if shown := page.Find(`[data-testid="approve"]`).Length() == 1; shown != may {
				t.Errorf("the card shows Approve to the %s: %v", role, shown)
			}
			if !may && !strings.Contains(page.Find(`[data-testid="may-not-decide"]`).Text(), "lets support agents") {
				t.Errorf("the card does not tell the %s who decides", role)
			}
			res := c.Post("/queue/"+inv.ID+"/approve", url.Values{"_csrf": {c.CSRF("/")}, "expected_version": {fmt.Sprint(inv.Version)},
				"args_hash": {hex.EncodeToString(inv.ArgsHash)}})
			if !may && (res.StatusCode != http.StatusForbidden || !strings.Contains(res.Text, "may not approve")) {
				t.Errorf("the %s's POST approve: %d, want 403 saying who may", role, res.StatusCode)
			}
		}},
		{"bulk", func(t *testing.T, role accounts.Role, inv controlplane.Invocation, may bool) {
			c := clients[role]
			offered := c.Get("/queue").Doc(t).Find(`[data-testid="bulk-form"] input[name="id"][value="`+inv.ID+`"]`).Length() == 1
			if offered != may {
				t.Errorf("the queue offers the %s the card for bulk approval: %v", role, offered)
			}
			tok := c.CSRF("/")
			listed := c.Post("/queue/bulk", url.Values{"_csrf": {tok}, "id": {inv.ID}})
			if got := listed.StatusCode == http.StatusOK; got != may {
				t.Errorf("the bulk confirmation lists it for the %s: %d", role, listed.StatusCode)
			}
			c.Post("/queue/bulk/approve", url.Values{"_csrf": {tok}, "id": {inv.ID}, "v_" + inv.ID: {fmt.Sprint(inv.Version)},
				"h_" + inv.ID: {hex.EncodeToString(inv.ArgsHash)}})
		}},
		{"slack", func(t *testing.T, role accounts.Role, inv controlplane.Invocation, may bool) {
			if err := b.Bot.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			for _, m := range b.Slack.Messages() {
				if strings.Contains(string(m.Blocks), inv.ID) {
					click, _ := b.Slack.Click(slackers[role], m, "approve")
					if status, body, err := click.Send(b.Server.URL + "/slack/interactions"); err != nil || status != http.StatusOK {
						t.Fatalf("a click: %d %s %v", status, body, err)
					}
				}
			}
			if !may {
				told := b.Slack.Ephemerals()
				if len(told) == 0 || !strings.Contains(told[len(told)-1].Text, "Only support agents") {
					t.Errorf("the %s's refused press was answered %+v", role, told)
				}
			}
		}},
		{"control plane", func(t *testing.T, role accounts.Role, inv controlplane.Invocation, may bool) {
			u := b.Users[role]
			_, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: controlplane.UserActor(u.ID, string(role), u.Name), InvocationID: inv.ID, Verb: controlplane.StaffApprove, Version: inv.Version, ArgsHash: inv.ArgsHash})
			if e, ok := apperr.As(err); !may && (!ok || e.Code != controlplane.CodeRoleMayNotApprove) {
				t.Errorf("the %s's call: %v, want %s", role, err, controlplane.CodeRoleMayNotApprove)
			}
		}},
	}
	n := 0
	for _, setting := range []struct {
		name  string
		roles []string
	}{{"default", nil}, {"managers added", []string{"agent", "manager"}}} {
		if setting.roles != nil {
			setDeciders(t, b, "update_product_description", setting.roles...)
		}
		for _, door := range doors {
			for _, role := range roles {
				n++
				may := role == accounts.Agent || (role == accounts.Manager && setting.roles != nil)
				inv := f.Describe(t, fmt.Sprintf("Walnut lamp, take %d.", n))
				t.Run(fmt.Sprintf("%s/%s/%s", setting.name, door.name, role), func(t *testing.T) {
					door.approve(t, role, inv, may)
					if got := b.InvocationState(t, inv.ID); (got == controlplane.Approved) != may {
						t.Errorf("after the %s's approval through %s the request is %s; may approve: %v", role, door.name, got, may)
					}
				})
			}
		}
	}
}
