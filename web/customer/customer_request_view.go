package customer

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/adapter"
	"countersign/internal/consent"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
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
	p := h.page(c, customerTitle(f.quote(inv)), f)
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
	q := f.quote(inv)
	decide := inv.State == controlplane.AwaitingConfirmation && !h.expired(inv)
	v := views.CustomerRequestView{ID: inv.ID, Title: q.Title, Consequences: q.Consequences, Decide: decide,
		ConfirmLabel: customerOr(q.ConfirmLabel, f.t("pages.request.confirm", nil)), DeclineLabel: customerOr(q.DeclineLabel, f.t("pages.request.decline", nil)),
		Status: h.customerStatusNow(c.Request().Context(), f, inv, ""), Outcome: customerConsequences(f, inv.State, h.expired(inv)),
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
			v.Date, v.DateLabel = f.at(*cf.Date), customerOr(cf.DateLabel, f.t("pages.request.facts.date", nil))
		}
	}
	if decide {
		v.Title = f.question(v.Title)
		v.Deadline = f.t("pages.request.deadline", locale.Params{"When": isolate(f.at(*inv.DeadlineAt))})
		if task.State != controlplane.TaskActive {
			v.OnHold = f.t("pages.request.on_hold", nil)
		}
		if inv.SupersedesID != "" {
			if prev, err := h.cfg.Control.Invocation(c.Request().Context(), inv.SupersedesID); err == nil && prev.TaskID == inv.TaskID {
				v.Changes = quoteChanges(f, f.quote(prev), q)
			}
		}
	}
	shown := false
	for _, l := range q.Lines {
		v.Lines = append(v.Lines, customerLine(l))
		if q.AmountCents != nil && l.Emphasis && (l.To == money.Format(*q.AmountCents, q.Currency) || l.To == f.money(*q.AmountCents, q.Currency)) {
			shown = true
		}
	}
	// The amount once: a quote whose total line carries it (as the
	// adapter wrote it, or as the customer's language does) needs no
	// second "Amount" beside it.
	if q.AmountCents != nil && !shown {
		v.Amount = f.money(*q.AmountCents, q.Currency)
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

// quote is the request's quote as the customer reads it: in their
// language when the adapter wrote it in that one too (adapter.Quote.In),
// else as written. The stored quote keeps every translation; the staff
// console shows it as written.
func (f customerFrame) quote(inv controlplane.Invocation) adapter.Quote {
	return inv.Quote.In(f.loc.Tag().String())
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

// customerBadge is a state's badge text in the customer's words (a
// catalogue message per state) where the console's word is the staff's;
// the badge's tone stays the state's.
func customerBadge(f customerFrame, state controlplane.State) string {
	return f.t("pages.badge."+string(state), locale.Params{"Shop": f.shop()})
}

// quoteChanges lists what differs between the quote that was replaced and
// the fresh one, line by line, in the quotes' own words.
func quoteChanges(f customerFrame, was, now adapter.Quote) []views.CustomerQuoteChange {
	old := map[string]string{}
	for _, l := range was.Lines {
		old[l.Label] = f.lineText(l)
	}
	var out []views.CustomerQuoteChange
	for _, l := range now.Lines {
		if o, ok := old[l.Label]; ok && o != f.lineText(l) {
			out = append(out, views.CustomerQuoteChange{Label: l.Label, Was: o, Now: f.lineText(l)})
		}
	}
	if was.AmountCents != nil && now.AmountCents != nil && *was.AmountCents != *now.AmountCents {
		out = append(out, views.CustomerQuoteChange{Label: f.t("pages.request.changed.amount", nil), Was: f.money(*was.AmountCents, was.Currency),
			Now: f.money(*now.AmountCents, now.Currency)})
	}
	if len(out) == 0 {
		out = append(out, views.CustomerQuoteChange{Label: f.t("pages.request.changed.target", nil),
			Was: f.t("pages.request.changed.target.was", nil), Now: f.t("pages.request.changed.target.now", nil)})
	}
	return out
}

// lineText is a line's value in the customer's language: "from → to",
// the arrow pointing the language's reading direction (a catalogue
// message), or the value alone.
func (f customerFrame) lineText(l adapter.QuoteLine) string {
	if l.From != "" {
		return f.t("pages.request.from_to", locale.Params{"From": l.From, "To": l.To})
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
		st.BadgeClass, st.BadgeText = layout.StateBadge(state).Tone, customerBadge(f, state)
	}
	badge(inv.State)
	working := func(key string, poll int) views.CustomerStatusView {
		st.Headline, st.Detail = f.t("pages.status."+key+".headline", nil), f.t("pages.status."+key+".detail", nil)
		st.Pending, st.PollSeconds = true, poll
		return st
	}
	final := func(headline, detail string) views.CustomerStatusView {
		st.Headline, st.Detail = headline, detail
		return st
	}
	// decided says who ended it and why, with the badge in the
	// customer's words ("You declined", "Declined by our team").
	decided := func(inv controlplane.Invocation) views.CustomerStatusView {
		by, words, headline, detail, ok := decidedBy(f, inv)
		if !ok {
			return final(f.t("pages.status.not_carried_out", nil), "")
		}
		st.DecidedBy, st.BadgeText = by, words
		return final(headline, detail)
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
		return working("approval", 10)
	case controlplane.Proposed, controlplane.Approved, controlplane.Dispatching:
		return working("working", 1)
	case controlplane.Completed:
		// The action's own words when the adapter gives them: the
		// quote's in the page's language, else (a quote stored before
		// quotes carried them) the spec's as the assistant says them,
		// else the catalogue's.
		headline := f.t("pages.status.done.headline", nil)
		if done := f.quote(inv).DoneWords; done != "" {
			headline = done + "."
		} else if spec.DoneWords != "" {
			headline = spec.DoneWords + "."
		}
		st.Reference = inv.CustomerReference()
		detail := f.t("pages.status.done.detail", nil)
		if cf := f.quote(inv).Customer; cf != nil && cf.MoneyArrives != "" {
			detail = f.t("pages.status.done.money", locale.Params{"MoneyArrives": kit.LowerFirst(strings.TrimSuffix(cf.MoneyArrives, "."))})
		}
		return final(headline, detail)
	case controlplane.Unverified:
		return working("unverified", 10)
	case controlplane.Failed:
		st.DecidedBy = "system"
		return final(f.t("pages.status.failed.headline", nil), customerHint(f, inv.Error))
	case controlplane.NotDispatched:
		st.DecidedBy = "system"
		if inv.Withdrawn() {
			// It waited for a decision when its task was cancelled: nobody
			// decided on it, and nothing of it took place.
			st.BadgeText = f.t("pages.badge.withdrawn", nil)
			return final(f.t("pages.status.withdrawn.headline", nil), f.t("pages.status.withdrawn.detail", nil))
		}
		return final(f.t("pages.status.not_carried_out", nil), customerReason(f, inv.NotDispatchedReason))
	case controlplane.Rejected, controlplane.Expired:
		return decided(inv)
	case controlplane.Reversed:
		st.Reference = inv.CustomerReference()
		return final(f.t("pages.status.reversed.headline", nil), "")
	}
	return final(f.t("pages.status.unknown.headline", nil), "")
}

// customerHint turns a refusal into what a customer can do about it; the
// adapter's own hints are written for the assistant and for agents.
func customerHint(f customerFrame, e *adapter.Error) string {
	if e == nil {
		return f.t("pages.hint.default", nil)
	}
	switch e.Code {
	case "payment_method_declined", "order_already_fulfilled", "limit_one_per_day", "invoice_not_paid":
		return f.t("pages.hint."+e.Code, nil)
	case "already_cancelled", "not_cancelled", "subscription_ended":
		return f.t("pages.hint.subscription_state", nil)
	case "amount_above_refundable", "outside_refund_window", "outside_refund_window_store_credit", "reason_does_not_apply", "not_delivered":
		return f.t("pages.hint.refund_not_possible", nil)
	}
	if e.Retryable {
		return f.t("pages.hint.retry", nil)
	}
	return f.t("pages.hint.default", nil)
}

// customerReason says why a request never left, for a customer: one
// confirmed and then stopped, or (task_expired) one whose conversation
// had ended before it was confirmed or carried out.
func customerReason(f customerFrame, r controlplane.NotDispatchedReason) string {
	switch r {
	case controlplane.ReasonTaskPaused, controlplane.ReasonTaskCancelled:
		return f.t("pages.reason.task_stopped", nil)
	case controlplane.ReasonTaskClosed, controlplane.ReasonTaskExpired:
		return f.t("pages.reason.task_ended", nil)
	case controlplane.ReasonBudgetSpent:
		return f.t("pages.reason.budget_spent", nil)
	case controlplane.ReasonGlobalStop:
		return f.t("pages.reason.global_stop", nil)
	case controlplane.ReasonPolicyDisabled:
		return f.t("pages.reason.policy_disabled", nil)
	case controlplane.ReasonTargetChanged:
		return f.t("pages.reason.target_changed", nil)
	case controlplane.ReasonUnreachable, controlplane.ReasonNotConnected:
		return f.t("pages.reason.unreachable", nil)
	case controlplane.ReasonCurrencyNotLimited, controlplane.ReasonMixedCurrency:
		return f.t("pages.reason.currency", nil)
	}
	return f.t("pages.reason.other", nil)
}

func customerOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// question asks a title as the page's question, as the customer's
// language writes one (pages.request.question: "…?", "… ?", "…؟"): its
// full stop goes, and one already asked ("Change your address?") is kept.
func (f customerFrame) question(title string) string {
	t := strings.TrimSuffix(strings.TrimSpace(title), ".")
	if strings.HasSuffix(t, "?") || strings.HasSuffix(t, "؟") {
		return t
	}
	return f.t("pages.request.question", locale.Params{"Title": t})
}
