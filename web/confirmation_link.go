package web

import (
	"context"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/views"
)

// Session values of a customer who proved who they are on a link page.
// They are not a console account: they open and decide only the request
// the proof was made on (and its re-quotes), never the customer's others.
const (
	keyProvedCustomer = "proved_customer"
	keyCustomerProof  = "customer_proof"
	// keyProvedFor and keyProvedSystem name the request the proof was made
	// on: its link's invocation and that invocation's system.
	keyProvedFor    = "proved_for"
	keyProvedSystem = "proved_system"
	// keyCodeSent remembers, for the link page, where the last code went:
	// "<selector> <masked address>".
	keyCodeSent = "code_sent"
)

// ConfirmationLinks shows customers their requests and checks their proof
// of who they are (confirmation.Service). The link it makes is a path on
// this console ("/c/…"); it shows the request and proves nothing.
type ConfirmationLinks interface {
	LiveLink(ctx context.Context, invocationID string) (string, error)
	Decide(ctx context.Context, p confirmation.Proved, d controlplane.CustomerDecision) (controlplane.CustomerDecided, error)
	Open(ctx context.Context, token string) (confirmation.Opened, error)
	SendCode(ctx context.Context, token string) (confirmation.SentCode, error)
	CheckCode(ctx context.Context, token, code string) (confirmation.Opened, error)
	CheckAssertion(ctx context.Context, token, signed string) (confirmation.Opened, error)
	Accepts(system string) []confirmation.Proof
	Covers(ctx context.Context, p confirmation.Proved, inv controlplane.Invocation, taskCustomer string) error
	MayDecide(ctx context.Context, p confirmation.Proved, inv controlplane.Invocation, taskCustomer string) error
}

// customerOf returns the customer this request acts for and what they
// proved: a signed-in customer account (its e-mail; it spans their
// requests), or a code or an assertion made on one link page (it covers
// that request only). Staff accounts act for no customer, and holding a
// link is no proof.
func customerOf(c echo.Context) (confirmation.Proved, bool) {
	if u, signedIn := currentUser(c); signedIn {
		if u.Role == accounts.Customer {
			return confirmation.Proved{CustomerRef: u.Email, Proof: confirmation.ProofAccount}, true
		}
		return confirmation.Proved{}, false
	}
	sess := session(c)
	if sess == nil || sess.IsNew {
		return confirmation.Proved{}, false
	}
	var p confirmation.Proved
	p.CustomerRef, _ = sess.Values[keyProvedCustomer].(string)
	proof, _ := sess.Values[keyCustomerProof].(string)
	p.InvocationID, _ = sess.Values[keyProvedFor].(string)
	p.System, _ = sess.Values[keyProvedSystem].(string)
	kind, known := confirmation.ParseProof(proof)
	// A link's session never holds an account's proof, and a code or an
	// assertion always names its request.
	if p.CustomerRef == "" || !known || kind == confirmation.ProofAccount || p.InvocationID == "" {
		return confirmation.Proved{}, false
	}
	p.Proof = kind
	return p, true
}

// handleConfirmationLink answers GET /c/:token: the request the link shows,
// rendered from its quote, with the ways its customer may prove who they
// are. Opening it changes nothing. A browser that already proved it is this
// customer goes straight to the request (and the token leaves the address
// bar); "?assertion=" carries a signed customer assertion from the
// business's own site.
func (s *Server) handleConfirmationLink(c echo.Context) error {
	if s.cfg.Confirmations == nil {
		return s.renderLinkProblem(c, confirmation.Unknown)
	}
	ctx := c.Request().Context()
	token := c.Param("token")
	if signed := c.QueryParam("assertion"); signed != "" {
		o, err := s.cfg.Confirmations.CheckAssertion(ctx, token, signed)
		if le, ok := confirmation.AsLinkError(err); ok {
			return s.renderLinkProblem(c, le.Problem)
		}
		if e, ok := apperr.As(err); ok && e.Kind == apperr.Forbidden {
			return s.renderLinkPage(c, http.StatusForbidden, token, linkPageState{problem: e.Message + " " + e.Hint})
		}
		if err != nil {
			return err
		}
		return s.proved(c, o, confirmation.ProofAssertion)
	}
	o, err := s.cfg.Confirmations.Open(ctx, token)
	if le, ok := confirmation.AsLinkError(err); ok {
		return s.renderLinkProblem(c, le.Problem)
	}
	if err != nil {
		return err
	}
	if p, ok := customerOf(c); ok && s.covers(c, p, o) {
		return seeOther(c, "/requests/"+o.InvocationID)
	}
	if u, ok := currentUser(c); ok {
		return s.renderForeignLink(c, u)
	}
	return s.renderLinkPage(c, http.StatusOK, token, linkPageState{opened: &o})
}

// handleConfirmationCode answers POST /c/:token/code: sends a one-time code
// to the contact on file in the business system, then shows the link page
// with the field to enter it.
func (s *Server) handleConfirmationCode(c echo.Context) error {
	if s.cfg.Confirmations == nil {
		return s.renderLinkProblem(c, confirmation.Unknown)
	}
	token := c.Param("token")
	sent, err := s.cfg.Confirmations.SendCode(c.Request().Context(), token)
	if le, ok := confirmation.AsLinkError(err); ok {
		return s.renderLinkProblem(c, le.Problem)
	}
	if e, ok := apperr.As(err); ok && e.Kind != apperr.Internal {
		st := linkPageState{problem: joinSentences(e.Message, e.Hint)}
		if sent.Opened.Selector != "" {
			st.opened = &sent.Opened // opened once: the page needs no second look
		}
		return s.renderLinkPage(c, statusOf[e.Kind], token, st)
	}
	if err != nil {
		return err
	}
	sess := session(c)
	sess.Values[keyCodeSent] = sent.Opened.Selector + " " + sent.To
	markDirty(sess)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	return seeOther(c, confirmation.PathPrefix+token+"#code")
}

// handleConfirmationVerify answers POST /c/:token/verify: a right code
// starts a session that acts for this customer (a new session id, holding
// only the customer and how they proved it) and opens the request.
func (s *Server) handleConfirmationVerify(c echo.Context) error {
	if s.cfg.Confirmations == nil {
		return s.renderLinkProblem(c, confirmation.Unknown)
	}
	token := c.Param("token")
	code := c.FormValue("code")
	o, err := s.cfg.Confirmations.CheckCode(c.Request().Context(), token, code)
	if le, ok := confirmation.AsLinkError(err); ok {
		return s.renderLinkProblem(c, le.Problem)
	}
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid {
		return s.renderLinkPage(c, http.StatusUnprocessableEntity, token, linkPageState{fields: e.Fields})
	}
	if e, ok := apperr.As(err); ok && e.Kind != apperr.Internal {
		return s.renderLinkPage(c, statusOf[e.Kind], token, linkPageState{problem: joinSentences(e.Message, e.Hint)})
	}
	if err != nil {
		return err
	}
	return s.proved(c, o, confirmation.ProofCode)
}

// proved starts the customer's session after a proof and opens the request.
// A console account's session is not turned into a customer's.
func (s *Server) proved(c echo.Context, o confirmation.Opened, proof confirmation.Proof) error {
	if u, ok := currentUser(c); ok {
		return s.renderForeignLink(c, u)
	}
	sess := session(c)
	if err := s.cfg.Sessions.Regenerate(c.Request().Context(), sess); err != nil {
		return err
	}
	for k := range sess.Values {
		if k != keyCSRF {
			delete(sess.Values, k)
		}
	}
	p := confirmation.ProvedOn(o, proof)
	sess.Values[keyProvedCustomer] = p.CustomerRef
	sess.Values[keyCustomerProof] = string(p.Proof)
	sess.Values[keyProvedFor] = p.InvocationID
	sess.Values[keyProvedSystem] = p.System
	markDirty(sess)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	s.log.Info("customer proved who they are", "invocation_id", o.InvocationID, "proof", string(proof))
	return seeOther(c, "/requests/"+o.InvocationID)
}

// covers says whether what the browser proved covers the request link o
// shows (a console account of that customer, or a proof made on this
// request or the one it re-quotes).
func (s *Server) covers(c echo.Context, p confirmation.Proved, o confirmation.Opened) bool {
	inv, err := s.cfg.Control.Invocation(c.Request().Context(), o.InvocationID)
	if err != nil {
		return false
	}
	return s.cfg.Confirmations.Covers(c.Request().Context(), p, inv, o.CustomerRef) == nil
}

// linkPageState is what the link page says beyond the request itself.
type linkPageState struct {
	opened  *confirmation.Opened
	problem string
	fields  map[string]string
}

// renderLinkPage shows the request a link names, read-only, with the ways
// to prove who one is.
func (s *Server) renderLinkPage(c echo.Context, status int, token string, st linkPageState) error {
	ctx := c.Request().Context()
	o := st.opened
	if o == nil {
		opened, err := s.cfg.Confirmations.Open(ctx, token)
		if le, ok := confirmation.AsLinkError(err); ok {
			return s.renderLinkProblem(c, le.Problem)
		}
		if err != nil {
			return err
		}
		o = &opened
	}
	inv, err := s.cfg.Control.Invocation(ctx, o.InvocationID)
	if err != nil {
		return err
	}
	task, err := s.cfg.Control.Task(ctx, inv.TaskID)
	if err != nil {
		return err
	}
	csrf, err := s.csrfToken(c)
	if err != nil {
		return err
	}
	v := s.customerRequestView(c, inv, task)
	// Until they prove who they are, a visitor sees the request, not its
	// outcome.
	v.Status = views.CustomerStatusView{ID: inv.ID}
	path := confirmation.PathPrefix + token
	pv := &views.CustomerProofView{Path: path, CSRF: csrf, Problem: st.problem, Errors: st.fields}
	for _, p := range o.Proofs {
		switch p {
		case confirmation.ProofCode:
			pv.Code = true
		case confirmation.ProofAccount:
			pv.SignInURL = "/sign-in?next=" + url.QueryEscape(path)
		case confirmation.ProofAssertion:
			pv.Assertion = true
		}
	}
	if inv.State != controlplane.AwaitingConfirmation || s.expired(inv) {
		// A decided or ended request sends no codes: there is nothing to decide.
		pv.Code = false
		if pv.Problem == "" {
			e, _ := apperr.As(confirmation.NothingToDecide())
			pv.Problem = joinSentences(e.Message, e.Hint)
		}
	}
	if sent, _ := session(c).Values[keyCodeSent].(string); len(sent) > len(o.Selector) && sent[:len(o.Selector)] == o.Selector {
		pv.CodeSentTo = sent[len(o.Selector)+1:]
	}
	if p, ok := customerOf(c); ok {
		if controlplane.SameCustomer(p.CustomerRef, o.CustomerRef) {
			pv.OtherRequest = true
		} else {
			pv.OtherCustomer = true
		}
	}
	v.Prove = pv
	p, err := s.page(c, inv.Quote.Title)
	if err != nil {
		return err
	}
	p.CSRF, p.Narrow = csrf, true
	return render(c, status, views.CustomerRequestPage(p, v))
}

// renderForeignLink answers a console account opening a customer's link:
// it is someone else's request.
func (s *Server) renderForeignLink(c echo.Context, u accounts.User) error {
	return s.renderLinkProblemSaying(c, foreign, "You are signed in as "+u.Email+". ")
}

// foreign is the page for a link opened by a console account that is not
// the link's customer.
const foreign confirmation.Problem = "foreign"

// linkProblems is what each problem's page says, and its status.
var linkProblems = map[confirmation.Problem]struct {
	status                 int
	title, message, action string
}{
	confirmation.Unknown: {http.StatusNotFound, "We don't recognise this link",
		"This link is not one we sent, or it was mistyped. Nothing has changed.",
		"Ask the assistant to send you the confirmation link again."},
	confirmation.Tampered: {http.StatusBadRequest, "This link is damaged",
		"Part of the link is missing or was changed, so we cannot open it. This often happens when a long link is copied in pieces. Nothing has changed.",
		"Copy the whole link from the assistant's message, or ask the assistant for a new one."},
	confirmation.Expired: {http.StatusGone, "This link has expired",
		"The time to decide on this request has passed, so nothing was changed.",
		"If you still want it, ask the assistant to prepare it again."},
	confirmation.Replaced: {http.StatusGone, "This link was replaced",
		"A newer link was made for this request, so this one no longer opens. Nothing has changed.",
		"Use the newest link you were sent, or ask the assistant for it."},
	foreign: {http.StatusForbidden, "This link is for a customer",
		"This link was sent to a customer, so we will not show it while you are signed in with another account.",
		"If the link is yours, sign out and open it again."},
}

func (s *Server) renderLinkProblem(c echo.Context, problem confirmation.Problem) error {
	return s.renderLinkProblemSaying(c, problem, "")
}

// renderLinkProblemSaying renders problem's page, its message led by lead.
func (s *Server) renderLinkProblemSaying(c echo.Context, problem confirmation.Problem, lead string) error {
	lp := linkProblems[problem]
	p, err := s.page(c, lp.title)
	if err != nil {
		return err
	}
	p.Narrow = true
	return render(c, lp.status, views.LinkProblemPage(p, views.LinkProblemView{Problem: string(problem),
		Title: lp.title, Message: lead + lp.message, Next: lp.action}))
}

func joinSentences(a, b string) string {
	if b == "" {
		return a
	}
	return a + " " + b
}
