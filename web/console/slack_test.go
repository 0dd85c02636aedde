package console_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/fakeslack"
)

// TestSlackClickThroughTheConsole: Slack's interactivity URL takes a
// signed request without a session or a CSRF token, refuses one without
// Slack's signature even when it carries a signed-in agent's cookie and
// token, and links a Slack user on the agent's Slack page with the code
// the bot sent them; their click then approves.
func TestSlackClickThroughTheConsole(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithSlack())
	f := webtest.NewShopper(t, b)
	inv := f.Refund(t, f.Order, 4200)
	if err := b.Bot.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	msgs := b.Slack.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages posted, want 1", len(msgs))
	}
	sam := b.Slack.AddUser(fakeslack.User{ID: "U0SAM", Name: "Sam"})
	click, _ := b.Slack.Click(sam, msgs[0], "approve")

	agent := b.Client(t)
	agent.MustSignIn(b.Users[accounts.Agent])
	req, _ := http.NewRequest(http.MethodPost, b.Server.URL+"/slack/interactions", bytes.NewReader(click.Body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-CSRF-Token", agent.CSRF("/"))
	if res := agent.Do(req); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an unsigned click with an agent's cookie: %d, want 401\n%s", res.StatusCode, res.Text)
	}

	status, body, err := click.Send(b.Server.URL + "/slack/interactions")
	if err != nil || status != http.StatusOK {
		t.Fatalf("a signed click: %d %s %v", status, body, err)
	}
	if got := b.InvocationState(t, inv.ID); got != controlplane.AwaitingApproval {
		t.Fatalf("an unlinked user's click left the request %s", got)
	}
	dms := b.Slack.DMs()
	if len(dms) != 1 {
		t.Fatalf("direct messages %+v, want one code", dms)
	}
	_, rest, _ := strings.Cut(dms[0].Text, "*")
	code, _, _ := strings.Cut(rest, "*")

	page := agent.Get("/account/slack")
	if page.StatusCode != http.StatusOK || page.Doc(t).Find(`[data-testid="slack-link-form"]`).Length() != 1 {
		t.Fatalf("the Slack page: %d\n%s", page.StatusCode, page.Text)
	}
	wrong := agent.Post("/account/slack", url.Values{"_csrf": {agent.CSRF("/account/slack")}, "code": {"WRON-GGGG"}})
	if wrong.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a wrong code: %d, want 422", wrong.StatusCode)
	}
	if res := agent.Post("/account/slack", url.Values{"_csrf": {agent.CSRF("/account/slack")}, "code": {code}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the right code: %d\n%s", res.StatusCode, res.Text)
	}
	if links := agent.Get("/account/slack").Doc(t).Find(`[data-testid="slack-links"]`).Text(); !strings.Contains(links, sam.ID) {
		t.Errorf("the page does not list the link: %q", links)
	}

	again, _ := b.Slack.Click(sam, msgs[0], "approve")
	if status, body, err := again.Send(b.Server.URL + "/slack/interactions"); err != nil || status != http.StatusOK {
		t.Fatalf("the linked click: %d %s %v", status, body, err)
	}
	if got := b.InvocationState(t, inv.ID); got != controlplane.Approved {
		t.Fatalf("the linked agent's click left the request %s; told %+v", got, b.Slack.Ephemerals())
	}

	other := b.Client(t)
	other.MustSignIn(b.Users[accounts.Admin])
	if res := other.Post("/account/slack/unlink", url.Values{"_csrf": {other.CSRF("/account/slack")}, "team": {sam.Team}, "user": {sam.ID}}); res.StatusCode != http.StatusNotFound {
		t.Errorf("unlinking another account's Slack user: %d, want 404", res.StatusCode)
	}
	if res := agent.Post("/account/slack/unlink", url.Values{"_csrf": {agent.CSRF("/account/slack")}, "team": {sam.Team}, "user": {sam.ID}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("unlink: %d\n%s", res.StatusCode, res.Text)
	}
	if n := agent.Get("/account/slack").Doc(t).Find(`[data-testid="slack-links"]`).Length(); n != 0 {
		t.Error("the page still lists the link after unlinking")
	}
	next := f.Refund(t, f.NewOrder(t), 500)
	if err := b.Bot.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, m := range b.Slack.Messages() {
		if strings.Contains(string(m.Blocks), next.ID) {
			in, _ := b.Slack.Click(sam, m, "approve")
			_, _, _ = in.Send(b.Server.URL + "/slack/interactions")
		}
	}
	if got := b.InvocationState(t, next.ID); got != controlplane.AwaitingApproval {
		t.Errorf("after unlinking, the Slack user's click left a request %s", got)
	}
}

// TestAdminTurnsOnEmailMatch: the admin's Slack page turns linking by
// e-mail address on; an agent may not (403).
func TestAdminTurnsOnEmailMatch(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithSlack())
	agent := b.Client(t)
	agent.MustSignIn(b.Users[accounts.Agent])
	if agent.Get("/account/slack").Doc(t).Find(`[data-testid="slack-email-match"]`).Length() != 0 {
		t.Error("an agent's Slack page offers the e-mail match")
	}
	if res := agent.Post("/admin/slack/email-match", url.Values{"_csrf": {agent.CSRF("/")}, "on": {"1"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("an agent turning the e-mail match on: %d, want 403", res.StatusCode)
	}
	admin := b.Client(t)
	admin.MustSignIn(b.Users[accounts.Admin])
	if state := admin.Get("/account/slack").Doc(t).Find(`[data-testid="email-match-state"]`).Text(); !strings.HasPrefix(state, "Off") {
		t.Errorf("the e-mail match starts %q, want off", state)
	}
	if res := admin.Post("/admin/slack/email-match", url.Values{"_csrf": {admin.CSRF("/account/slack")}, "on": {"1"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the admin turning it on: %d\n%s", res.StatusCode, res.Text)
	}
	if on, err := b.Bot.EmailMatch(context.Background()); err != nil || !on {
		t.Errorf("after the admin turned it on: %v %v", on, err)
	}
}

// TestSlackPageRefusesMovingALink: a Slack user linked to an agent whose
// second code another account enters stays linked to the agent: the
// other account's Slack page answers 409 with the form, saying in the
// code field how the link moves (its owner unlinks it first), and lists
// no link.
func TestSlackPageRefusesMovingALink(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithSlack())
	f := webtest.NewShopper(t, b)
	f.Refund(t, f.Order, 4200)
	if err := b.Bot.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	sam := b.Slack.AddUser(fakeslack.User{ID: "U0SAM", Name: "Sam"})
	var codes []string
	for range 2 {
		click, _ := b.Slack.Click(sam, b.Slack.Messages()[0], "approve")
		if _, _, err := click.Send(b.Server.URL + "/slack/interactions"); err != nil {
			t.Fatal(err)
		}
		dms := b.Slack.DMs()
		_, rest, _ := strings.Cut(dms[len(dms)-1].Text, "*")
		code, _, _ := strings.Cut(rest, "*")
		codes = append(codes, code)
		b.Clock.Advance(61 * time.Second)
	}
	agent := b.Client(t)
	agent.MustSignIn(b.Users[accounts.Agent])
	if res := agent.Post("/account/slack", url.Values{"_csrf": {agent.CSRF("/account/slack")}, "code": {codes[0]}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the agent's code: %d\n%s", res.StatusCode, res.Text)
	}
	manager := b.Client(t)
	manager.MustSignIn(b.Users[accounts.Manager])
	res := manager.Post("/account/slack", url.Values{"_csrf": {manager.CSRF("/account/slack")}, "code": {codes[1]}})
	doc := res.Doc(t)
	if res.StatusCode != http.StatusConflict || !strings.Contains(doc.Find(`[data-testid="code-error"]`).Text(), "linked to another Countersign account") ||
		doc.Find(`[data-testid="slack-link-form"]`).Length() != 1 || doc.Find(`[data-testid="slack-links"]`).Length() != 0 {
		t.Fatalf("a second account's code for a linked Slack user: %d\n%s", res.StatusCode, res.Text)
	}
	if links := agent.Get("/account/slack").Doc(t).Find(`[data-testid="slack-links"]`).Text(); !strings.Contains(links, sam.ID) {
		t.Errorf("the agent's link moved: %q", links)
	}
}
