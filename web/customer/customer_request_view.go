package customer

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/adapter"
	"countersign/internal/consent"
	"countersign/internal/controlplane"
	"countersign/internal/money"
	"countersign/views"
	"countersign/web/kit"
	"countersign/web/layout"
)

// renderCustomerRequest renders the request page from the stored quote.
func (h *Handler) renderCustomerRequest(c echo.Context, status int, inv controlplane.Invocation, task controlplane.Task,
	reason string, fieldErrs map[string]string) error {
	csrf, err := h.CSRFToken(c)
	if err != nil {
		return err
	}
	f := h.frameFor(c, inv.System)
	v := h.customerRequestView(c, f, inv, task)
	v.CSRF, v.Reason, v.Errors = csrf, reason, fieldErrs
	v.QuoteChanged, _ = c.Get(quoteChangedKey).(bool)
	p := h.page(c, customerTitle(inv.Quote), f)
	p.CSRF, p.Narrow = csrf, true
	if v.Status.Pending {
		p.RefreshSeconds = v.Status.PollSeconds
	}
	if (v.Decide || v.Status.Pending) && h.mayStop(c, inv, task) {
		v.StopCSRF = csrf
	}
	shop := f.brand.Name
	if shop == "" {
		shop = inv.System
	}
	// A browser proven by a passkey decides only by signing the decision
	// (the control plane refuses its plain form): no form it cannot use.
	if p, ok := kit.CustomerOf(c); ok && v.Decide && string(p.Proof) == consent.ProofPasskey {
		v.PasskeyOnly = true
	}
	v.PasskeyOffer = h.passkeyOfferView(c, inv, task, v, shop)
	if v.Passkeys = h.passkeysLink(c, inv, task); v.Passkeys != "" {
		v.PasskeysShop = shop
	}
	return kit.Render(c, status, views.CustomerRequestPage(p, v))
}

// expired says the customer's time to decide is over, even before the
// sweeper moves the invocation to expired.
func (h *Handler) expired(inv controlplane.Invocation) bool {
	return inv.DeadlineAt != nil && !h.Now().Before(*inv.DeadlineAt)
}

// customerRequestView builds the page from the quote only: no internal
// field, id of another system or risk score reaches it.
func (h *Handler) customerRequestView(c echo.Context, f customerFrame, inv controlplane.Invocation, task controlplane.Task) views.CustomerRequestView {
	q := inv.Quote
	decide := inv.State == controlplane.AwaitingConfirmation && !h.expired(inv)
	v := views.CustomerRequestView{ID: inv.ID, Title: q.Title, Consequences: q.Consequences, Decide: decide,
		ConfirmLabel: customerOr(q.ConfirmLabel, "Confirm"), DeclineLabel: customerOr(q.DeclineLabel, "Don't do this"),
		Status: h.customerStatusNow(c.Request().Context(), f, inv, ""), Outcome: customerConsequences(inv.State, h.expired(inv)),
		QuoteVersion: strconv.Itoa(int(inv.Version))}
	// The digest of the quote JSON this page renders from: what the
	// decision forms say the customer saw.
	if digest, err := consent.QuoteDigest(inv.QuoteJSON); err == nil {
		v.QuoteDigest = base64.RawURLEncoding.EncodeToString(digest)
	}
	if cf := q.Customer; cf != nil {
		if cf.Title != "" {
			v.Title = cf.Title
		}
		v.Reference, v.Items, v.Why, v.MoneyArrives = cf.Reference, cf.Items, cf.Why, cf.MoneyArrives
		if cf.Date != nil {
			v.Date, v.DateLabel = f.at(*cf.Date), customerOr(cf.DateLabel, "Date")
		}
	}
	if decide {
		v.Title = question(v.Title)
		v.Deadline = "Please decide by " + f.at(*inv.DeadlineAt) +
			". Until you confirm, nothing changes; after that time this request expires."
		if task.State != controlplane.TaskActive {
			v.OnHold = "This request is on hold because the conversation it came from was stopped. Nothing has changed. You can still decline it."
		}
		if inv.SupersedesID != "" {
			if prev, err := h.cfg.Control.Invocation(c.Request().Context(), inv.SupersedesID); err == nil && prev.TaskID == inv.TaskID {
				v.Changes = quoteChanges(prev.Quote, q)
			}
		}
	}
	shown := false
	for _, l := range q.Lines {
		v.Lines = append(v.Lines, customerLine(l))
		if q.AmountCents != nil && l.Emphasis && l.To == money.Format(*q.AmountCents, q.Currency) {
			shown = true
		}
	}
	// The amount once: a quote whose total line carries it needs no
	// second "Amount" beside it.
	if q.AmountCents != nil && !shown {
		v.Amount = money.Format(*q.AmountCents, q.Currency)
	}
	if q.EffectiveAt != nil {
		v.Effective = f.at(*q.EffectiveAt)
	}
	if inv.State == controlplane.Completed {
		v.Receipt = h.customerReceipt(c.Request().Context(), f, inv, v.Lines)
	}
	// What it means for the customer is said only as the state allows
	// (customerConsequences): the money's arrival and the date are
	// logistics of a change that was not made, so they go with it.
	switch v.Outcome.Mode {
	case consequencesWould:
		v.MoneyArrives, v.Effective = "", ""
	case consequencesHidden:
		v.MoneyArrives, v.Effective, v.Consequences = "", "", nil
	}
	v.Asked = v.Outcome.Mode == consequencesWould || v.Outcome.Mode == consequencesHidden
	return v
}

// customerLine is a quote line as the customer's page shows it: in the
// adapter's sentence for customers when it gives one.
func customerLine(l adapter.QuoteLine) views.CustomerQuoteLine {
	return views.CustomerQuoteLine{Label: l.Label, From: l.From, To: l.To, Emphasis: l.Emphasis, Sum: l.Sum, Sentence: l.Customer}
}

// customerTitle is a request's title in the customer's words: the quote's
// customer title when the adapter gives one (no internal ids), else its
// title.
func customerTitle(q adapter.Quote) string {
	if q.Customer != nil && q.Customer.Title != "" {
		return q.Customer.Title
	}
	return q.Title
}

// waitingForYou is the customer's word for a request awaiting their
// confirmation; the console's badge says "Awaiting customer".
const waitingForYou = "Waiting for you to confirm"

// withdrawnBadge and withdrawnHeadline say, on the customer's pages, that
// a request ended undecided because its task was cancelled.
const (
	withdrawnBadge    = "Withdrawn: the task was cancelled"
	withdrawnHeadline = "This request was withdrawn: the task it belonged to was cancelled. Nothing was changed."
)

// customerBadge is a state's badge text in the customer's words where the
// console's word is the staff's; the badge's tone stays the state's.
var customerBadge = map[controlplane.State]string{
	controlplane.AwaitingConfirmation: waitingForYou,
	controlplane.AwaitingApproval:     "Waiting for our team",
	controlplane.Unverified:           "Being checked",
	controlplane.NotDispatched:        "Not carried out",
}

// quoteChanges lists what differs between the quote that was replaced and
// the fresh one, line by line, in the quotes' own words.
func quoteChanges(was, now adapter.Quote) []views.CustomerQuoteChange {
	old := map[string]string{}
	for _, l := range was.Lines {
		old[l.Label] = lineText(l)
	}
	var out []views.CustomerQuoteChange
	for _, l := range now.Lines {
		if o, ok := old[l.Label]; ok && o != lineText(l) {
			out = append(out, views.CustomerQuoteChange{Label: l.Label, Was: o, Now: lineText(l)})
		}
	}
	if was.AmountCents != nil && now.AmountCents != nil && *was.AmountCents != *now.AmountCents {
		out = append(out, views.CustomerQuoteChange{Label: "Amount", Was: money.Format(*was.AmountCents, was.Currency),
			Now: money.Format(*now.AmountCents, now.Currency)})
	}
	if len(out) == 0 {
		out = append(out, views.CustomerQuoteChange{Label: strings.ToUpper(was.Target.Kind[:1]) + was.Target.Kind[1:],
			Was: "as it was when this was prepared", Now: "changed since (for example in another tab)"})
	}
	return out
}

func lineText(l adapter.QuoteLine) string {
	if l.From != "" {
		return l.From + " → " + l.To
	}
	return l.To
}

// customerStatus says where a request stands in a customer's words. The
// badge is the state's one badge, the same as on every console page; the
// headline and detail are written for the customer, a done one in the
// words of the action's spec. successor, when known, links the fresh quote
// that replaced it.
func customerStatus(inv controlplane.Invocation, spec adapter.ActionSpec, f customerFrame, successor string) views.CustomerStatusView {
	now := f.now
	st := views.CustomerStatusView{ID: inv.ID, Decided: true, Successor: successor}
	badge := func(state controlplane.State) {
		b := layout.StateBadge(state)
		st.BadgeClass, st.BadgeText = b.Tone, b.Label
	}
	badge(inv.State)
	working := func(headline, detail string, poll int) views.CustomerStatusView {
		st.Headline, st.Detail, st.Pending, st.PollSeconds = headline, detail, true, poll
		return st
	}
	final := func(headline, detail string) views.CustomerStatusView {
		st.Headline, st.Detail = headline, detail
		return st
	}
	// decided says who ended it and why, with the badge in the
	// customer's words ("You declined", "Declined by our team").
	decided := func(inv controlplane.Invocation) views.CustomerStatusView {
		by, words, headline, detail, ok := decidedBy(inv)
		if !ok {
			return final("This was not carried out, so nothing has changed.", "")
		}
		st.DecidedBy, st.BadgeText = by, words
		return final(headline, detail)
	}
	if words, ok := customerBadge[inv.State]; ok {
		st.BadgeText = words
	}
	switch inv.State {
	case controlplane.Approved:
		st.BadgeText = "Approved — we're sending it to " + f.shop() + " now"
	case controlplane.Dispatching:
		st.BadgeText = "Sending it to " + f.shop() + " now"
	}
	switch inv.State {
	case controlplane.AwaitingConfirmation:
		if inv.DeadlineAt != nil && !now.Before(*inv.DeadlineAt) {
			badge(controlplane.Expired)
			expired := inv
			expired.State = controlplane.Expired
			return decided(expired)
		}
		st.Decided = false
		return st
	case controlplane.AwaitingApproval:
		return working("A member of our team needs to approve this first. Nothing has changed yet.",
			"This page updates when it is decided.", 10)
	case controlplane.Proposed, controlplane.Approved, controlplane.Dispatching:
		return working("Confirmed. We are carrying this out now.", "This page updates by itself when it is done.", 1)
	case controlplane.Completed:
		headline := inv.Say(spec)
		if ref := inv.CustomerReference(); ref != "" {
			// The template prints the reference after the verb, marked up:
			// the same one the assistant's sentence gives.
			headline = strings.TrimSuffix(headline, " Reference: "+ref+".")
			st.Reference = ref
		}
		detail := "Keep the reference in case you need to ask about this later."
		if f := inv.Quote.Customer; f != nil && f.MoneyArrives != "" {
			detail = "When the money arrives: " + kit.LowerFirst(strings.TrimSuffix(f.MoneyArrives, ".")) + ". " + detail
		}
		return final(headline, detail)
	case controlplane.Unverified:
		return working("We could not confirm this yet; a person will check and we will update this page.",
			"You don't need to do anything, and please don't ask for it again meanwhile.", 10)
	case controlplane.Failed:
		st.DecidedBy = "system"
		return final("We could not do this, and nothing has changed.", customerHint(inv.Error))
	case controlplane.NotDispatched:
		st.DecidedBy = "system"
		if inv.Withdrawn() {
			// It waited for a decision when its task was cancelled: nobody
			// decided on it, and nothing of it took place.
			st.BadgeText = withdrawnBadge
			return final(withdrawnHeadline, "Ask the assistant if you still want it.")
		}
		return final("This was not carried out, so nothing has changed.", customerReason(inv.NotDispatchedReason))
	case controlplane.Rejected, controlplane.Expired:
		return decided(inv)
	case controlplane.Reversed:
		st.Reference = inv.CustomerReference()
		return final("This was done and has since been reversed.", "")
	}
	return final("We can't say yet where this stands.", "")
}

// customerHint turns a refusal into what a customer can do about it; the
// adapter's own hints are written for the assistant and for agents.
func customerHint(e *adapter.Error) string {
	if e == nil {
		return "Ask the assistant for another way to help, or to put you through to a person."
	}
	switch e.Code {
	case "payment_method_declined":
		return "Your card was declined. Update your payment method, then ask the assistant again."
	case "order_already_fulfilled":
		return "The order has already left our warehouse, so its address can't change now. Ask the assistant about redirecting the parcel instead."
	case "already_cancelled", "not_cancelled", "subscription_ended":
		return "The subscription is no longer in the state this change needs. Ask the assistant to look at it again."
	case "amount_above_refundable", "outside_refund_window", "outside_refund_window_store_credit", "reason_does_not_apply", "not_delivered":
		return "This refund isn't possible as it stands. Ask the assistant what we can do instead, or to put you through to a person."
	case "limit_one_per_day":
		return "This can be done only once a day. Please try again tomorrow."
	case "invoice_not_paid":
		return "That invoice isn't paid yet, so there is no receipt to send."
	}
	if e.Retryable {
		return "Something went wrong on our side. Ask the assistant to try again in a few minutes."
	}
	return "Ask the assistant for another way to help, or to put you through to a person."
}

// customerReason says why a request never left, for a customer: one
// confirmed and then stopped, or (task_expired) one whose conversation
// had ended before it was confirmed or carried out.
func customerReason(r controlplane.NotDispatchedReason) string {
	switch r {
	case controlplane.ReasonTaskPaused, controlplane.ReasonTaskCancelled:
		return "The conversation this came from was stopped before we could carry it out. Ask the assistant if you still want it."
	case controlplane.ReasonTaskClosed, controlplane.ReasonTaskExpired:
		return "The conversation this came from had ended, so nothing was sent. Ask the assistant if you still want it."
	case controlplane.ReasonBudgetSpent:
		return "We reached the number of changes we make in one conversation. A person can help you with this."
	case controlplane.ReasonGlobalStop:
		return "Our team paused all changes for the moment. Please ask again a little later."
	case controlplane.ReasonPolicyDisabled:
		return "We no longer make this change this way. A person can help you with it."
	case controlplane.ReasonTargetChanged:
		return "It changed after you saw the details, so we did not go ahead. Ask the assistant to prepare it again."
	case controlplane.ReasonUnreachable, controlplane.ReasonNotConnected:
		return "Our system could not be reached, and nothing was sent. Please try again a little later."
	}
	return "Ask the assistant if you still want it."
}

func customerOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// question asks a title as the page's question: its full stop becomes a
// question mark, and one already asked ("Change your address?") is kept.
func question(title string) string {
	t := strings.TrimSuffix(strings.TrimSpace(title), ".")
	if strings.HasSuffix(t, "?") {
		return t
	}
	return t + "?"
}
