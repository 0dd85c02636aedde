package customer

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// keyLinkSent remembers, for the link page, where the last mail with a
// link to decide went: "<selector> <masked address>".
const keyLinkSent = "link_sent"

// handleConfirmationMail answers POST /c/:token/mail: mails the request's
// whole quote with a single-use "Review and decide" link to the contact on
// file in the business system, then shows the link page saying where it
// went. Whoever holds the confirmation link may press it: the mail goes to
// the customer's mailbox, never to an address they name. A mail that did
// not go is said so, and the page then claims no earlier one either.
func (h *Handler) handleConfirmationMail(c echo.Context) error {
	if h.cfg.Confirmations == nil {
		return h.renderLinkProblem(c, confirmation.Unknown)
	}
	token := c.Param("token")
	sent, err := h.cfg.Confirmations.SendLink(c.Request().Context(), token)
	if le, ok := confirmation.AsLinkError(err); ok {
		return h.renderLinkProblem(c, le.Problem)
	}
	if e, ok := apperr.As(err); ok && e.Kind != apperr.Internal {
		st := linkPageState{problem: h.problemText(c, e)}
		if sent.Opened.Selector != "" {
			st.opened = &sent.Opened
			if err := h.forgetLinkSent(c, sent.Opened.Selector); err != nil {
				return err
			}
		}
		return h.renderLinkPage(c, kit.StatusOf[e.Kind], token, st)
	}
	if err != nil {
		return err
	}
	sess := kit.Session(c)
	sess.Values[keyLinkSent] = sent.Opened.Selector + " " + sent.To
	kit.MarkDirty(sess)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	return kit.SeeOther(c, confirmation.PathPrefix+token+"#prove-heading")
}

// forgetLinkSent drops, when the mail just asked for on the link of
// selector did not go, the page's "We e-mailed the request to …" of an
// earlier one: the page says only what this press did.
func (h *Handler) forgetLinkSent(c echo.Context, selector string) error {
	sess := kit.Session(c)
	if sentFor(sess.Values[keyLinkSent], selector) == "" {
		return nil
	}
	delete(sess.Values, keyLinkSent)
	kit.MarkDirty(sess)
	return sess.Save(c.Request(), c.Response())
}

// handleMailLink answers GET /m/:token, the mail's "Review and decide":
// a page with one button whose POST spends the link. The GET spends and
// proves nothing (mail scanners and link previews fetch it). A browser
// that already proved it is this customer for the request (the customer's
// account, or the session that spent the link) goes to it.
func (h *Handler) handleMailLink(c echo.Context) error {
	m, done, err := h.openMailLink(c)
	if done || err != nil {
		return err
	}
	inv := m.Invocation
	h.localiseLink(c, m.Opened)
	csrf, err := h.CSRFToken(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	f := h.frameFor(c, m.System)
	p := h.page(c, locale.T(ctx, "receipt.mail_link.title", nil), f)
	p.CSRF, p.Narrow = csrf, true
	return kit.Render(c, http.StatusOK, views.MailLinkPage(p, views.MailLinkView{Title: customerTitle(quoteReadIn(ctx, inv)), Shop: namedShop(f, m.System),
		Action: confirmation.MailLinkPrefix + c.Param("token"), CSRF: csrf, Until: locale.When(ctx, m.ExpiresAt, f.zone, f.now), UntilISO: iso(m.ExpiresAt)}))
}

// handleMailLinkSpend answers POST /m/:token: spends the mail link, once,
// and starts a session that acts for this customer for this request (a new
// session id, the request, its system and the proof "link"), then opens
// the request: the quote. A browser the request is open to already spends
// nothing. The request is read once, by the look before the spend.
func (h *Handler) handleMailLinkSpend(c echo.Context) error {
	opened, done, err := h.openMailLink(c)
	if done || err != nil {
		return err
	}
	m, err := h.cfg.Confirmations.SpendOpened(c.Request().Context(), opened)
	if me, ok := confirmation.AsMailLinkError(err); ok {
		return h.renderMailProblem(c, me)
	}
	if err != nil {
		return h.mailForbidden(c, err)
	}
	return h.proved(c, m.Opened, confirmation.ProofLink)
}

// openMailLink looks at the mail link of the request's :token and answers
// when nothing is to be spent (done): the link's problem, the request for
// a browser it is open to already, a staff account's refusal.
func (h *Handler) openMailLink(c echo.Context) (confirmation.MailOpened, bool, error) {
	if h.cfg.Confirmations == nil {
		return confirmation.MailOpened{}, true, h.renderMailProblem(c, &confirmation.MailLinkError{Problem: confirmation.MailUnknown})
	}
	m, err := h.cfg.Confirmations.OpenMailLink(c.Request().Context(), c.Param("token"))
	if me, ok := confirmation.AsMailLinkError(err); ok {
		// The customer who spent it, back in the same browser, goes on.
		if me.Problem == confirmation.MailSpent && me.Was != nil && h.coversRequest(c, *me.Was) {
			return m, true, kit.SeeOther(c, "/requests/"+me.Was.ID)
		}
		return m, true, h.renderMailProblem(c, me)
	}
	if err != nil {
		return m, true, h.mailForbidden(c, err)
	}
	if h.coversRequest(c, m.Invocation) {
		return m, true, kit.SeeOther(c, "/requests/"+m.InvocationID)
	}
	if u, ok := kit.CurrentUser(c); ok {
		return m, true, h.renderForeignLink(c, u)
	}
	return m, false, nil
}

// coversRequest says whether what the browser proved covers inv; a
// browser that proved nothing reads nothing.
func (h *Handler) coversRequest(c echo.Context, inv controlplane.Invocation) bool {
	p, ok := kit.CustomerOf(c)
	if !ok {
		return false
	}
	task, err := h.cfg.Control.Task(c.Request().Context(), inv.TaskID)
	return err == nil && h.cfg.Confirmations.Covers(c.Request().Context(), p, inv, task.CustomerRef) == nil
}

// mailForbidden shows a refusal of the mail link in the words of err, or
// returns err when it is not one.
func (h *Handler) mailForbidden(c echo.Context, err error) error {
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.Forbidden {
		return err
	}
	ctx := c.Request().Context()
	lp := views.MailLinkProblemView{Problem: "not_accepted", Title: locale.T(ctx, "receipt.mail_link.not_accepted.title", nil),
		Message: h.refusalOf(c, err).message, Next: locale.T(ctx, "receipt.mail_link.not_accepted.next", nil)}
	p := h.page(c, lp.Title, h.frameFor(c, ""))
	p.Narrow = true
	return kit.Render(c, http.StatusForbidden, views.MailLinkProblemPage(p, lp))
}

// mailProblems is each mail link problem's status and the message ids of
// what its page says: <id>.title, <id>.message and <id>.next.
var mailProblems = map[confirmation.MailProblem]struct {
	status int
	id     string
}{
	confirmation.MailUnknown: {http.StatusNotFound, "receipt.mail_link.unknown"},
	confirmation.MailExpired: {http.StatusGone, "receipt.mail_link.expired"},
	confirmation.MailSpent:   {http.StatusGone, "receipt.mail_link.spent"},
	// What to do next is changedNext's: it depends on whether the new
	// quote was mailed.
	confirmation.MailChanged: {http.StatusConflict, "receipt.mail_link.quote_changed"},
	confirmation.MailDecided: {http.StatusGone, "receipt.mail_link.decided"},
}

// changedNext is the message id of what a customer holding the link of a
// changed request does next: it says "we e-mailed you" the request as it
// stands now only when that mail went or is on its way.
var changedNext = map[confirmation.MailDelivery]string{
	confirmation.MailSent:    "receipt.mail_link.quote_changed.next.sent",
	confirmation.MailQueued:  "receipt.mail_link.quote_changed.next.queued",
	confirmation.MailNotSent: "receipt.mail_link.quote_changed.next.not_sent",
}

// renderMailProblem renders the page of a mail link that proves nothing;
// for a request quoted again, what changed between the quote the mail
// showed and the one now, and whether the one now was mailed.
func (h *Handler) renderMailProblem(c echo.Context, me *confirmation.MailLinkError) error {
	system := ""
	if me.Was != nil {
		system = me.Was.System
	}
	if me.Problem == confirmation.MailChanged && me.Now != nil {
		system = me.Now.System
	}
	h.localise(c, system)
	ctx := c.Request().Context()
	mp := mailProblems[me.Problem]
	v := views.MailLinkProblemView{Problem: string(me.Problem), Title: locale.T(ctx, mp.id+".title", nil),
		Message: locale.T(ctx, mp.id+".message", nil)}
	if me.Problem == confirmation.MailChanged {
		v.Next = locale.T(ctx, changedNext[me.NowMail], nil)
	} else {
		v.Next = locale.T(ctx, mp.id+".next", nil)
	}
	if me.Problem == confirmation.MailChanged {
		if me.Was != nil {
			v.Was = quoteWords(ctx, *me.Was)
		}
		if me.Now != nil {
			v.Now = quoteWords(ctx, *me.Now)
		}
		if me.Was != nil && me.Now != nil {
			v.Changes = quoteChanges(h.frameFor(c, system), me.Was.Quote, me.Now.Quote)
		}
	}
	p := h.page(c, v.Title, h.frameFor(c, system))
	p.Narrow = true
	return kit.Render(c, mp.status, views.MailLinkProblemPage(p, v))
}

// quoteWords is a quote as lines of words, in the customer's language
// (quoteReadIn): its title, then each line as the customer's page says it.
func quoteWords(ctx context.Context, inv controlplane.Invocation) []string {
	q := quoteReadIn(ctx, inv)
	out := []string{customerTitle(q)}
	for _, l := range q.Lines {
		switch {
		case l.Customer != "":
			out = append(out, l.Customer)
		case l.From != "":
			out = append(out, locale.T(ctx, "receipt.mail_link.line.change", locale.Params{"Label": l.Label, "From": l.From, "To": l.To}))
		default:
			out = append(out, locale.T(ctx, "receipt.mail_link.line", locale.Params{"Label": l.Label, "To": l.To}))
		}
	}
	return out
}

// quoteReadIn is inv's quote as the customer's language reads it
// (adapter.Quote.In): its translation, else as written.
func quoteReadIn(ctx context.Context, inv controlplane.Invocation) adapter.Quote {
	l, _ := locale.From(ctx)
	return inv.Quote.In(l.Tag().String())
}
