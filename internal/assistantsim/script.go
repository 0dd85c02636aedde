package assistantsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Options tune a run.
type Options struct {
	// Customer is the e-mail of the customer the conversations are with.
	Customer string
	// Conversations is how many conversations to play, cycling through
	// the scripts; zero plays each script once.
	Conversations int
	// Prefix starts every conversation id, so runs do not collide
	// (default: "sim-" and the time).
	Prefix string
	// Wait bounds how long a conversation waits for an automatic write to
	// be verified (default 5s).
	Wait time.Duration
	// Outcomes, when set, is the assistant's outcome-webhook receiver: a
	// conversation waits for its write's outcome there instead of polling
	// the invocation.
	Outcomes *Outcomes
	// SiteSecret, when set, lets the run play the business's site too: it
	// signs a task assertion for SiteSystem (default "shop"), vouching
	// that Customer is talking to Assistant (the assistant's id or name),
	// for every task it opens. Without it, tasks open only for an
	// assistant allowed to act for any customer.
	SiteSecret []byte
	SiteSystem string
	Assistant  string
	// System is the system the conversations are about (default
	// SiteSystem): when several systems of a task offer a tool of the same
	// name, the assistant reads and proposes this one's.
	System string
}

// Line is one line of a transcript.
type Line struct {
	Conversation string
	// Who is "customer", "assistant", or "api" for what the assistant
	// sent and got back.
	Who  string
	Text string
}

// Transcript is what a run said and did, in order.
type Transcript []Line

// Write prints the transcript for people.
func (t Transcript) Write(w io.Writer) {
	last := ""
	for _, l := range t {
		if l.Conversation != last {
			fmt.Fprintf(w, "\n=== %s\n", l.Conversation)
			last = l.Conversation
		}
		switch l.Who {
		case "api":
			fmt.Fprintf(w, "    · %s\n", l.Text)
		default:
			fmt.Fprintf(w, "%-9s %s\n", l.Who+":", l.Text)
		}
	}
}

// conversation is the state of one scripted conversation.
type conversation struct {
	ctx  context.Context
	c    *Client
	id   string
	opts Options
	out  *Transcript
	task Task
	// offered is, per tool name, the systems of the task's catalog that
	// offer it (read when the task opens).
	offered map[string][]string
}

func (cv *conversation) customer(text string) {
	*cv.out = append(*cv.out, Line{cv.id, "customer", text})
}

func (cv *conversation) assistant(format string, a ...any) {
	*cv.out = append(*cv.out, Line{cv.id, "assistant", fmt.Sprintf(format, a...)})
}

func (cv *conversation) api(format string, a ...any) {
	*cv.out = append(*cv.out, Line{cv.id, "api", fmt.Sprintf(format, a...)})
}

// script is one scripted conversation.
type script struct {
	name string
	play func(cv *conversation) error
}

var scripts = []script{
	{"answer", playAnswer},
	{"read-and-answer", playReadAndAnswer},
	{"clarify-then-cancel", playClarifyThenCancel},
	{"refund-asked-twice", playRefundTwice},
	{"address-change", playAddressChange},
	{"resend-receipt", playReceipt},
	{"product-description", playProductDescription},
	{"reinstate-hand-off", playReinstateHandOff},
	{"stop-mid-task", playStop},
	{"out-of-scope", playOutOfScope},
}

// Run plays scripted conversations against the console at baseURL with the
// API key, and returns what was said and done. It stops at the first
// error that is not part of a script (a refusal the script expects is
// shown in the transcript instead).
func Run(ctx context.Context, baseURL, key string, opts Options) (Transcript, error) {
	if opts.Customer == "" {
		opts.Customer = "customer@demo.countersign.test"
	}
	if opts.Prefix == "" {
		opts.Prefix = "sim-" + time.Now().UTC().Format("20060102T150405")
	}
	if opts.Wait == 0 {
		opts.Wait = 5 * time.Second
	}
	if opts.SiteSystem == "" {
		opts.SiteSystem = "shop"
	}
	if opts.System == "" {
		opts.System = opts.SiteSystem
	}
	n := opts.Conversations
	if n <= 0 {
		n = len(scripts)
	}
	c := NewClient(baseURL, key)
	var out Transcript
	for i := range n {
		s := scripts[i%len(scripts)]
		cv := &conversation{ctx: ctx, c: c, id: fmt.Sprintf("%s-%02d-%s", opts.Prefix, i+1, s.name), opts: opts, out: &out}
		if err := s.play(cv); err != nil {
			return out, fmt.Errorf("assistantsim: conversation %s: %w", cv.id, err)
		}
	}
	return out, nil
}

// open creates the conversation's task.
func (cv *conversation) open(actions ...string) error {
	t, err := cv.c.CreateTask(cv.ctx, NewTask{CustomerRef: cv.opts.Customer, ConversationID: cv.id, AllowedActions: actions,
		WriteBudget: 3, InflightLimit: 2, RatePerMinute: 10, CustomerAssertion: cv.opts.vouch(time.Now())})
	if err != nil {
		return err
	}
	cv.task = t
	cv.api("task %s opened (allows %s; budget %d)", t.ID, strings.Join(t.AllowedActions, ", "), t.WriteBudget)
	tools, err := cv.c.Tools(cv.ctx, t.ID, "")
	if err != nil {
		return err
	}
	cv.offered = map[string][]string{}
	for _, tool := range tools {
		cv.offered[tool.Name] = append(cv.offered[tool.Name], tool.System)
	}
	return nil
}

// systemFor picks the system whose tool the conversation calls: the one
// system of the task's catalog that offers it, or when several do, the one
// the conversation is about; shown is how the transcript names the call.
func (cv *conversation) systemFor(tool string) (system, shown string, err error) {
	systems := cv.offered[tool]
	switch {
	case len(systems) == 1:
		return systems[0], tool, nil
	case slices.Contains(systems, cv.opts.System):
		return cv.opts.System, tool + " (" + cv.opts.System + ")", nil
	case len(systems) > 1:
		return "", "", fmt.Errorf("several systems offer %s (%s) and none is %s, the one this conversation is about", tool, strings.Join(systems, ", "), cv.opts.System)
	}
	return "", tool, nil // not in the catalog: the API says why
}

func (cv *conversation) report(e Event) error {
	if e.TaskID == "" {
		e.TaskID = cv.task.ID
	}
	if err := cv.c.Report(cv.ctx, cv.id, e); err != nil {
		return err
	}
	cv.api("reported %s / %s", e.Intent, e.Mode)
	return nil
}

// read runs a read tool and decodes its data into a list of objects.
func (cv *conversation) read(tool string, args map[string]any) ([]map[string]any, error) {
	system, shown, err := cv.systemFor(tool)
	if err != nil {
		return nil, err
	}
	res, err := cv.c.Read(cv.ctx, cv.task.ID, system, tool, args)
	if err != nil {
		return nil, err
	}
	cv.api("%s → %d result(s)%s", shown, res.Count, map[bool]string{true: ", truncated", false: ""}[res.Truncated])
	var list []map[string]any
	if json.Unmarshal(res.Data, &list) != nil {
		var one map[string]any
		if err := json.Unmarshal(res.Data, &one); err != nil {
			return nil, err
		}
		list = []map[string]any{one}
	}
	return list, nil
}

// propose proposes a write and tells the customer what the API says.
func (cv *conversation) propose(action string, args map[string]any, summary, key string) (Invocation, error) {
	system, shown, err := cv.systemFor(action)
	if err != nil {
		return Invocation{}, err
	}
	inv, err := cv.c.Propose(cv.ctx, cv.task.ID, system, action, args, summary, key)
	if err != nil {
		return inv, err
	}
	dedup := ""
	if inv.Deduplicated {
		dedup = " (deduplicated: the same request within ten minutes)"
	}
	cv.api("%s %s → %s; next: %s%s", shown, inv.ID, inv.State, inv.Next.Kind, dedup)
	cv.api("quote: %s", inv.Quote.Title)
	msg := inv.Say
	if inv.Next.Kind == "confirm" && inv.Next.URL != "" {
		msg += " Confirm here: " + inv.Next.URL
	}
	cv.assistant("%s", msg)
	return inv, nil
}

func find(list []map[string]any, field, contains string) map[string]any {
	for _, m := range list {
		if s, _ := m[field].(string); strings.Contains(strings.ToLower(s), strings.ToLower(contains)) {
			return m
		}
	}
	return nil
}

func playAnswer(cv *conversation) error {
	cv.customer("How long do I have to ask for a refund?")
	tools, err := cv.c.Tools(cv.ctx, "", "refund")
	if err != nil {
		return err
	}
	for _, t := range tools {
		if t.Name == "issue_refund" {
			first, _, _ := strings.Cut(strings.TrimSpace(t.Guidance), "\n")
			cv.api("tool search \"refund\" → issue_refund (%s); guidance: %s", t.Mode, first)
		}
	}
	cv.assistant("Refunds are considered for damaged, missing or wrong items; tell me which order and I'll check what applies.")
	return cv.report(Event{Intent: "informational", Mode: "answered"})
}

func playReadAndAnswer(cv *conversation) error {
	if err := cv.open("resend_receipt"); err != nil {
		return err
	}
	cv.customer("Has my standing desk mat shipped?")
	orders, err := cv.read("list_orders", nil)
	if err != nil {
		return err
	}
	if o := find(orders, "display", "desk mat"); o != nil {
		cv.assistant("Your order %s is %s: it has not shipped yet.", o["order_id"], o["fulfilment_status"])
	} else {
		cv.assistant("I can't find that order on your account.")
	}
	return cv.report(Event{Intent: "diagnostic", Mode: "read_and_answered"})
}

func playClarifyThenCancel(cv *conversation) error {
	if err := cv.open("cancel_subscription"); err != nil {
		return err
	}
	cv.customer("Please cancel my plan, it's too expensive.")
	subs, err := cv.read("list_subscriptions", nil)
	if err != nil {
		return err
	}
	var names []string
	for _, s := range subs {
		names = append(names, fmt.Sprint(s["display"]))
	}
	cv.assistant("You have %d plans: %s. Which one should I cancel?", len(subs), strings.Join(names, "; "))
	if err := cv.report(Event{Intent: "ambiguous", Mode: "clarified"}); err != nil {
		return err
	}
	cv.customer("The Pro one, at the end of the month.")
	pro := find(subs, "plan", "pro")
	if pro == nil {
		return errors.New("the customer has no Pro plan")
	}
	if _, err := cv.propose("cancel_subscription", map[string]any{"subscription_id": pro["subscription_id"], "reason_code": "too_expensive",
		"effective": "end_of_period"}, "Cancel the Pro plan at the end of the period", ""); err != nil {
		return err
	}
	return cv.report(Event{Intent: "transactional_high", Mode: "proposed"})
}

func playRefundTwice(cv *conversation) error {
	if err := cv.open("issue_refund"); err != nil {
		return err
	}
	cv.customer("My walnut lamp arrived broken. Can I get $15 back?")
	orders, err := cv.read("list_orders", nil)
	if err != nil {
		return err
	}
	lamp := find(orders, "display", "walnut")
	if lamp == nil {
		return errors.New("no walnut lamp order")
	}
	args := map[string]any{"order_id": lamp["order_id"], "amount_cents": 1500, "reason_code": "damaged"}
	if _, err := cv.propose("issue_refund", args, "Refund $15.00 for the damaged walnut lamp", cv.id+"-refund"); err != nil {
		return refused(cv, err)
	}
	cv.customer("Hello? I asked for my $15 refund!")
	if _, err := cv.propose("issue_refund", args, "Refund $15.00 for the damaged walnut lamp", ""); err != nil {
		return refused(cv, err)
	}
	return cv.report(Event{Intent: "transactional_high", Mode: "proposed"})
}

func playAddressChange(cv *conversation) error {
	if err := cv.open("change_shipping_address"); err != nil {
		return err
	}
	cv.customer("I moved! Please send the desk mat to 12 Harbour Road, Bristol BS1 4DJ, UK.")
	orders, err := cv.read("list_orders", map[string]any{"status": "pending"})
	if err != nil {
		return err
	}
	if len(orders) == 0 {
		cv.assistant("None of your orders can still change address.")
		return cv.report(Event{Intent: "transactional_low", Mode: "answered"})
	}
	if _, err := cv.propose("change_shipping_address", map[string]any{"order_id": orders[0]["order_id"], "address": map[string]any{
		"name": "Jordan Lee", "line1": "12 Harbour Road", "city": "Bristol", "postal_code": "BS1 4DJ", "country": "GB"}},
		"Ship the desk mat to 12 Harbour Road, Bristol", ""); err != nil {
		return refused(cv, err)
	}
	return cv.report(Event{Intent: "transactional_low", Mode: "linked"})
}

func playReceipt(cv *conversation) error {
	if err := cv.open("resend_receipt"); err != nil {
		return err
	}
	cv.customer("Can you send me the receipt for my Pro plan again?")
	inv, err := cv.propose("resend_receipt", map[string]any{"invoice_id": "paid Pro"}, "Resend the receipt of the paid Pro invoice", "")
	var apiErr *Error
	if errors.As(err, &apiErr) && len(apiErr.Details.Candidates) > 0 {
		// Never pick a candidate for the customer: ask, and use the answer.
		names := make([]string, len(apiErr.Details.Candidates))
		for i, c := range apiErr.Details.Candidates {
			names[i] = c.Display
		}
		cv.api("ambiguous: %d candidates", len(names))
		cv.assistant("I found %d receipts: %s. Which one do you mean?", len(names), strings.Join(names, "; "))
		cv.customer("The one for my Pro plan.")
		chosen := ""
		for _, c := range apiErr.Details.Candidates {
			if strings.Contains(c.Display, "Pro") {
				chosen = c.ID
				break
			}
		}
		if chosen == "" {
			return refused(cv, err)
		}
		inv, err = cv.propose("resend_receipt", map[string]any{"invoice_id": chosen}, "Resend the receipt of the Pro plan's invoice", "")
	}
	if err != nil {
		return refused(cv, err)
	}
	if cv.opts.Outcomes != nil && (inv.State == "approved" || inv.State == "dispatching") {
		ctx, cancel := context.WithTimeout(cv.ctx, cv.opts.Wait)
		out, ok := cv.opts.Outcomes.Wait(ctx, inv.ID)
		cancel()
		if ok {
			cv.api("outcome webhook: %s", out.Event)
			inv = out.Invocation
		}
	}
	deadline := time.Now().Add(cv.opts.Wait)
	for cv.opts.Outcomes == nil && (inv.State == "approved" || inv.State == "dispatching") {
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
		if inv, err = cv.c.Invocation(cv.ctx, inv.ID); err != nil {
			return err
		}
	}
	cv.api("invocation %s is %s", inv.ID, inv.State)
	cv.assistant("%s", inv.Say)
	mode := "proposed"
	if inv.State == "completed" {
		mode = "executed"
	}
	return cv.report(Event{Intent: "transactional_low", Mode: mode})
}

func playProductDescription(cv *conversation) error {
	if err := cv.open("update_product_description"); err != nil {
		return err
	}
	cv.customer("The walnut lamp page should say the bulb is included.")
	if _, err := cv.propose("update_product_description", map[string]any{"product_id": "Walnut desk lamp",
		"description": "A solid walnut desk lamp with a linen shade. E27 LED bulb included."}, "Mention the included bulb", ""); err != nil {
		return refused(cv, err)
	}
	return cv.report(Event{Intent: "transactional_low", Mode: "proposed"})
}

func playReinstateHandOff(cv *conversation) error {
	if err := cv.open("reinstate_subscription"); err != nil {
		return err
	}
	cv.customer("I changed my mind — please keep my Starter plan going.")
	subs, err := cv.read("list_subscriptions", nil)
	if err != nil {
		return err
	}
	starter := find(subs, "plan", "starter")
	if starter == nil {
		return errors.New("no Starter plan")
	}
	args := map[string]any{"subscription_id": starter["subscription_id"]}
	if _, err := cv.propose("reinstate_subscription", args, "Reinstate the Starter plan", ""); err == nil {
		return cv.report(Event{Intent: "transactional_high", Mode: "proposed"})
	} else if err := refused(cv, err); err != nil {
		return err
	}
	cv.assistant("I'm passing this to a colleague who can look at your account; they'll have everything we discussed.")
	return cv.report(Event{Intent: "transactional_high", Mode: "handed_off",
		Summary:      "Customer wants to keep the Starter plan; reinstating was refused by the shop, so a person should check its state.",
		Facts:        map[string]any{"subscription_id": starter["subscription_id"], "status": starter["status"]},
		WouldPropose: &WouldPropose{Action: "reinstate_subscription", Args: args}})
}

func playStop(cv *conversation) error {
	if err := cv.open("issue_refund", "resend_receipt"); err != nil {
		return err
	}
	cv.customer("Refund me $5 for the headphones — actually, no. Stop, don't do anything.")
	t, err := cv.c.Task(cv.ctx, cv.task.ID)
	if err != nil {
		return err
	}
	paused, err := cv.c.Pause(cv.ctx, t)
	if err != nil {
		return err
	}
	cv.api("task %s paused at version %d", paused.ID, paused.Version)
	cv.assistant("Stopped. I won't change anything; a person can pick this up if you want to continue.")
	orders, err := cv.read("list_orders", nil)
	if err != nil {
		return err
	}
	if h := find(orders, "display", "headphones"); h != nil {
		system, _, err := cv.systemFor("issue_refund")
		if err != nil {
			return err
		}
		_, err = cv.c.Propose(cv.ctx, cv.task.ID, system, "issue_refund", map[string]any{"order_id": h["order_id"], "amount_cents": 500,
			"reason_code": "changed_mind"}, "Refund $5.00", "")
		var apiErr *Error
		if errors.As(err, &apiErr) {
			cv.api("a proposal after the pause is refused: %s (%s)", apiErr.Code, apiErr.Message)
		}
	}
	return cv.report(Event{Intent: "transactional_high", Mode: "resolved"})
}

func playOutOfScope(cv *conversation) error {
	cv.customer("What's the weather like in Lisbon tomorrow?")
	cv.assistant("I can only help with your orders, subscriptions and invoices here.")
	return cv.report(Event{Intent: "out_of_scope", Mode: "answered"})
}

// refused shows an API refusal in the transcript; errors that are not the
// API's (network, decoding) end the run.
func refused(cv *conversation, err error) error {
	var apiErr *Error
	if !errors.As(err, &apiErr) {
		return err
	}
	cv.api("refused: %s", apiErr.Error())
	cv.assistant("I can't do that myself: %s", strings.TrimSuffix(apiErr.Message, "."))
	return nil
}
