package slackbot_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/fakeslack"
	"countersign/store"
)

// TestCardPostedWithWhatTheConsoleCardCarries: a card that enters the
// queue is posted once, with the quote's lines from → to, the amount, why
// a person decides, the deadline and the buttons; a second sync posts
// nothing more.
func TestCardPostedWithWhatTheConsoleCardCarries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := b.refund("", 4200)
	b.sync()
	b.sync()
	if n := len(b.slack.Messages()); n != 1 {
		t.Fatalf("%d messages after two syncs, want 1", n)
	}
	m := b.message(inv.ID)
	if m.Channel != b.slack.Channel {
		t.Errorf("posted to %q, want the channel's ID %q", m.Channel, b.slack.Channel)
	}
	blocks := string(m.Blocks)
	want := []string{inv.Quote.Title, "$42.00", "Why a person decides", inv.RouteReason, "Deadline",
		inv.DeadlineAt.UTC().Format("Jan 2, 15:04 UTC"), "https://console.example/queue/" + inv.ID}
	for _, l := range inv.Quote.Lines {
		if l.From != "" && l.To != "" {
			want = append(want, "`"+l.From+"` → `"+l.To+"`")
		}
	}
	for _, l := range inv.Quote.Lines {
		want = append(want, l.Label, l.To)
	}
	for _, w := range want {
		if !strings.Contains(blocks, jsonText(w)) {
			t.Errorf("the message does not carry %q:\n%s", w, blocks)
		}
	}
	// The arguments the buttons' hash binds, as the console lists them.
	for _, w := range []string{"*Arguments sent*", "`amount_cents`: `4200`", "`order_id`: `" + inv.Target.ID + "`", "`reason_code`: `damaged`"} {
		if !strings.Contains(blocks, jsonText(w)) {
			t.Errorf("the message does not show the argument line %q:\n%s", w, blocks)
		}
	}
	for _, button := range []string{"approve", "reject"} {
		if _, ok := b.slack.Click(fakeslack.User{}, m, button); !ok {
			t.Errorf("the message has no %s button", button)
		}
	}
}

// TestACardTooLongForSlackIsDecidedInTheConsole: when what a person
// approves does not fit in the message (here a title longer than Slack's
// header), the message offers no Approve or Reject, only the console.
func TestACardTooLongForSlackIsDecidedInTheConsole(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := b.refund("", 4200)
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE invocations SET quote = jsonb_set(quote, '{title}', to_jsonb($2::text)) WHERE id = $1`,
		inv.ID, strings.Repeat("Refund on a very long order name ", 10)); err != nil {
		t.Fatal(err)
	}
	b.sync()
	m := b.message(inv.ID)
	for _, button := range []string{"approve", "reject"} {
		if _, ok := b.slack.Click(fakeslack.User{}, m, button); ok {
			t.Errorf("a message cut short offers %s", button)
		}
	}
	if !strings.Contains(string(m.Blocks), "decided in the console") {
		t.Errorf("the message does not say it is decided in the console:\n%s", m.Blocks)
	}
}

// optionValue is the value of the modal's option whose text is text.
func optionValue(t *testing.T, view json.RawMessage, text string) string {
	t.Helper()
	var v struct {
		Blocks []struct {
			Element struct {
				Options []struct {
					Text  struct{ Text string } `json:"text"`
					Value string                `json:"value"`
				} `json:"options"`
			} `json:"element"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(view, &v); err != nil {
		t.Fatal(err)
	}
	for _, b := range v.Blocks {
		for _, o := range b.Element.Options {
			if o.Text.Text == text {
				return o.Value
			}
		}
	}
	t.Fatalf("the modal offers no option %q", text)
	return ""
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// TestForgedAndReplayedSignaturesDecideNothing: a click signed with
// another secret, with its body altered after signing, signed more than
// five minutes ago, or sent a second time is refused (401) and decides
// nothing; the genuine click decides once.
func TestForgedAndReplayedSignaturesDecideNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, sam := b.agent("Sam Agent")
	inv := b.refund("", 4200)
	b.sync()
	m := b.message(inv.ID)

	genuine, _ := b.slack.Click(sam, m, "approve")
	forger := fakeslack.New(botToken, "not the signing secret")
	forged, _ := forger.Click(sam, m, "approve")
	altered := genuine
	altered.Body = []byte(strings.Replace(string(genuine.Body), "approve", "approve%20", 1))
	old := genuine
	old.Header = b.slack.Sign(genuine.Body, time.Now().Add(-6*time.Minute))
	unsigned := fakeslack.Interaction{Body: genuine.Body, Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}}
	for name, in := range map[string]fakeslack.Interaction{"forged": forged, "altered": altered, "too old": old, "unsigned": unsigned} {
		if status := b.send(in); status != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, status)
		}
	}
	if got := b.state(inv.ID); got != controlplane.AwaitingApproval {
		t.Fatalf("after refused clicks the request is %s", got)
	}
	if status := b.send(genuine); status != http.StatusOK {
		t.Fatalf("genuine click: %d", status)
	}
	if got := b.state(inv.ID); got != controlplane.Approved {
		t.Fatalf("after the genuine click the request is %s (%q)", got, b.lastEphemeral(sam))
	}
	if status := b.send(genuine); status != http.StatusUnauthorized {
		t.Errorf("replayed click: %d, want 401", status)
	}
	if n := len(b.decisions(inv)); n != 1 {
		t.Errorf("%d decision events, want 1", n)
	}
}

// TestUnlinkedUserIsAskedToLinkAndNothingChanges: an unlinked Slack user's
// click changes nothing; they are told to link and sent a code in a
// direct message (one a minute). The code, entered by the console account,
// links them once; it cannot be used again, and wrong codes are throttled.
func TestUnlinkedUserIsAskedToLinkAndNothingChanges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := b.refund("", 4200)
	b.sync()
	m := b.message(inv.ID)
	stranger := b.slack.AddUser(fakeslack.User{ID: "U0STRANGER", Name: "Kim"})
	for range 2 {
		if status := b.click(stranger, m, "approve"); status != http.StatusOK {
			t.Fatalf("unlinked click: %d", status)
		}
	}
	if got := b.state(inv.ID); got != controlplane.AwaitingApproval {
		t.Fatalf("an unlinked user's click left the request %s", got)
	}
	if e := b.lastEphemeral(stranger); !strings.Contains(e, "Link your Slack account") {
		t.Errorf("the unlinked user was told %q", e)
	}
	dms := b.slack.DMs()
	if len(dms) != 1 || dms[0].Channel != stranger.ID {
		t.Fatalf("direct messages %+v, want one code to %s (one a minute)", dms, stranger.ID)
	}
	code := codeIn(t, dms[0].Text)

	kim := b.user(accounts.Agent, "Kim Agent")
	other := b.user(accounts.Agent, "Other Agent")
	if _, err := b.bot.Redeem(b.ctx, kim.ID, "WRON-GCOD"); err == nil {
		t.Fatal("a wrong code linked")
	}
	link, err := b.bot.Redeem(b.ctx, kim.ID, strings.ToLower(code))
	if err != nil {
		t.Fatalf("redeem: %v", err)
	}
	if link.User != stranger.ID {
		t.Errorf("linked %s, want %s", link.User, stranger.ID)
	}
	if _, err := b.bot.Redeem(b.ctx, other.ID, code); err == nil {
		t.Error("a used code linked again")
	}
	for range 5 {
		_, _ = b.bot.Redeem(b.ctx, other.ID, "ZZZZ-ZZZZ")
	}
	if _, err := b.bot.Redeem(b.ctx, other.ID, "ZZZZ-ZZZZ"); err == nil || !strings.Contains(err.Error(), "Too many") {
		t.Errorf("after six wrong codes: %v, want the throttle", err)
	}

	if status := b.click(stranger, m, "approve"); status != http.StatusOK {
		t.Fatalf("linked click: %d", status)
	}
	if got := b.state(inv.ID); got != controlplane.Approved {
		t.Fatalf("the linked user's click left the request %s (%q)", got, b.lastEphemeral(stranger))
	}
}

// TestLinkCodeExpires: a code entered after its time links nothing.
func TestLinkCodeExpires(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := b.refund("", 4200)
	b.sync()
	kim := b.slack.AddUser(fakeslack.User{ID: "U0KIM", Name: "Kim"})
	b.click(kim, b.message(inv.ID), "approve")
	code := codeIn(t, b.slack.DMs()[0].Text)
	b.clock.Advance(16 * time.Minute)
	if _, err := b.bot.Redeem(b.ctx, b.user(accounts.Agent, "Kim").ID, code); err == nil {
		t.Fatal("an expired code linked")
	}
}

func codeIn(t *testing.T, text string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "*")
	code, _, ok2 := strings.Cut(rest, "*")
	if !ok || !ok2 || len(code) != 9 {
		t.Fatalf("no code in %q", text)
	}
	return code
}

// TestEmailMatchLinksOnlyConfirmedAddresses: until an admin turns the
// e-mail match on, a matching address links nothing; with it on, a Slack
// user whose confirmed address is an agent's decides as them, and an
// unconfirmed address, or one confirmed by another workspace, links
// nothing. Only an admin may turn it on.
func TestEmailMatchLinksOnlyConfirmedAddresses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	confirmed := b.user(accounts.Agent, "Confirmed Agent")
	unconfirmed := b.user(accounts.Agent, "Unconfirmed Agent")
	cu := b.slack.AddUser(fakeslack.User{ID: "U0CONF", Name: "C", Email: strings.ToUpper(confirmed.Email), EmailConfirmed: true})
	uu := b.slack.AddUser(fakeslack.User{ID: "U0UNCONF", Name: "U", Email: unconfirmed.Email})
	inv := b.refund("", 4200)
	b.sync()
	m := b.message(inv.ID)
	b.click(cu, m, "approve")
	if got := b.state(inv.ID); got != controlplane.AwaitingApproval {
		t.Fatalf("with the e-mail match off, a matching address decided: %s", got)
	}
	if err := b.bot.SetEmailMatch(b.ctx, confirmed, true); err == nil {
		t.Fatal("an agent turned the e-mail match on")
	}
	if err := b.bot.SetEmailMatch(b.ctx, b.user(accounts.Admin, "Ada Admin"), true); err != nil {
		t.Fatal(err)
	}
	b.click(uu, m, "approve")
	if got := b.state(inv.ID); got != controlplane.AwaitingApproval {
		t.Fatalf("an unconfirmed address decided: %s", got)
	}
	// A user of another organisation (a shared channel) whose own admins
	// confirmed the agent's address links nothing.
	outsider := b.slack.AddUser(fakeslack.User{ID: "U0OUT", Team: "T0OTHER", Name: "O", Email: confirmed.Email, EmailConfirmed: true})
	b.click(outsider, m, "approve")
	if got := b.state(inv.ID); got != controlplane.AwaitingApproval {
		t.Fatalf("another workspace's user with the agent's address decided: %s", got)
	}
	b.click(cu, m, "approve")
	if got := b.state(inv.ID); got != controlplane.Approved {
		t.Fatalf("a confirmed address did not decide: %s (%q)", got, b.lastEphemeral(cu))
	}
	if d := b.decisions(inv); len(d) != 1 || d[0].ActorID != itoa(confirmed.ID) {
		t.Errorf("decisions %+v, want one by %d", d, confirmed.ID)
	}
}

// TestSlackDecidesWhoThePolicyLets: a linked manager's Approve or Reject
// under the default policy (agents only) changes nothing, takes no hold
// and opens no form; they are told, alone, who decides by the policy.
// Once a manager adds managers to the action's policy, the same click
// approves: Slack asks the console's one rule.
func TestSlackDecidesWhoThePolicyLets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	mgr := b.user(accounts.Manager, "Mo Manager")
	su := b.slack.AddUser(fakeslack.User{ID: "U0MGR", Name: "Mo"})
	if _, err := b.store.Pool().Exec(b.ctx, `INSERT INTO slack_links VALUES ($1, $2, $3, 'code', now())`, su.Team, su.ID, mgr.ID); err != nil {
		t.Fatal(err)
	}
	inv := b.refund("", 4200)
	b.sync()
	for _, action := range []string{"approve", "reject"} {
		b.click(su, b.message(inv.ID), action)
		if got := b.state(inv.ID); got != controlplane.AwaitingApproval {
			t.Fatalf("a manager's %s in Slack left the request %s", action, got)
		}
		if e := b.lastEphemeral(su); !strings.Contains(e, "Only support agents decide requests of shop/issue_refund") ||
			!strings.Contains(e, "(manager)") {
			t.Errorf("the manager's %s was answered %q", action, e)
		}
		if card, err := b.cp.Card(b.ctx, inv.ID); err != nil || card.HolderID != 0 {
			t.Errorf("the manager's refused %s holds the card: %+v %v", action, card.HolderID, err)
		}
	}
	if n := len(b.slack.Views()); n != 0 {
		t.Errorf("the manager's refused Reject opened %d forms", n)
	}

	p, err := b.cp.Policy(b.ctx, "shop", "issue_refund")
	if err != nil {
		t.Fatal(err)
	}
	p.ApproverRoles = []string{"agent", "manager"}
	if _, err := b.cp.ChangePolicy(b.ctx, controlplane.UserActor(mgr.ID, "manager", mgr.Name), p, p.Version, "managers decide refunds too"); err != nil {
		t.Fatal(err)
	}
	b.click(su, b.message(inv.ID), "approve")
	if got := b.state(inv.ID); got != controlplane.Approved {
		t.Fatalf("with managers on the policy, the manager's click left the request %s (told %q)", got, b.lastEphemeral(su))
	}
}

// TestStaleMessageDecidesNothing: after the card moved (an agent edited
// it in the console), a click on the message as it was decides nothing;
// the message is redrawn and its new buttons decide the new version.
func TestStaleMessageDecidesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, sam := b.agent("Sam Agent")
	editor := b.user(accounts.Agent, "Eda Editor")
	inv := b.refund("", 4200)
	b.sync()
	before := b.message(inv.ID)
	var args map[string]any
	_ = json.Unmarshal(inv.Args.Proposed, &args)
	args["amount_cents"] = 1000
	raw, _ := json.Marshal(args)
	if _, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: controlplane.UserActor(editor.ID, "agent", editor.Name), InvocationID: inv.ID, Verb: controlplane.StaffEdit, Version: inv.Version, Args: raw}); err != nil {
		t.Fatal(err)
	}
	b.click(sam, before, "approve")
	if got := b.state(inv.ID); got != controlplane.AwaitingApproval {
		t.Fatalf("a click on the stale message left the request %s", got)
	}
	if e := b.lastEphemeral(sam); !strings.Contains(e, "out of date") {
		t.Errorf("the clicker was told %q", e)
	}
	after := b.message(inv.ID)
	if after.Updates == 0 || !strings.Contains(string(after.Blocks), "$10.00") {
		t.Fatalf("the message was not redrawn with the edit:\n%s", after.Blocks)
	}
	b.click(sam, after, "approve")
	approved, err := b.cp.Invocation(b.ctx, inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if approved.State != controlplane.Approved || !strings.Contains(string(approved.Args.Approved), "1000") {
		t.Fatalf("the redrawn message's click: %s with %s (%q)", approved.State, approved.Args.Approved, b.lastEphemeral(sam))
	}
}

// TestChangedTargetAnswersQuoteAgain: when the order changed since the
// quote (another refund on it completed), Approve in Slack approves
// nothing and says to quote again in the console.
func TestChangedTargetAnswersQuoteAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, sam := b.agent("Sam Agent")
	order := b.order()
	small := b.refund(order, 500)
	big := b.refund(order, 3000)
	other := b.user(accounts.Agent, "Kim Agent")
	if _, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: controlplane.UserActor(other.ID, "agent", other.Name), InvocationID: big.ID, Verb: controlplane.StaffApprove, Version: big.Version, ArgsHash: big.ArgsHash}); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(time.Minute)
	if ok, err := b.cp.Dispatch(b.ctx, big.ID); err != nil || !ok {
		t.Fatalf("dispatch: %v %v", ok, err)
	}
	if got := b.state(big.ID); got != controlplane.Completed {
		t.Fatalf("the other refund is %s", got)
	}
	b.sync()
	b.click(sam, b.message(small.ID), "approve")
	if got := b.state(small.ID); got != controlplane.AwaitingApproval {
		t.Fatalf("a stale quote was approved: %s", got)
	}
	if e := b.lastEphemeral(sam); !strings.Contains(e, "quote again in the console") {
		t.Errorf("the clicker was told %q", e)
	}
}

// TestTwoAgentsClickAtOnce: two agents approving the same message at the
// same moment make exactly one decision; the other is told.
func TestTwoAgentsClickAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, sam := b.agent("Sam Agent")
	_, ria := b.agent("Ria Agent")
	inv := b.refund("", 4200)
	b.sync()
	m := b.message(inv.ID)
	ins := []fakeslack.Interaction{}
	for _, u := range []fakeslack.User{sam, ria} {
		in, _ := b.slack.Click(u, m, "approve")
		ins = append(ins, in)
	}
	var wg sync.WaitGroup
	for _, in := range ins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if status, _, err := in.Send(b.hook); err != nil || status != http.StatusOK {
				t.Errorf("click: %d %v", status, err)
			}
		}()
	}
	wg.Wait()
	if got := b.state(inv.ID); got != controlplane.Approved {
		t.Fatalf("after two clicks the request is %s", got)
	}
	if n := len(b.decisions(inv)); n != 1 {
		t.Fatalf("%d decisions, want exactly 1", n)
	}
	told := b.lastEphemeral(sam) + b.lastEphemeral(ria)
	if told == "" {
		t.Error("the agent whose click lost was told nothing")
	}
}

// TestSecondApproverInSlack: above the policy's second-approver amount the
// first click records the first approval, the message says so, the same
// agent cannot complete it, and a second agent does; the audit event
// names the channel and the Slack user.
func TestSecondApproverInSlack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	samUser, sam := b.agent("Sam Agent")
	_, ria := b.agent("Ria Agent")
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET second_approver_above_cents = 1000, version = version + 1 WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	inv := b.refund("", 4200)
	b.sync()
	if blocks := string(b.message(inv.ID).Blocks); !strings.Contains(blocks, "two different people must approve") {
		t.Errorf("the message does not say two must approve:\n%s", blocks)
	}
	b.click(sam, b.message(inv.ID), "approve")
	if got := b.state(inv.ID); got != controlplane.AwaitingApproval {
		t.Fatalf("one approval above the amount left the request %s", got)
	}
	m := b.message(inv.ID)
	if !strings.Contains(string(m.Blocks), "first approval by `Sam Agent`") {
		t.Errorf("the message does not name the first approver:\n%s", m.Blocks)
	}
	before := len(b.slack.Ephemerals())
	b.click(sam, m, "approve")
	if got := b.state(inv.ID); got != controlplane.AwaitingApproval {
		t.Fatalf("the same agent completed their own second approval: %s", got)
	}
	// The answer to this click itself (the first click's answer said the
	// same words).
	if es := b.slack.Ephemerals(); len(es) <= before || es[len(es)-1].User != sam.ID || !strings.Contains(es[len(es)-1].Text, "second, different person") {
		t.Errorf("the first approver's second click was not answered that a different person must approve (%d answers before, %+v after)", before, es[before:])
	}
	b.click(ria, b.message(inv.ID), "approve")
	if got := b.state(inv.ID); got != controlplane.Approved {
		t.Fatalf("the second agent's approval left the request %s (%q)", got, b.lastEphemeral(ria))
	}
	d := b.decisions(inv)
	if len(d) != 2 || d[0].Action != "invocation.first_approval" || d[0].ActorID != itoa(samUser.ID) {
		t.Fatalf("decisions %+v", d)
	}
	via, _ := d[1].Data["via"].(map[string]any)
	if via["channel"] != "slack" || via["conversation"] != b.slack.Channel || via["user"] != ria.Team+"/"+ria.ID {
		t.Errorf("the approval's event says via %v, want slack, the channel and the Slack user", d[1].Data["via"])
	}
	if blocks := string(b.message(inv.ID).Blocks); !strings.Contains(blocks, "Approved by `Ria Agent` in Slack") ||
		strings.Contains(blocks, `"action_id":"approve"`) {
		t.Errorf("the decided message does not say who approved, or still has buttons:\n%s", blocks)
	}
}

// TestSecondApproverInSlackForAnotherCurrency: under limits in euros, a
// $10.00 refund is compared with none of them, so the message asks two
// people, writing the limit in euros, and one click does not approve it.
func TestSecondApproverInSlackForAnotherCurrency(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, sam := b.agent("Sam Agent")
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET limit_currency = 'EUR', version = version + 1 WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	inv := b.refund("", 1000)
	b.sync()
	if blocks := string(b.message(inv.ID).Blocks); !strings.Contains(blocks, "two different people must approve (above €500.00)") {
		t.Errorf("the message does not ask two people under euro limits:\n%s", blocks)
	}
	b.click(sam, b.message(inv.ID), "approve")
	if got := b.state(inv.ID); got != controlplane.AwaitingApproval {
		t.Errorf("one approval of dollars under euro limits left the request %s", got)
	}
}

// TestRejectThroughTheModal: Reject opens a form with the action's own
// reasons and none chosen; submitting without a reason is refused in the
// form; a reason rejects with that text, and the message says by whom.
func TestRejectThroughTheModal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, sam := b.agent("Sam Agent")
	inv := b.refund("", 4200)
	b.sync()
	b.click(sam, b.message(inv.ID), "reject")
	views := b.slack.Views()
	if len(views) != 1 {
		t.Fatalf("%d modals opened, want 1 (%q)", len(views), b.lastEphemeral(sam))
	}
	reasons := b.cp.RejectReasons(inv.System, inv.Action)
	view := string(views[0].View)
	for _, r := range reasons {
		if !strings.Contains(view, jsonText(r)) {
			t.Errorf("the modal does not offer %q", r)
		}
	}
	if strings.Contains(view, "initial_option") {
		t.Errorf("the modal chose a reason for the agent:\n%s", view)
	}
	status, body, err := b.slack.Submit(sam, views[0], "", "").Send(b.hook)
	if err != nil || status != http.StatusOK || !strings.Contains(string(body), `"response_action":"errors"`) {
		t.Fatalf("a submission without a reason: %d %s %v", status, body, err)
	}
	if got := b.state(inv.ID); got != controlplane.AwaitingApproval {
		t.Fatalf("a submission without a reason left the request %s", got)
	}
	// A value the form did not offer (a list changed while it was open, or
	// a forged one) sends nothing.
	status, body, err = b.slack.Submit(sam, views[0], "r0", "").Send(b.hook)
	if err != nil || status != http.StatusOK || !strings.Contains(string(body), `"response_action":"errors"`) {
		t.Fatalf("a reason the form did not offer: %d %s %v", status, body, err)
	}
	if got := b.state(inv.ID); got != controlplane.AwaitingApproval {
		t.Fatalf("a reason the form did not offer left the request %s", got)
	}
	if status := b.send(b.slack.Submit(sam, views[0], optionValue(t, views[0].View, reasons[0]), "")); status != http.StatusOK {
		t.Fatalf("reject: %d", status)
	}
	rejected, err := b.cp.Invocation(b.ctx, inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rejected.State != controlplane.Rejected || rejected.DecisionReason != reasons[0] {
		t.Fatalf("after the submission: %s with %q, want rejected with %q", rejected.State, rejected.DecisionReason, reasons[0])
	}
	if blocks := string(b.message(inv.ID).Blocks); !strings.Contains(blocks, "Rejected by `Sam Agent` in Slack") {
		t.Errorf("the message does not say who rejected:\n%s", blocks)
	}
}

// TestConsoleDecisionUpdatesTheMessage: a card held, then approved in the
// console, redraws its message at the next sync: held by whom, then
// decided by whom, without buttons.
func TestConsoleDecisionUpdatesTheMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	agent := b.user(accounts.Agent, "Cam Console")
	actor := controlplane.UserActor(agent.ID, "agent", agent.Name)
	inv := b.refund("", 4200)
	b.sync()
	if _, err := b.cp.Claim(b.ctx, actor, inv.ID); err != nil {
		t.Fatal(err)
	}
	b.sync()
	if blocks := string(b.message(inv.ID).Blocks); !strings.Contains(blocks, "Held by* `Cam Console`") {
		t.Errorf("the message does not say who holds the card:\n%s", blocks)
	}
	if _, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: actor, InvocationID: inv.ID, Verb: controlplane.StaffApprove, Version: inv.Version, ArgsHash: inv.ArgsHash}); err != nil {
		t.Fatal(err)
	}
	b.sync()
	blocks := string(b.message(inv.ID).Blocks)
	if !strings.Contains(blocks, "Approved by `Cam Console`") || strings.Contains(blocks, "in Slack") ||
		strings.Contains(blocks, `"action_id":"approve"`) {
		t.Errorf("the message after a console decision:\n%s", blocks)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestHeldCardDecidesNothing: while another agent holds the card (opened
// in the console), a click in Slack decides nothing and says who holds it.
func TestHeldCardDecidesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, sam := b.agent("Sam Agent")
	holder := b.user(accounts.Agent, "Hal Holder")
	inv := b.refund("", 4200)
	b.sync()
	if _, err := b.cp.Claim(b.ctx, controlplane.UserActor(holder.ID, "agent", holder.Name), inv.ID); err != nil {
		t.Fatal(err)
	}
	b.click(sam, b.message(inv.ID), "approve")
	if got := b.state(inv.ID); got != controlplane.AwaitingApproval {
		t.Fatalf("a click on a card another agent holds left it %s", got)
	}
	if e := b.lastEphemeral(sam); !strings.Contains(e, "`Hal Holder` is deciding") {
		t.Errorf("the clicker was told %q", e)
	}
}

// TestRejectInOwnWordsAndCancel: Other without words is refused at its
// field; closing the form lets go of the hold its click took; Other with
// words rejects with them.
func TestRejectInOwnWordsAndCancel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, sam := b.agent("Sam Agent")
	inv := b.refund("", 4200)
	b.sync()
	b.click(sam, b.message(inv.ID), "reject")
	if card, err := b.cp.Card(b.ctx, inv.ID); err != nil || card.HolderName != "Sam Agent" {
		t.Fatalf("after Reject the card is held by %q (%v), want Sam Agent", card.HolderName, err)
	}
	views := b.slack.Views()
	if len(views) != 1 {
		t.Fatalf("%d modals", len(views))
	}
	_, body, err := b.slack.Submit(sam, views[0], "other", "").Send(b.hook)
	if err != nil || !strings.Contains(string(body), `"other"`) {
		t.Fatalf("Other without words: %s %v, want an error at the other field", body, err)
	}
	b.send(b.slack.Close(sam, views[0]))
	if card, err := b.cp.Card(b.ctx, inv.ID); err != nil || card.HolderID != 0 {
		t.Fatalf("after closing the form the card is held by %q (%v)", card.HolderName, err)
	}
	b.click(sam, b.message(inv.ID), "reject")
	b.send(b.slack.Submit(sam, b.slack.Views()[1], "other", "The customer asked for store credit instead."))
	rejected, err := b.cp.Invocation(b.ctx, inv.ID)
	if err != nil || rejected.State != controlplane.Rejected || rejected.DecisionReason != "The customer asked for store credit instead." {
		t.Fatalf("after Other with words: %s %q %v", rejected.State, rejected.DecisionReason, err)
	}
}

// TestAClaimedPostNeverMadeIsTakenOver: an instance that claimed a card's
// post and died before posting it leaves a claim without a message. No
// instance posts it while the claim is young; once it is older than
// store.SlackPostClaim the next sync posts the card, once.
func TestAClaimedPostNeverMadeIsTakenOver(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := b.refund("", 4200)
	if ok, err := b.store.ClaimSlackPost(b.ctx, inv.ID, b.slack.Channel, b.clock.Now()); err != nil || !ok {
		t.Fatalf("the dead instance's claim: %v, %v", ok, err)
	}
	b.sync()
	if n := len(b.slack.Messages()); n != 0 {
		t.Fatalf("%d messages while another instance's claim is young, want 0", n)
	}
	b.clock.Advance(store.SlackPostClaim + time.Second)
	b.sync()
	b.sync()
	if n := len(b.slack.Messages()); n != 1 {
		t.Fatalf("%d messages after the claim ran out, want 1", n)
	}
	if m := b.message(inv.ID); m.Channel != b.slack.Channel {
		t.Errorf("posted to %q, want %q", m.Channel, b.slack.Channel)
	}
}

// TestOnlyTheCardsOwnMessageDecides: a click on a button that is not on
// the request's message in the approvals channel (another channel, or
// another message) decides nothing.
func TestOnlyTheCardsOwnMessageDecides(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, sam := b.agent("Sam Agent")
	inv := b.refund("", 4200)
	b.sync()
	m := b.message(inv.ID)
	for name, copied := range map[string]fakeslack.Message{
		"another channel": {Channel: "C0ELSEWHERE", TS: m.TS, Blocks: m.Blocks},
		"another message": {Channel: m.Channel, TS: m.TS + "1", Blocks: m.Blocks},
	} {
		b.click(sam, copied, "approve")
		if got := b.state(inv.ID); got != controlplane.AwaitingApproval {
			t.Fatalf("a click on %s decided: %s", name, got)
		}
		if !strings.Contains(b.lastEphemeral(sam), "not on the request's message") {
			t.Errorf("%s: the clicker was told %q", name, b.lastEphemeral(sam))
		}
	}
	b.click(sam, m, "approve")
	if got := b.state(inv.ID); got != controlplane.Approved {
		t.Fatalf("a click on the message itself left the request %s (%q)", got, b.lastEphemeral(sam))
	}
}
