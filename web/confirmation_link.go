package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"countersign/accounts"
	"countersign/confirmation"
	"countersign/views"
)

// keyCustomerRef holds, in a customer's link session, the customer it acts
// for. It is not a console account: it opens only that customer's requests.
const keyCustomerRef = "customer_ref"

// The console's link service is what Config.Confirmations expects.
var _ ConfirmationLinks = (*confirmation.Service)(nil)

// confirmations returns the link service: the configured one, or one over
// the server's own store and control plane (links made elsewhere are rows
// in the same database, so either can redeem them).
func (s *Server) confirmations() *confirmation.Service {
	if cs, ok := s.cfg.Confirmations.(*confirmation.Service); ok {
		return cs
	}
	return confirmation.New(s.cfg.Store, s.cfg.Control, s.now)
}

// customerOf returns the customer this request acts for: a signed-in
// customer account's e-mail, or the customer of a link session. Staff
// accounts act for no customer.
func customerOf(c echo.Context) (string, bool) {
	if u, ok := currentUser(c); ok {
		if u.Role == accounts.Customer {
			return u.Email, true
		}
		return "", false
	}
	sess := session(c)
	if sess == nil || sess.IsNew {
		return "", false
	}
	ref, _ := sess.Values[keyCustomerRef].(string)
	return ref, ref != ""
}

// handleConfirmationLink answers GET /c/:token: a valid link starts a
// customer session (a new session id holding only the customer) and
// redirects to the request without the token, so it leaves the address bar
// and the Referer. A link that does not open gets a page saying why.
func (s *Server) handleConfirmationLink(c echo.Context) error {
	ctx := c.Request().Context()
	holder := ""
	u, signedIn := currentUser(c)
	if signedIn {
		holder = u.Email
	}
	got, err := s.confirmations().Redeem(ctx, c.Param("token"), holder)
	if le, ok := confirmation.AsLinkError(err); ok {
		// Opening one's own link twice (a second click in the chat) is not an
		// error: this browser already acts for that customer.
		if ref, mine := customerOf(c); mine && le.Problem == confirmation.Used && ref == le.CustomerRef {
			return seeOther(c, "/requests/"+le.InvocationID)
		}
		return s.renderLinkProblem(c, le.Problem, u.Email)
	}
	if err != nil {
		return err
	}
	if !signedIn {
		sess := session(c)
		if err := s.cfg.Sessions.Regenerate(ctx, sess); err != nil {
			return err
		}
		sess.Values[keyCustomerRef] = got.CustomerRef
		markDirty(sess)
		if err := sess.Save(c.Request(), c.Response()); err != nil {
			return err
		}
	}
	s.log.Info("confirmation link opened", "invocation_id", got.InvocationID)
	return seeOther(c, "/requests/"+got.InvocationID)
}

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
	confirmation.Used: {http.StatusGone, "This link has already been used",
		"Each link opens once, and this one was opened before. Opening it changed nothing.",
		"If you opened it on another device, carry on there. Otherwise ask the assistant for a new link, or sign in to see your requests."},
	confirmation.Foreign: {http.StatusForbidden, "This link is for another customer",
		"This link was sent to someone else, so we will not show it while you are signed in with another account.",
		"If the link is yours, sign out and open it again."},
}

func (s *Server) renderLinkProblem(c echo.Context, problem confirmation.Problem, signedInAs string) error {
	lp := linkProblems[problem]
	p, err := s.page(c, lp.title)
	if err != nil {
		return err
	}
	p.Narrow = true
	msg := lp.message
	if problem == confirmation.Foreign && signedInAs != "" {
		msg = "You are signed in as " + signedInAs + ". " + msg
	}
	return render(c, lp.status, views.LinkProblemPage(p, views.LinkProblemView{Problem: string(problem),
		Title: lp.title, Message: msg, Next: lp.action}))
}
