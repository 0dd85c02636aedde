package slackbot_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
)

// hostile is text that would format, link, mention or start a line of its
// own if Slack read it as markup; "EVIL" marks it, at both ends, so that
// whatever part escapes a code span is found.
func hostile(field string) string {
	return "EVIL " + field + " *bold* _it_ ~strike~ `code` ```block``` :joy: @here #general" +
		"\n> quoted\n• fake line\n*amount_cents*: 1 <!channel> <@U123> <https://evil.example|click> &amp; https://evil.example EVIL"
}

// codeSpan is an inline code span as Slack reads one: within a line,
// between backticks.
var codeSpan = regexp.MustCompile("`[^`\n]*`")

// consoleLink is the one link the bot's own messages carry.
var consoleLink = regexp.MustCompile(`<https://console\.example/[^|>\s]*\|[A-Za-z ]+>`)

// checkMrkdwn fails when anything of a hostile text in s is outside a
// code span, or a span holds a raw <, > or a line break, or s holds a
// link or mention other than the console's own.
func checkMrkdwn(t *testing.T, where, s string) {
	t.Helper()
	for _, span := range codeSpan.FindAllString(s, -1) {
		if strings.ContainsAny(span, "<>") {
			t.Errorf("%s: a code span holds a raw < or >: %q", where, span)
		}
	}
	outside := codeSpan.ReplaceAllString(s, "")
	if strings.Contains(outside, "EVIL") {
		t.Errorf("%s: text from outside the bot is read as markup:\n%s", where, s)
	}
	if rest := consoleLink.ReplaceAllString(outside, ""); strings.ContainsAny(rest, "<>") {
		t.Errorf("%s: a link or mention other than the console's: %q", where, rest)
	}
}

// walk checks every mrkdwn text object in v (blocks or a view, as Slack
// receives them) and says how many it checked.
func walk(t *testing.T, where string, v any) int {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		t.Fatal(err)
	}
	n := 0
	var visit func(any)
	visit = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			if x["type"] == "mrkdwn" {
				if x["verbatim"] != true {
					t.Errorf("%s: a mrkdwn text is parsed for links and mentions (verbatim unset): %v", where, x)
				}
				s, _ := x["text"].(string)
				checkMrkdwn(t, where, s)
				n++
			}
			for _, y := range x {
				visit(y)
			}
		case []any:
			for _, y := range x {
				visit(y)
			}
		}
	}
	visit(tree)
	return n
}

// TestEveryMessageShowsOutsideTextLiterally: with hostile text in every
// field a message shows — the quote's title, lines, consequences and
// constraints, the target, every argument's name and value (as proposed
// and as edited), the customer, the reason a person decides, the holder,
// the first approver, the rejecter and their reason, a question sent back,
// a system's refusal of a fresh quote and the name of a card's holder in
// the answers to a click — every message the bot builds in every state, its notification text
// and the reject form show it literally: no formatting, link, mention or
// line of its own survives.
func TestEveryMessageShowsOutsideTextLiterally(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET second_approver_above_cents = 1000, version = version + 1 WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	_, sam := b.agent(strings.ReplaceAll(hostile("sam"), "\n", " "))
	riaUser, ria := b.agent(strings.ReplaceAll(hostile("ria"), "\n", " "))

	// Through the channel: posted, first approval by a hostile name,
	// rejected in the form in hostile words by another.
	first := b.refund("", 4200)
	b.sync()
	b.click(sam, b.message(first.ID), "approve")
	b.click(ria, b.message(first.ID), "reject")
	views := b.slack.Views()
	if len(views) != 1 {
		t.Fatalf("%d reject forms opened, want 1 (%q)", len(views), b.lastEphemeral(ria))
	}
	b.send(b.slack.Submit(ria, views[0], "other", hostile("reason")))
	if got := b.state(first.ID); got != controlplane.Rejected {
		t.Fatalf("the hostile reason left the request %s (%q)", got, b.lastEphemeral(ria))
	}
	b.sync()
	m := b.message(first.ID)
	if !strings.Contains(string(m.Blocks), "Rejected by `EVIL ria") || !strings.Contains(string(m.Blocks), "in Slack: `EVIL reason") {
		t.Errorf("the decided message does not name the rejecter and the reason literally:\n%s", m.Blocks)
	}
	// Answers to a click: the system's refusal when the bot checks the
	// quote again, and the name of the agent holding a card.
	refused := b.refund("", 4200)
	b.sync()
	refusal := hostile("system refusal")
	b.refuse.Store(&refusal)
	b.click(sam, b.message(refused.ID), "approve")
	b.refuse.Store(nil)
	if got := b.lastEphemeral(sam); !strings.Contains(got, "The system now refuses this request: `EVIL system refusal") {
		t.Errorf("the system's refusal is not shown literally: %q", got)
	}
	held := b.refund("", 4200)
	b.sync()
	if _, err := b.cp.Claim(b.ctx, controlplane.UserActor(riaUser.ID, string(riaUser.Role), riaUser.Name), held.ID); err != nil {
		t.Fatal(err)
	}
	b.click(sam, b.message(held.ID), "approve")
	if got := b.lastEphemeral(sam); !strings.Contains(got, "`EVIL ria") || !strings.Contains(got, "is deciding this request") {
		t.Errorf("the holder's name is not shown literally: %q", got)
	}
	checked := 0
	for _, m := range append(b.slack.Messages(), b.slack.DMs()...) {
		checkMrkdwn(t, "message text", m.Text)
		var blocks any
		if err := json.Unmarshal(m.Blocks, &blocks); err == nil {
			checked += walk(t, "message "+m.TS, blocks)
		}
	}
	for _, e := range b.slack.Ephemerals() {
		checkMrkdwn(t, "ephemeral", e.Text)
	}

	// Every field, in every state, rendered as the bot would post it.
	second := b.refund("", 4200)
	card, err := b.cp.Card(b.ctx, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	card.Quote.Title = hostile("title")
	card.Quote.Lines = []adapter.QuoteLine{{Label: hostile("label"), From: hostile("from"), To: hostile("to")},
		{Label: hostile("label2"), To: hostile("to2")}, {Label: hostile("label3"), From: hostile("from3")}}
	card.Quote.Consequences = []string{hostile("consequence")}
	card.Quote.Constraints = []string{hostile("constraint")}
	card.Target.Display = hostile("target")
	card.CustomerRef = hostile("customer")
	card.RouteReason = hostile("route")
	card.HolderID, card.HolderName = 1, hostile("holder")
	card.System, card.Action = hostile("system"), hostile("action")
	args, _ := json.Marshal(map[string]any{hostile("key"): hostile("value"), "nested": map[string]string{hostile("k"): hostile("v")}})
	card.Args.Proposed = args
	card.Args.Approved = json.RawMessage(`{"edited":` + string(mustJSON(t, hostile("edited"))) + `}`)
	for _, tc := range []struct {
		name  string
		state controlplane.State
		title string
		why   string
	}{
		{"awaiting approval", controlplane.AwaitingApproval, card.Quote.Title, ""},
		{"awaiting approval, no title", controlplane.AwaitingApproval, "", ""},
		{"rejected", controlplane.Rejected, card.Quote.Title, hostile("why")},
		{"sent back", controlplane.Rejected, card.Quote.Title, "question: " + hostile("question")},
		{"completed", controlplane.Completed, card.Quote.Title, ""},
	} {
		c := card
		c.State, c.Quote.Title, c.DecisionReason = tc.state, tc.title, tc.why
		text, blocks, err := b.bot.MessageOf(b.ctx, c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		checkMrkdwn(t, tc.name+": notification", text)
		checked += walk(t, tc.name, slack.Blocks{BlockSet: blocks})
	}
	checked += walk(t, "reject form", b.bot.RejectViewOf(card))
	if checked < 20 {
		t.Errorf("only %d mrkdwn texts checked; the walk missed the messages", checked)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
