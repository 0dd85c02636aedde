package console_test

import (
	"context"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/fakeslack"
	"countersign/store"
	"countersign/web/webtest"
)

// stepUpDoors are the ways a person of the staff approves a card without
// the console's step-up page: the card's approve form, the bulk
// approval and a click in Slack. Each posts what its page or message
// would, as the agent, for the card inv.
var stepUpDoors = []struct {
	name    string
	approve func(t *testing.T, b *webtest.Stack, c *webtest.Client, inv controlplane.Invocation)
}{
	{"console approve form", func(t *testing.T, b *webtest.Stack, c *webtest.Client, inv controlplane.Invocation) {
		c.Post("/queue/"+inv.ID+"/approve", url.Values{"_csrf": {c.CSRF("/queue/" + inv.ID)},
			"expected_version": {strconv.Itoa(int(inv.Version))}, "args_hash": {hex.EncodeToString(inv.ArgsHash)}})
	}},
	{"bulk approval", func(t *testing.T, b *webtest.Stack, c *webtest.Client, inv controlplane.Invocation) {
		c.Post("/queue/bulk/approve", url.Values{"_csrf": {c.CSRF("/queue")}, "id": {inv.ID},
			"v_" + inv.ID: {strconv.Itoa(int(inv.Version))}, "h_" + inv.ID: {hex.EncodeToString(inv.ArgsHash)}})
	}},
	{"slack approve", func(t *testing.T, b *webtest.Stack, c *webtest.Client, inv controlplane.Invocation) {
		ctx := context.Background()
		if err := b.Bot.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		sam := b.Slack.AddUser(fakeslack.User{ID: "U0SAM", Name: "Sam"})
		for _, m := range b.Slack.Messages() {
			if !strings.Contains(string(m.Blocks), inv.ID) {
				continue
			}
			click, _ := b.Slack.Click(sam, m, "approve")
			if err := b.Store.LinkSlackUser(ctx, store.SlackLink{Team: slackTeam(t, click.Body), User: sam.ID,
				UserID: b.Users[accounts.Agent].ID, How: "code", LinkedAt: b.Now()}); err != nil {
				t.Fatal(err)
			}
			if status, body, err := click.Send(b.Server.URL + "/slack/interactions"); err != nil || status != http.StatusOK {
				t.Fatalf("the click: %d %s %v", status, body, err)
			}
			return
		}
		t.Fatal("no Slack message for the card")
	}},
}

// TestNoApprovalDoorSkipsTheStepUp walks every staff approval door with
// a card whose policy asks every approval for a fresh passkey: none
// approves it (no approval event, the card still pending); the same door
// approves the card when the policy does not ask, so the walk is real.
func TestNoApprovalDoorSkipsTheStepUp(t *testing.T) {
	t.Parallel()
	for _, door := range stepUpDoors {
		for _, asks := range []bool{true, false} {
			t.Run(door.name+"/step-up "+strconv.FormatBool(asks), func(t *testing.T) {
				t.Parallel()
				b := webtest.New(t, webtest.WithShop(), webtest.WithSlack())
				f := webtest.NewShopper(t, b)
				inv := f.Describe(t, "Now in ash.")
				// Slack's message is posted before the policy asks: an
				// old message's Approve button still sends its click.
				if err := b.Bot.Sync(context.Background()); err != nil {
					t.Fatal(err)
				}
				if _, err := b.Store.Pool().Exec(context.Background(), `UPDATE policies SET step_up_every = $1 WHERE action = $2`,
					asks, inv.Action); err != nil {
					t.Fatal(err)
				}
				c := b.Client(t)
				c.MustSignIn(b.Users[accounts.Agent])
				since := lastEvent(t, b)
				door.approve(t, b, c, inv)
				var approvals int
				if err := b.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM events WHERE id > $1 AND invocation_id = $2
					AND action IN ('invocation.approved', 'invocation.first_approval')`, since, inv.ID).Scan(&approvals); err != nil {
					t.Fatal(err)
				}
				got := b.InvocationState(t, inv.ID)
				if asks && (approvals != 0 || got != controlplane.AwaitingApproval) {
					t.Fatalf("approved without step-up: %d approval events, %s", approvals, got)
				}
				if !asks && (approvals != 1 || got != controlplane.Approved) {
					t.Fatalf("the door did not approve a card that needs no step-up: %d approval events, %s", approvals, got)
				}
			})
		}
	}
}
