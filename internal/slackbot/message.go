package slackbot

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/invisible"
	"countersign/internal/money"
)

// The action ids of the message's buttons and the reject modal.
const (
	actionApprove = "approve"
	actionReject  = "reject"
	actionEdit    = "edit"
	// actionStepUp opens the card's step-up page in the console: an
	// approval that needs a passkey is made there, never in Slack.
	actionStepUp = "step_up"
	modalReject  = "reject_reason"
)

// decision is what a button carries: the card, and the version and the
// arguments' hash its message showed. A click decides that and nothing
// newer.
type decision struct {
	ID      string `json:"id"`
	Version int32  `json:"v"`
	Hash    string `json:"h"`
	// Channel is set in the reject modal's metadata (a submission does not
	// say where the message was).
	Channel string `json:"c,omitempty"`
}

func (d decision) value() string {
	b, _ := json.Marshal(d)
	return string(b)
}

func decisionOf(inv controlplane.Invocation) decision {
	return decision{ID: inv.ID, Version: inv.Version, Hash: hex.EncodeToString(inv.ArgsHash)}
}

// shown is what a card's message shows, in the terms the store compares
// (store.slackShown): its state, version and holder.
func shown(card controlplane.QueueCard) string {
	return fmt.Sprintf("%s:%d:%d", card.State, card.Version, card.HolderID)
}

// open says whether a card's message may still change: until the request
// is decided and sent.
func open(card controlplane.QueueCard) bool {
	switch card.State {
	case controlplane.AwaitingApproval, controlplane.Approved, controlplane.Dispatching:
		return true
	}
	return false
}

// message is what a card's message says, in Slack's blocks, with the
// text a notification shows.
type message struct {
	text   string
	blocks []slack.Block
}

func (m message) options() []slack.MsgOption {
	return []slack.MsgOption{slack.MsgOptionText(m.text, false), slack.MsgOptionBlocks(m.blocks...)}
}

// message renders a card as it stands: what the console's card carries,
// the buttons while it awaits approval, and who decided once it is decided.
func (b *Bot) message(ctx context.Context, card controlplane.QueueCard) (message, error) {
	inv := card.Invocation
	q := inv.Quote
	title := q.Title
	if title == "" {
		title = inv.Action + " on " + inv.Target.Display
	}
	// The text is what a notification shows; literal, so a title cannot
	// mention the channel (<!channel>), link anywhere or format itself.
	m := message{text: "Waiting for approval: " + lit(title)}
	// cut says whether anything of what a person approves did not fit:
	// then the message offers no decision, only the console.
	cut := false
	fit := func(s string, n int) string {
		out := clip(s, n)
		cut = cut || out != s
		return out
	}
	m.blocks = append(m.blocks, slack.NewHeaderBlock(plain(fit(visible(title), 150))))

	var lines []string
	for _, l := range q.Lines {
		switch {
		case l.From != "" && l.To != "":
			lines = append(lines, fmt.Sprintf("%s: %s → %s", lit(l.Label), lit(l.From), lit(l.To)))
		case l.To != "":
			lines = append(lines, fmt.Sprintf("%s: %s", lit(l.Label), lit(l.To)))
		default:
			lines = append(lines, fmt.Sprintf("%s: %s → (none)", lit(l.Label), lit(l.From)))
		}
	}
	for _, c := range q.Consequences {
		lines = append(lines, "• "+lit(c))
	}
	if q.EffectiveAt != nil {
		lines = append(lines, "*Takes effect* "+when(*q.EffectiveAt))
	}
	for _, c := range q.Constraints {
		lines = append(lines, "_Constraint:_ "+lit(c))
	}
	if len(lines) > 0 {
		m.blocks = append(m.blocks, slack.NewSectionBlock(mrkdwn(fit(strings.Join(lines, "\n"), 3000)), nil, nil))
	}
	// The arguments an approval binds to (the hash on the buttons), as the
	// console's card lists them: what reaches the system.
	args, edited := inv.Args.Proposed, false
	if inv.Args.Approved != nil {
		args, edited = inv.Args.Approved, string(inv.Args.Approved) != string(inv.Args.Proposed)
	}
	if shownArgs := argLines(args); shownArgs != "" {
		head := "*Arguments sent*"
		if edited {
			head = "*Arguments sent* (edited by an agent; not what the assistant proposed)"
		}
		m.blocks = append(m.blocks, slack.NewSectionBlock(mrkdwn(fit(head+"\n"+shownArgs, 3000)), nil, nil))
	}

	var fields []*slack.TextBlockObject
	if q.AmountCents != nil {
		fields = append(fields, mrkdwn("*Amount*\n"+money.Format(*q.AmountCents, q.Currency)))
	}
	if inv.DeadlineAt != nil {
		fields = append(fields, mrkdwn("*Deadline*\n"+when(*inv.DeadlineAt)))
	}
	fields = append(fields, mrkdwn("*Customer*\n"+lit(card.CustomerRef)), mrkdwn("*Action*\n"+lit(inv.System+" / "+inv.Action)))
	m.blocks = append(m.blocks, slack.NewSectionBlock(nil, fields, nil))

	var notes []string
	if inv.RouteReason != "" {
		notes = append(notes, "*Why a person decides:* "+lit(inv.RouteReason))
	}
	second, err := b.secondApprover(ctx, card)
	if err != nil {
		return m, err
	}
	if second != "" {
		notes = append(notes, second)
	}
	if card.HolderID != 0 && inv.State == controlplane.AwaitingApproval {
		notes = append(notes, fmt.Sprintf("*Held by* %s until %s", lit(card.HolderName), card.HoldUntil.UTC().Format("15:04 UTC")))
	}
	if inv.SummaryDisagrees {
		notes = append(notes, "*The assistant's summary disagrees with the quote*; the quote is what is sent.")
	}
	if len(notes) > 0 {
		m.blocks = append(m.blocks, slack.NewSectionBlock(mrkdwn(fit(strings.Join(notes, "\n"), 3000)), nil, nil))
	}

	console := b.link("/queue/" + url.PathEscape(inv.ID))
	if inv.State == controlplane.AwaitingApproval && cut {
		m.blocks = append(m.blocks, slack.NewActionBlock("decide",
			slack.NewButtonBlockElement(actionEdit, inv.ID, plain("Decide in the console")).WithURL(console)),
			slack.NewContextBlock("cut", mrkdwn("Too long to show here in full, so it is decided in the console.")))
		return m, nil
	}
	stepUp, err := b.needsStepUp(ctx, inv)
	if err != nil {
		return m, err
	}
	if inv.State == controlplane.AwaitingApproval && stepUp {
		m.blocks = append(m.blocks, slack.NewActionBlock("decide",
			slack.NewButtonBlockElement(actionStepUp, inv.ID, plain("Approve in the console (passkey)")).
				WithStyle(slack.StylePrimary).WithURL(b.stepUpLink(inv.ID)),
			slack.NewButtonBlockElement(actionReject, decisionOf(inv).value(), plain("Reject")).WithStyle(slack.StyleDanger),
			slack.NewButtonBlockElement(actionEdit, inv.ID, plain("Edit in the console")).WithURL(console)),
			slack.NewContextBlock("step_up", mrkdwn(stepUpNote)))
		return m, nil
	}
	if inv.State == controlplane.AwaitingApproval {
		d := decisionOf(inv).value()
		m.blocks = append(m.blocks, slack.NewActionBlock("decide",
			slack.NewButtonBlockElement(actionApprove, d, plain("Approve")).WithStyle(slack.StylePrimary),
			slack.NewButtonBlockElement(actionReject, d, plain("Reject")).WithStyle(slack.StyleDanger),
			slack.NewButtonBlockElement(actionEdit, inv.ID, plain("Edit in the console")).WithURL(console)))
		return m, nil
	}
	outcome, err := b.outcome(ctx, inv)
	if err != nil {
		return m, err
	}
	m.text = outcome + ": " + lit(title)
	m.blocks = append(m.blocks, slack.NewContextBlock("outcome", mrkdwn(outcome+" · <"+console+"|Open in the console>")))
	return m, nil
}

// stepUpNote says on a card's message why it is approved in the console.
const stepUpNote = "*Approving needs your passkey*, so it is done in the console, not here: " +
	"the passkey signs this request, as it stands, and nothing else."

// needsStepUp says whether approving inv needs the approver's passkey,
// under its action's policy now (the control plane's one answer).
func (b *Bot) needsStepUp(ctx context.Context, inv controlplane.Invocation) (bool, error) {
	p, err := b.control.Policy(ctx, inv.System, inv.Action)
	if apperr.Is(err, apperr.NotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return b.control.ApprovalNeedsStepUp(&p, inv), nil
}

// stepUpLink is the console's step-up page of request id.
func (b *Bot) stepUpLink(id string) string {
	return b.link("/queue/" + url.PathEscape(id) + "/step-up")
}

// secondApprover says where a card stands with the second-approver rule,
// or nothing when the rule does not apply to it. An amount in another
// currency than the policy's limits is compared with none of them, so
// the rule applies to it whatever it is (controlplane.Policy.Unlike).
func (b *Bot) secondApprover(ctx context.Context, card controlplane.QueueCard) (string, error) {
	inv := card.Invocation
	p, err := b.control.Policy(ctx, inv.System, inv.Action)
	if err != nil || p.SecondApproverAboveCents == nil || inv.AmountCents == nil ||
		!p.Unlike(inv) && *inv.AmountCents+inv.ExposureCents <= *p.SecondApproverAboveCents {
		return "", nil //nolint:nilerr // without a policy there is no second-approver rule to show
	}
	above := money.Format(*p.SecondApproverAboveCents, p.Currency())
	if inv.State != controlplane.AwaitingApproval {
		return "*Second approver:* needed above " + above + ".", nil
	}
	ids, err := b.control.FirstApprovers(ctx, inv)
	if err != nil {
		return "", err
	}
	if len(ids) == 0 {
		return "*Second approver:* two different people must approve (above " + above + "); nobody has yet.", nil
	}
	var names []string
	for _, id := range ids {
		if u, err := b.accounts.User(ctx, id); err == nil {
			names = append(names, lit(u.Name))
		}
	}
	return "*Second approver:* first approval by " + strings.Join(names, ", ") +
		"; a second, different person must approve.", nil
}

// outcome says what became of a decided card and by whom, as mrkdwn
// (names and reasons literal).
func (b *Bot) outcome(ctx context.Context, inv controlplane.Invocation) (string, error) {
	events, err := b.control.Timeline(ctx, inv.TaskID)
	if err != nil {
		return "", err
	}
	by := func(actions ...controlplane.EventAction) string {
		for i := len(events) - 1; i >= 0; i-- {
			e := events[i]
			if e.InvocationID != inv.ID {
				continue
			}
			for _, a := range actions {
				if e.Action == a {
					name, _ := e.Data["actor_name"].(string)
					if name = lit(name); name == "" {
						name = "someone"
					}
					if via, ok := e.Data["via"].(map[string]any); ok && via["channel"] == "slack" {
						name += " in Slack"
					}
					return name
				}
			}
		}
		return ""
	}
	state := inv.State.Label()
	switch inv.State {
	case controlplane.Approved, controlplane.Dispatching, controlplane.Completed, controlplane.Failed,
		controlplane.Unverified, controlplane.NotDispatched:
		who := by(controlplane.EventInvocationApproved)
		if who == "" {
			return "Now: " + state, nil
		}
		return "Approved by " + who + " · now: " + state, nil
	case controlplane.Rejected:
		if q, ok := controlplane.IsQuestion(inv.DecisionReason); ok {
			if who := by(controlplane.EventInvocationSentBack); who != "" {
				return "Sent back to the assistant by " + who + " with a question: " + lit(q), nil
			}
			return "Sent back to the assistant with a question: " + lit(q), nil
		}
		who := by(controlplane.EventInvocationRejected)
		if who == "" {
			return "Rejected: " + lit(inv.DecisionReason), nil
		}
		return "Rejected by " + who + ": " + lit(inv.DecisionReason), nil
	}
	return "Now: " + state, nil
}

func plain(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
}

// mrkdwn is a text object Slack reads as markup, without its automatic
// parsing (verbatim): a bare URL, channel name or @here in it stays text.
func mrkdwn(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, true)
}

// lit is the one way text that is not the bot's own — an argument, a
// quote's words, a summary, a name, a reason, a customer's reference —
// enters a message's mrkdwn: as an inline code span, inside which Slack
// applies no formatting (*bold*, _italic_, ~strike~, > quote, :emoji:,
// links). Slack has no escape for a backtick inside a code span, nor for
// a line break, so both are shown as visible marks (⟨U+0060⟩,
// ⟨U+000A⟩), as every character a person cannot see is (⟨U+200B⟩, as the
// console does); and &, < and > are written as Slack's documented
// entities, so no <!channel> or <url|link> is read. The result is one
// line: a value cannot start a line of its own that passes for the
// message's. Empty text is empty.
func lit(s string) string {
	if s == "" {
		return ""
	}
	return "`" + litReplacer.Replace(visible(s)) + "`"
}

var litReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "`", "⟨U+0060⟩", "\n", "⟨U+000A⟩")

func visible(s string) string {
	out, _ := invisible.Show(s)
	return out
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// argLines lists a call's arguments one per line ("`name`: `value`"),
// sorted, nested values as compact JSON, literal; empty when there are
// none or they do not decode.
func argLines(raw json.RawMessage) string {
	var args map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &args) != nil || len(args) == 0 {
		return ""
	}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, k := range names {
		v := args[k]
		text, ok := v.(string)
		if !ok {
			b, _ := json.Marshal(v)
			text = string(b)
		}
		out = append(out, lit(k)+": "+lit(text))
	}
	return strings.Join(out, "\n")
}

func when(t time.Time) string { return t.UTC().Format("Jan 2, 15:04 UTC") }
