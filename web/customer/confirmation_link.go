package customer

import (
	"context"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// keyCodeSent remembers, for the link page, where the last code went:
// "<selector> <masked address>".
const keyCodeSent = "code_sent"

// ConfirmationLinks shows customers their requests and checks their proof
// of who they are (confirmation.Service). The link it makes is a path on
// this console ("/c/…"); it shows the request and proves nothing.
type ConfirmationLinks interface {
	LiveLink(ctx context.Context, invocationID string) (string, error)
	Decide(ctx context.Context, p confirmation.Proved, d controlplane.CustomerDecision) (controlplane.CustomerDecided, error)
	Open(ctx context.Context, token string) (confirmation.Opened, error)
	SendCode(ctx context.Context, token string) (confirmation.SentCode, error)
	SendLink(ctx context.Context, token string) (confirmation.SentLink, error)
	OpenMailLink(ctx context.Context, token string) (confirmation.MailOpened, error)
	SpendOpened(ctx context.Context, m confirmation.MailOpened) (confirmation.MailOpened, error)
	CheckCode(ctx context.Context, token, code string) (confirmation.Opened, error)
	CheckAssertion(ctx context.Context, token, signed string) (confirmation.Opened, error)
	Accepts(system string) []confirmation.Proof
	Covers(ctx context.Context, p confirmation.Proved, inv controlplane.Invocation, taskCustomer string) error
	MayDecide(ctx context.Context, p confirmation.Proved, inv controlplane.Invocation, taskCustomer string) error
}

// handleConfirmationLink answers GET /c/:token: the request the link shows,
// rendered from its quote, with the ways its customer may prove who they
// are. Opening it changes nothing. A browser that already proved it is this
// customer goes straight to the request (and the token leaves the address
// bar); "?assertion=" carries a signed customer assertion from the
// business's own site.
func (h *Handler) handleConfirmationLink(c echo.Context) error {
	if h.cfg.Confirmations == nil {
		return h.renderLinkProblem(c, confirmation.Unknown)
	}
	ctx := c.Request().Context()
	token := c.Param("token")
	if signed := c.QueryParam("assertion"); signed != "" {
		o, err := h.cfg.Confirmations.CheckAssertion(ctx, token, signed)
		if le, ok := confirmation.AsLinkError(err); ok {
			return h.renderLinkProblem(c, le.Problem)
		}
		if e, ok := apperr.As(err); ok && e.Kind == apperr.Forbidden {
			return h.renderLinkPage(c, http.StatusForbidden, token, linkPageState{problem: h.problemText(c, e)})
		}
		if err != nil {
			return err
		}
		return h.proved(c, o, confirmation.ProofAssertion)
	}
	o, err := h.cfg.Confirmations.Open(ctx, token)
	if le, ok := confirmation.AsLinkError(err); ok {
		return h.renderLinkProblem(c, le.Problem)
	}
	if err != nil {
		return err
	}
	if p, ok := kit.CustomerOf(c); ok && h.covers(c, p, o) {
		return kit.SeeOther(c, "/requests/"+o.InvocationID)
	}
	if u, ok := kit.CurrentUser(c); ok {
		return h.renderForeignLink(c, u)
	}
	return h.renderLinkPage(c, http.StatusOK, token, linkPageState{opened: &o})
}

// handleConfirmationCode answers POST /c/:token/code: sends a one-time code
// to the contact on file in the business system, then shows the link page
// with the field to enter it.
func (h *Handler) handleConfirmationCode(c echo.Context) error {
	if h.cfg.Confirmations == nil {
		return h.renderLinkProblem(c, confirmation.Unknown)
	}
	token := c.Param("token")
	sent, err := h.cfg.Confirmations.SendCode(c.Request().Context(), token)
	if le, ok := confirmation.AsLinkError(err); ok {
		return h.renderLinkProblem(c, le.Problem)
	}
	if e, ok := apperr.As(err); ok && e.Kind != apperr.Internal {
		st := linkPageState{problem: h.problemText(c, e)}
		if sent.Opened.Selector != "" {
			st.opened = &sent.Opened // opened once: the page needs no second look
		}
		return h.renderLinkPage(c, kit.StatusOf[e.Kind], token, st)
	}
	if err != nil {
		return err
	}
	sess := kit.Session(c)
	sess.Values[keyCodeSent] = sent.Opened.Selector + " " + sent.To
	kit.MarkDirty(sess)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	return kit.SeeOther(c, confirmation.PathPrefix+token+"#code")
}

// handleConfirmationVerify answers POST /c/:token/verify: a right code
// starts a session that acts for this customer (a new session id, holding
// only the customer and how they proved it) and opens the request.
func (h *Handler) handleConfirmationVerify(c echo.Context) error {
	if h.cfg.Confirmations == nil {
		return h.renderLinkProblem(c, confirmation.Unknown)
	}
	token := c.Param("token")
	code := c.FormValue("code")
	o, err := h.cfg.Confirmations.CheckCode(c.Request().Context(), token, code)
	if le, ok := confirmation.AsLinkError(err); ok {
		return h.renderLinkProblem(c, le.Problem)
	}
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid {
		return h.renderLinkPage(c, http.StatusUnprocessableEntity, token, linkPageState{fields: h.fieldWords(c, err)})
	}
	if e, ok := apperr.As(err); ok && e.Kind != apperr.Internal {
		return h.renderLinkPage(c, kit.StatusOf[e.Kind], token, linkPageState{problem: h.problemText(c, e)})
	}
	if err != nil {
		return err
	}
	return h.proved(c, o, confirmation.ProofCode)
}

// proved starts the customer's session after a proof and opens the request.
// A console account's session is not turned into a customer's.
func (h *Handler) proved(c echo.Context, o confirmation.Opened, proof confirmation.Proof) error {
	if u, ok := kit.CurrentUser(c); ok {
		return h.renderForeignLink(c, u)
	}
	if err := h.startCustomerSession(c, o, proof); err != nil {
		return err
	}
	return kit.SeeOther(c, "/requests/"+o.InvocationID)
}

// startCustomerSession makes this browser's session one that acts for
// link o's customer on o's request only, proven by proof: a new session
// id, holding only the CSRF token and the proof.
func (h *Handler) startCustomerSession(c echo.Context, o confirmation.Opened, proof confirmation.Proof) error {
	sess := kit.Session(c)
	if err := h.Sessions.Regenerate(c.Request().Context(), sess); err != nil {
		return err
	}
	for k := range sess.Values {
		if k != kit.KeyCSRF {
			delete(sess.Values, k)
		}
	}
	p := confirmation.ProvedOn(o, proof)
	kit.KeepProof(sess, p)
	h.keepProofLocale(c.Request().Context(), sess.Values, p)
	kit.MarkDirty(sess)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	h.Log.Info("customer proved who they are", "invocation_id", o.InvocationID, "proof", string(proof))
	return nil
}

// covers says whether what the browser proved covers the request link o
// shows (a console account of that customer, or a proof made on this
// request or the one it re-quotes).
func (h *Handler) covers(c echo.Context, p confirmation.Proved, o confirmation.Opened) bool {
	inv, err := h.cfg.Control.Invocation(c.Request().Context(), o.InvocationID)
	if err != nil {
		return false
	}
	return h.cfg.Confirmations.Covers(c.Request().Context(), p, inv, o.CustomerRef) == nil
}

// linkPageState is what the link page says beyond the request itself.
type linkPageState struct {
	opened  *confirmation.Opened
	problem string
	fields  map[string]string
}

// renderLinkPage shows the request a link names, read-only, with the ways
// to prove who one is.
func (h *Handler) renderLinkPage(c echo.Context, status int, token string, st linkPageState) error {
	ctx := c.Request().Context()
	o := st.opened
	if o == nil {
		opened, err := h.cfg.Confirmations.Open(ctx, token)
		if le, ok := confirmation.AsLinkError(err); ok {
			return h.renderLinkProblem(c, le.Problem)
		}
		if err != nil {
			return err
		}
		o = &opened
	}
	inv, err := h.cfg.Control.Invocation(ctx, o.InvocationID)
	if err != nil {
		return err
	}
	task, err := h.cfg.Control.Task(ctx, inv.TaskID)
	if err != nil {
		return err
	}
	h.localiseLink(c, *o)
	csrf, err := h.CSRFToken(c)
	if err != nil {
		return err
	}
	f := h.frameFor(c, inv.System)
	v := h.customerRequestView(c, f, inv, task)
	// Until they prove who they are, a visitor sees the request, not its
	// outcome.
	v.Status = views.CustomerStatusView{ID: inv.ID}
	path := confirmation.PathPrefix + token
	pv := &views.CustomerProofView{Path: path, CSRF: csrf, Problem: st.problem, Errors: st.fields}
	for _, p := range o.Proofs {
		switch p {
		case confirmation.ProofLink:
			pv.Link = true
		case confirmation.ProofCode:
			pv.Code = true
		case confirmation.ProofAccount:
			pv.SignInURL = "/sign-in?next=" + url.QueryEscape(path)
		case confirmation.ProofAssertion:
			pv.Assertion = true
		}
	}
	if inv.State != controlplane.AwaitingConfirmation || h.expired(inv) {
		// A decided or ended request sends no mails: there is nothing to decide.
		pv.Code, pv.Link = false, false
		if pv.Problem == "" {
			e, _ := apperr.As(confirmation.NothingToDecide())
			pv.Problem = h.problemText(c, e)
		}
	}
	pv.CodeSentTo = sentFor(kit.Session(c).Values[keyCodeSent], o.Selector)
	pv.LinkSentTo = sentFor(kit.Session(c).Values[keyLinkSent], o.Selector)
	if p, ok := kit.CustomerOf(c); ok {
		if controlplane.SameCustomer(p.CustomerRef, o.CustomerRef) {
			pv.OtherRequest = true
		} else {
			pv.OtherCustomer = true
		}
	}
	pv.Passkey = h.passkeyDecideView(c, *o, inv, path, csrf, v)
	v.Prove = pv
	// Before the proof, no receipt: the link alone shows the request.
	v.Receipt = nil
	p := h.page(c, customerTitle(f.quote(inv)), f)
	p.CSRF, p.Narrow = csrf, true
	return kit.Render(c, status, views.CustomerRequestPage(p, v))
}

// renderForeignLink answers a console account opening a customer's link:
// it is someone else's request, said naming the account.
func (h *Handler) renderForeignLink(c echo.Context, u accounts.User) error {
	return h.renderLinkProblemSaying(c, foreign, locale.Params{"Email": isolate(u.Email)})
}

// foreign is the page for a link opened by a console account that is not
// the link's customer.
const foreign confirmation.Problem = "foreign"

// linkProblems is each problem's status; its page's title, message and
// what to do next are the catalogue's pages.link.<problem>.title,
// .message and .next.
var linkProblems = map[confirmation.Problem]int{
	confirmation.Unknown:  http.StatusNotFound,
	confirmation.Tampered: http.StatusBadRequest,
	confirmation.Expired:  http.StatusGone,
	confirmation.Replaced: http.StatusGone,
	foreign:               http.StatusForbidden,
}

func (h *Handler) renderLinkProblem(c echo.Context, problem confirmation.Problem) error {
	return h.renderLinkProblemSaying(c, problem, nil)
}

// renderLinkProblemSaying renders problem's page in the customer's
// language, its message given params.
func (h *Handler) renderLinkProblemSaying(c echo.Context, problem confirmation.Problem, params locale.Params) error {
	f := h.frameFor(c, "")
	key := "pages.link." + string(problem)
	title := f.t(key+".title", nil)
	p := h.page(c, title, f)
	p.Narrow = true
	return kit.Render(c, linkProblems[problem], views.LinkProblemPage(p, views.LinkProblemView{Problem: string(problem),
		Title: title, Message: f.t(key+".message", params), Next: f.t(key+".next", nil)}))
}

// sentFor is where a mail for the link of selector went, from a session
// value "<selector> <masked address>"; empty for another link's.
func sentFor(v any, selector string) string {
	sent, _ := v.(string)
	if len(sent) > len(selector) && sent[:len(selector)] == selector {
		return sent[len(selector)+1:]
	}
	return ""
}
