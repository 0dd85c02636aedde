package web_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

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
	b := setup(t, withShop(), withSlack())
	f := newConsoleFixture(t, b)
	inv := f.refund(t, f.order, 4200)
	if err := b.bot.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	msgs := b.slack.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages posted, want 1", len(msgs))
	}
	sam := b.slack.AddUser(fakeslack.User{ID: "U0SAM", Name: "Sam"})
	click, _ := b.slack.Click(sam, msgs[0], "approve")

	agent := b.client(t)
	agent.mustSignIn(b.users[accounts.Agent])
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/slack/interactions", bytes.NewReader(click.Body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-CSRF-Token", agent.csrf("/"))
	if res := agent.do(req); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an unsigned click with an agent's cookie: %d, want 401\n%s", res.StatusCode, res.body)
	}

	status, body, err := click.Send(b.srv.URL + "/slack/interactions")
	if err != nil || status != http.StatusOK {
		t.Fatalf("a signed click: %d %s %v", status, body, err)
	}
	if got := b.invocationState(t, inv.ID); got != controlplane.AwaitingApproval {
		t.Fatalf("an unlinked user's click left the request %s", got)
	}
	dms := b.slack.DMs()
	if len(dms) != 1 {
		t.Fatalf("direct messages %+v, want one code", dms)
	}
	_, rest, _ := strings.Cut(dms[0].Text, "*")
	code, _, _ := strings.Cut(rest, "*")

	page := agent.get("/account/slack")
	if page.StatusCode != http.StatusOK || page.doc(t).Find(`[data-testid="slack-link-form"]`).Length() != 1 {
		t.Fatalf("the Slack page: %d\n%s", page.StatusCode, page.body)
	}
	wrong := agent.post("/account/slack", url.Values{"_csrf": {agent.csrf("/account/slack")}, "code": {"WRON-GGGG"}})
	if wrong.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a wrong code: %d, want 422", wrong.StatusCode)
	}
	if res := agent.post("/account/slack", url.Values{"_csrf": {agent.csrf("/account/slack")}, "code": {code}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the right code: %d\n%s", res.StatusCode, res.body)
	}
	if links := agent.get("/account/slack").doc(t).Find(`[data-testid="slack-links"]`).Text(); !strings.Contains(links, sam.ID) {
		t.Errorf("the page does not list the link: %q", links)
	}

	again, _ := b.slack.Click(sam, msgs[0], "approve")
	if status, body, err := again.Send(b.srv.URL + "/slack/interactions"); err != nil || status != http.StatusOK {
		t.Fatalf("the linked click: %d %s %v", status, body, err)
	}
	if got := b.invocationState(t, inv.ID); got != controlplane.Approved {
		t.Fatalf("the linked agent's click left the request %s; told %+v", got, b.slack.Ephemerals())
	}

	other := b.client(t)
	other.mustSignIn(b.users[accounts.Admin])
	if res := other.post("/account/slack/unlink", url.Values{"_csrf": {other.csrf("/account/slack")}, "team": {sam.Team}, "user": {sam.ID}}); res.StatusCode != http.StatusNotFound {
		t.Errorf("unlinking another account's Slack user: %d, want 404", res.StatusCode)
	}
	if res := agent.post("/account/slack/unlink", url.Values{"_csrf": {agent.csrf("/account/slack")}, "team": {sam.Team}, "user": {sam.ID}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("unlink: %d\n%s", res.StatusCode, res.body)
	}
	if n := agent.get("/account/slack").doc(t).Find(`[data-testid="slack-links"]`).Length(); n != 0 {
		t.Error("the page still lists the link after unlinking")
	}
	next := f.refund(t, f.newOrder(t), 500)
	if err := b.bot.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, m := range b.slack.Messages() {
		if strings.Contains(string(m.Blocks), next.ID) {
			in, _ := b.slack.Click(sam, m, "approve")
			_, _, _ = in.Send(b.srv.URL + "/slack/interactions")
		}
	}
	if got := b.invocationState(t, next.ID); got != controlplane.AwaitingApproval {
		t.Errorf("after unlinking, the Slack user's click left a request %s", got)
	}
}

func (b *testBundle) invocationState(t *testing.T, id string) controlplane.State {
	t.Helper()
	inv, err := b.cp.Invocation(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return inv.State
}

// TestAdminTurnsOnEmailMatch: the admin's Slack page turns linking by
// e-mail address on; an agent may not (403).
func TestAdminTurnsOnEmailMatch(t *testing.T) {
	t.Parallel()
	b := setup(t, withSlack())
	agent := b.client(t)
	agent.mustSignIn(b.users[accounts.Agent])
	if agent.get("/account/slack").doc(t).Find(`[data-testid="slack-email-match"]`).Length() != 0 {
		t.Error("an agent's Slack page offers the e-mail match")
	}
	if res := agent.post("/admin/slack/email-match", url.Values{"_csrf": {agent.csrf("/")}, "on": {"1"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("an agent turning the e-mail match on: %d, want 403", res.StatusCode)
	}
	admin := b.client(t)
	admin.mustSignIn(b.users[accounts.Admin])
	if state := admin.get("/account/slack").doc(t).Find(`[data-testid="email-match-state"]`).Text(); !strings.HasPrefix(state, "Off") {
		t.Errorf("the e-mail match starts %q, want off", state)
	}
	if res := admin.post("/admin/slack/email-match", url.Values{"_csrf": {admin.csrf("/account/slack")}, "on": {"1"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the admin turning it on: %d\n%s", res.StatusCode, res.body)
	}
	if on, err := b.bot.EmailMatch(context.Background()); err != nil || !on {
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
	b := setup(t, withShop(), withSlack())
	f := newConsoleFixture(t, b)
	f.refund(t, f.order, 4200)
	if err := b.bot.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	sam := b.slack.AddUser(fakeslack.User{ID: "U0SAM", Name: "Sam"})
	var codes []string
	for range 2 {
		click, _ := b.slack.Click(sam, b.slack.Messages()[0], "approve")
		if _, _, err := click.Send(b.srv.URL + "/slack/interactions"); err != nil {
			t.Fatal(err)
		}
		dms := b.slack.DMs()
		_, rest, _ := strings.Cut(dms[len(dms)-1].Text, "*")
		code, _, _ := strings.Cut(rest, "*")
		codes = append(codes, code)
		b.clock.Advance(61 * time.Second)
	}
	agent := b.client(t)
	agent.mustSignIn(b.users[accounts.Agent])
	if res := agent.post("/account/slack", url.Values{"_csrf": {agent.csrf("/account/slack")}, "code": {codes[0]}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the agent's code: %d\n%s", res.StatusCode, res.body)
	}
	manager := b.client(t)
	manager.mustSignIn(b.users[accounts.Manager])
	res := manager.post("/account/slack", url.Values{"_csrf": {manager.csrf("/account/slack")}, "code": {codes[1]}})
	doc := res.doc(t)
	if res.StatusCode != http.StatusConflict || !strings.Contains(doc.Find(`[data-testid="code-error"]`).Text(), "linked to another Countersign account") ||
		doc.Find(`[data-testid="slack-link-form"]`).Length() != 1 || doc.Find(`[data-testid="slack-links"]`).Length() != 0 {
		t.Fatalf("a second account's code for a linked Slack user: %d\n%s", res.StatusCode, res.body)
	}
	if links := agent.get("/account/slack").doc(t).Find(`[data-testid="slack-links"]`).Text(); !strings.Contains(links, sam.ID) {
		t.Errorf("the agent's link moved: %q", links)
	}
}
