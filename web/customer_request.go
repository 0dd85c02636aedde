package web

import (
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/views"
)

// customerRequest loads the invocation named by :id when what this browser
// proved covers it: a customer account of the task's customer, or a code
// or an assertion made on this request's link (confirmation.Covers).
// Another customer's request, a staff account and an unknown id all get
// the same "not found", so ids reveal nothing; the customer's other
// requests, to a code or an assertion, answer "show us it's you for this
// request".
func (s *Server) customerRequest(c echo.Context) (controlplane.Invocation, controlplane.Task, controlplane.Actor, error) {
	return s.loadCustomerRequest(c, false)
}

// decidingRequest is customerRequest for every path that decides — confirm,
// decline, stop: the proof must also be one the request's system accepts
// (confirmation.MayDecide, the one check all of them make).
func (s *Server) decidingRequest(c echo.Context) (controlplane.Invocation, controlplane.Task, controlplane.Actor, error) {
	return s.loadCustomerRequest(c, true)
}

func (s *Server) loadCustomerRequest(c echo.Context, deciding bool) (controlplane.Invocation, controlplane.Task, controlplane.Actor, error) {
	ctx := c.Request().Context()
	none := controlplane.Actor{}
	p, ok := customerOf(c)
	if !ok {
		if _, signedIn := currentUser(c); signedIn {
			return controlplane.Invocation{}, controlplane.Task{}, none, noSuchRequest()
		}
		return controlplane.Invocation{}, controlplane.Task{}, none, &apperr.Error{Kind: apperr.Unauthenticated, Code: "customer_session",
			Message: "Open the link from your assistant again and show us it's you, or sign in to see your requests."}
	}
	inv, err := s.cfg.Control.Invocation(ctx, c.Param("id"))
	if apperr.Is(err, apperr.NotFound) {
		return controlplane.Invocation{}, controlplane.Task{}, none, noSuchRequest()
	}
	if err != nil {
		return controlplane.Invocation{}, controlplane.Task{}, none, err
	}
	task, err := s.cfg.Control.Task(ctx, inv.TaskID)
	if err != nil {
		return controlplane.Invocation{}, controlplane.Task{}, none, err
	}
	check := s.cfg.Confirmations.Covers
	if deciding {
		check = s.cfg.Confirmations.MayDecide
	}
	if err := check(ctx, p, inv, task.CustomerRef); apperr.Is(err, apperr.NotFound) {
		return controlplane.Invocation{}, controlplane.Task{}, none, noSuchRequest()
	} else if err != nil {
		return controlplane.Invocation{}, controlplane.Task{}, none, err
	}
	return inv, task, controlplane.CustomerProvedOn(task.CustomerRef, string(p.Proof), p.InvocationID), nil
}

func noSuchRequest() error {
	return &apperr.Error{Kind: apperr.NotFound, Code: "request_not_found",
		Message: "We could not find this request among yours.", Hint: "Open the link from your assistant again, or see your requests."}
}

// handleCustomerRequest answers GET /requests/:id: the request as quoted,
// with the decision while it awaits the customer, else its outcome. A
// request replaced by a fresh quote sends the customer to the fresh one.
func (s *Server) handleCustomerRequest(c echo.Context) error {
	inv, task, _, err := s.customerRequest(c)
	if err != nil {
		return err
	}
	if next, ok := s.successorOf(c, inv); ok {
		return seeOther(c, "/requests/"+next)
	}
	// A link session lives while the customer is active, like a sign-in.
	if sess := session(c); sess != nil && !sess.IsNew {
		if err := sess.Save(c.Request(), c.Response()); err != nil {
			return err
		}
	}
	return s.renderCustomerRequest(c, http.StatusOK, inv, task, "", nil)
}

// handleCustomerRequestStatus answers GET /requests/:id/status: for htmx,
// the outcome fragment (286 once it is final, which stops the polling);
// without JavaScript, the whole page.
func (s *Server) handleCustomerRequestStatus(c echo.Context) error {
	inv, task, _, err := s.customerRequest(c)
	if err != nil {
		return err
	}
	if c.Request().Header.Get("HX-Request") != "true" {
		return s.renderCustomerRequest(c, http.StatusOK, inv, task, "", nil)
	}
	st := s.customerStatusNow(c.Request().Context(), inv, "")
	status := http.StatusOK
	if !st.Pending {
		status = 286
	}
	return render(c, status, views.CustomerRequestStatus(st))
}

// handleCustomerConfirm answers POST /requests/:id/confirm. At that moment
// it re-checks the request still awaits this customer, the work is not on
// hold, and the target is unchanged since the quote (a fresh dry-run): a
// changed target replaces the request with a fresh quote and asks again.
// A second click, a second tab or a retried POST finds the request decided
// and is shown the current outcome; the guarded transition lets one through.
func (s *Server) handleCustomerConfirm(c echo.Context) error {
	ctx := c.Request().Context()
	inv, task, actor, err := s.decidingRequest(c)
	if err != nil {
		return err
	}
	back := "/requests/" + inv.ID
	if inv.State != controlplane.AwaitingConfirmation || task.State != controlplane.TaskActive || s.expired(inv) {
		return seeOther(c, back)
	}
	rq, err := s.cfg.Control.Requote(ctx, actor, inv.ID)
	if err != nil {
		return err
	}
	if rq.Changed {
		if rq.Current.ID != "" {
			return seeOther(c, "/requests/"+rq.Current.ID)
		}
		return seeOther(c, back)
	}
	_, err = s.cfg.Control.Confirm(ctx, actor, inv.ID, inv.Version)
	if e, ok := apperr.As(err); ok && (e.Kind == apperr.IllegalTransition || e.Kind == apperr.Conflict) {
		return seeOther(c, back) // decided meanwhile: show what happened
	}
	if err != nil {
		return err
	}
	s.log.Info("customer confirmed", "invocation_id", inv.ID)
	return seeOther(c, back)
}

// handleCustomerDecline answers POST /requests/:id/decline, with an
// optional reason the assistant sees.
func (s *Server) handleCustomerDecline(c echo.Context) error {
	ctx := c.Request().Context()
	inv, task, actor, err := s.decidingRequest(c)
	if err != nil {
		return err
	}
	back := "/requests/" + inv.ID
	if inv.State != controlplane.AwaitingConfirmation {
		return seeOther(c, back)
	}
	reason := c.FormValue("reason")
	_, err = s.cfg.Control.Decline(ctx, actor, inv.ID, inv.Version, reason)
	if e, ok := apperr.As(err); ok {
		switch e.Kind {
		case apperr.Invalid:
			return s.renderCustomerRequest(c, http.StatusUnprocessableEntity, inv, task, reason, e.Fields)
		case apperr.IllegalTransition, apperr.Conflict:
			return seeOther(c, back)
		}
	}
	if err != nil {
		return err
	}
	return seeOther(c, back)
}

// handleCustomerStop answers POST /requests/:id/stop, the customer's "Stop
// this": the task behind the request is paused as a person's pause, which
// only a console user lifts (an assistant's resume answers 403
// paused_by_person), so nothing more of it is dispatched. It needs the
// same proof as deciding the request, and the audit trail records it as
// the customer's, with that proof.
func (s *Server) handleCustomerStop(c echo.Context) error {
	inv, task, actor, err := s.decidingRequest(c)
	if err != nil {
		return err
	}
	back := "/requests/" + inv.ID
	_, err = s.cfg.Control.Pause(c.Request().Context(), actor, task.ID, 0)
	if e, ok := apperr.As(err); ok && (e.Kind == apperr.IllegalTransition || e.Kind == apperr.Conflict) {
		return seeOther(c, back) // paused or ended meanwhile: the page says so
	}
	if err != nil {
		return err
	}
	s.log.Info("customer stopped the task", "task_id", task.ID, "invocation_id", inv.ID)
	return seeOther(c, back)
}

// mayStop says whether the page offers "Stop this": the task still works
// and this browser's proof may decide the request.
func (s *Server) mayStop(c echo.Context, inv controlplane.Invocation, task controlplane.Task) bool {
	if task.State != controlplane.TaskActive {
		return false
	}
	p, ok := customerOf(c)
	return ok && s.cfg.Confirmations.MayDecide(c.Request().Context(), p, inv, task.CustomerRef) == nil
}

// myRequestsLimit is how many of a customer's newest requests the list
// reads.
const myRequestsLimit = 100

// handleMyRequests answers GET /requests: the requests of the customer
// this browser acts for. A signed-in customer account sees all of theirs;
// a customer who proved who they are on a link page (a code, an assertion)
// sees only the request they proved (and its re-quotes), and is offered
// signing in for the rest. Holding a link is not proof, so a visitor
// without one is told how to show it's them; a staff account acts for no
// customer.
func (s *Server) handleMyRequests(c echo.Context) error {
	ctx := c.Request().Context()
	p, ok := customerOf(c)
	if !ok {
		if _, signedIn := currentUser(c); signedIn {
			return noSuchRequest()
		}
		page, err := s.page(c, "Show us it's you")
		if err != nil {
			return err
		}
		page.Narrow = true
		return render(c, http.StatusUnauthorized, views.MyRequestsProvePage(page, views.MyRequestsProveView{SignIn: true,
			SignedOut: c.QueryParam("signed_out") != ""}))
	}
	invs, err := s.cfg.Lists.CustomerInvocations(ctx, p.CustomerRef, myRequestsLimit)
	if err != nil {
		return err
	}
	truncated := len(invs) >= myRequestsLimit
	if !p.Spans() {
		covered := invs[:0]
		for _, inv := range invs {
			if err := s.cfg.Confirmations.Covers(ctx, p, inv, p.CustomerRef); err == nil {
				covered = append(covered, inv)
			} else if !apperr.Is(err, apperr.Unauthenticated) {
				return err
			}
		}
		invs, truncated = covered, false
	}
	page, err := s.page(c, "My requests")
	if err != nil {
		return err
	}
	v := myRequestsView(invs, s.now(), truncated)
	v.OnlyProved = !p.Spans()
	return render(c, http.StatusOK, views.MyRequestsPage(page, v))
}

// myRequestsView puts what waits for the customer first, soonest deadline
// first, then everything else newest first, in the customer's words.
func myRequestsView(invs []controlplane.Invocation, now time.Time, truncated bool) views.MyRequestsView {
	v := views.MyRequestsView{Truncated: truncated}
	type waiting struct {
		row      views.MyRequestRow
		deadline time.Time
	}
	var wait []waiting
	for _, inv := range invs {
		// The list shows the badge and the deadline, never the headline
		// that the action's words are for.
		st := customerStatus(inv, adapter.ActionSpec{}, now, "")
		row := views.MyRequestRow{ID: inv.ID, Title: customerTitle(inv.Quote), BadgeClass: st.BadgeClass, BadgeText: st.BadgeText,
			When: customerTime(inv.CreatedAt), WhenISO: inv.CreatedAt.UTC().Format(time.RFC3339)}
		if inv.Quote.Customer != nil {
			row.Reference = inv.Quote.Customer.Reference
		}
		if !st.Decided && inv.DeadlineAt != nil {
			row.Deadline = customerTime(*inv.DeadlineAt)
			wait = append(wait, waiting{row, *inv.DeadlineAt})
			continue
		}
		v.Others = append(v.Others, row)
	}
	// Waiting requests: the one whose time runs out first on top.
	slices.SortStableFunc(wait, func(a, b waiting) int { return a.deadline.Compare(b.deadline) })
	for _, w := range wait {
		v.Waiting = append(v.Waiting, w.row)
	}
	return v
}

// successorOf finds the fresh quote that replaced inv, if any.
func (s *Server) successorOf(c echo.Context, inv controlplane.Invocation) (string, bool) {
	if inv.State != controlplane.Rejected {
		return "", false
	}
	next, err := s.cfg.Control.Successor(c.Request().Context(), inv.ID)
	if err != nil {
		if !errors.Is(err, controlplane.ErrNoSuccessor) {
			s.log.Warn("successor lookup", "invocation_id", inv.ID, "error", err)
		}
		return "", false
	}
	return next.ID, true
}
