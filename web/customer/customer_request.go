package customer

import (
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// customerRequest loads the invocation named by :id when what this browser
// proved covers it: a customer account of the task's customer, or a code
// or an assertion made on this request's link (confirmation.Covers).
// Another customer's request, a staff account and an unknown id all get
// the same "not found", so ids reveal nothing; the customer's other
// requests, to a code or an assertion, answer "show us it's you for this
// request".
func (h *Handler) customerRequest(c echo.Context) (controlplane.Invocation, controlplane.Task, error) {
	ctx := c.Request().Context()
	p, err := h.provedCustomer(c)
	if err != nil {
		return controlplane.Invocation{}, controlplane.Task{}, err
	}
	inv, err := h.cfg.Control.Invocation(ctx, c.Param("id"))
	if apperr.Is(err, apperr.NotFound) {
		return controlplane.Invocation{}, controlplane.Task{}, noSuchRequest(c)
	}
	if err != nil {
		return controlplane.Invocation{}, controlplane.Task{}, err
	}
	task, err := h.cfg.Control.Task(ctx, inv.TaskID)
	if err != nil {
		return controlplane.Invocation{}, controlplane.Task{}, err
	}
	if err := h.cfg.Confirmations.Covers(ctx, p, inv, task.CustomerRef); apperr.Is(err, apperr.NotFound) {
		return controlplane.Invocation{}, controlplane.Task{}, noSuchRequest(c)
	} else if err != nil {
		return controlplane.Invocation{}, controlplane.Task{}, h.sayRefusal(c, err)
	}
	h.localise(c, inv.System)
	return inv, task, nil
}

// provedCustomer is what this browser proved about the customer it acts
// for, or the refusal of a browser that proved nothing.
func (h *Handler) provedCustomer(c echo.Context) (confirmation.Proved, error) {
	p, ok := kit.CustomerOf(c)
	if ok {
		return p, nil
	}
	if _, signedIn := kit.CurrentUser(c); signedIn {
		return p, noSuchRequest(c)
	}
	return p, said(&apperr.Error{Kind: apperr.Unauthenticated, Code: "customer_session",
		Message: locale.T(c.Request().Context(), "pages.error.session", nil)})
}

// customerDecide makes the browser's customer's decision on :id in the
// control plane's one call (confirmation.Service.Decide): it loads the
// request, checks once that this proof may decide it, and transitions.
// The handler reads nothing before.
func (h *Handler) customerDecide(c echo.Context, verb controlplane.CustomerVerb, reason string) (controlplane.CustomerDecided, error) {
	p, err := h.provedCustomer(c)
	if err != nil {
		return controlplane.CustomerDecided{}, err
	}
	h.localise(c, h.decisionSystem(c, p))
	tag, from := decidedIn(c)
	d, err := h.cfg.Confirmations.Decide(c.Request().Context(), p, controlplane.CustomerDecision{InvocationID: c.Param("id"), Verb: verb, Reason: reason,
		QuoteVersion: quoteVersion(c), QuoteDigest: quoteDigest(c), Locale: tag, LocaleFrom: from})
	if apperr.Is(err, apperr.NotFound) {
		return d, noSuchRequest(c)
	}
	return d, h.sayRefusal(c, err)
}

// quoteVersion and quoteDigest read the quote a decision form names
// (views.quoteShown); a missing or damaged one names no quote, which the
// control plane refuses as a changed one.
func quoteVersion(c echo.Context) int32 {
	v, _ := strconv.ParseInt(c.FormValue("quote_version"), 10, 32)
	return int32(v)
}

func quoteDigest(c echo.Context) []byte {
	d, _ := base64.RawURLEncoding.DecodeString(c.FormValue("quote_digest"))
	return d
}

// quoteChanged re-renders the request as it stands now when a decision
// was refused because its quote changed since the page showed it: the
// customer looks again and decides on what they see.
func (h *Handler) quoteChanged(c echo.Context, err error) (bool, error) {
	if e, ok := apperr.As(err); !ok || e.Code != "quote_changed" {
		return false, nil
	}
	inv, task, lerr := h.customerRequest(c)
	if lerr != nil {
		return true, lerr
	}
	c.Set(quoteChangedKey, true)
	return true, h.renderCustomerRequest(c, http.StatusConflict, inv, task, "", nil)
}

// quoteChangedKey marks, on the echo context, a page rendered after a
// decision on a changed quote was refused.
const quoteChangedKey = "customer.quote_changed"

// noSuchRequest is the refusal of a request that is not among this
// browser's customer's, in the customer's language.
func noSuchRequest(c echo.Context) error {
	ctx := c.Request().Context()
	return said(&apperr.Error{Kind: apperr.NotFound, Code: "request_not_found",
		Message: locale.T(ctx, "pages.error.not_found", nil), Hint: locale.T(ctx, "pages.error.not_found.hint", nil)})
}

// handleCustomerRequest answers GET /requests/:id: the request as quoted,
// with the decision while it awaits the customer, else its outcome. A
// request replaced by a fresh quote sends the customer to the fresh one.
func (h *Handler) handleCustomerRequest(c echo.Context) error {
	inv, task, err := h.customerRequest(c)
	if err != nil {
		return err
	}
	if next, ok := h.successorOf(c, inv); ok {
		return kit.SeeOther(c, "/requests/"+next)
	}
	// A link session lives while the customer is active, like a sign-in.
	if sess := kit.Session(c); sess != nil && !sess.IsNew {
		if err := sess.Save(c.Request(), c.Response()); err != nil {
			return err
		}
	}
	return h.renderCustomerRequest(c, http.StatusOK, inv, task, "", nil)
}

// handleCustomerRequestStatus answers GET /requests/:id/status: for htmx,
// the outcome fragment (286 once it is final, which stops the polling,
// with HX-Refresh: the rest of the page — the receipt, the consequences in
// the words of the end state — changes with it, so the browser loads it
// again); without JavaScript, the whole page.
func (h *Handler) handleCustomerRequestStatus(c echo.Context) error {
	inv, task, err := h.customerRequest(c)
	if err != nil {
		return err
	}
	if c.Request().Header.Get("HX-Request") != "true" {
		return h.renderCustomerRequest(c, http.StatusOK, inv, task, "", nil)
	}
	st := h.customerStatusNow(c.Request().Context(), h.frameFor(c, inv.System), inv, "")
	status := http.StatusOK
	if !st.Pending {
		status = 286
		c.Response().Header().Set("HX-Refresh", "true")
	}
	return kit.Render(c, status, views.CustomerRequestStatus(st))
}

// handleCustomerConfirm answers POST /requests/:id/confirm. At that moment
// it re-checks the request still awaits this customer, the work is not on
// hold, and the target is unchanged since the quote (a fresh dry-run): a
// changed target replaces the request with a fresh quote and asks again.
// A second click, a second tab or a retried POST finds the request decided
// and is shown the current outcome; the guarded transition lets one through.
func (h *Handler) handleCustomerConfirm(c echo.Context) error {
	d, err := h.customerDecide(c, controlplane.CustomerConfirm, "")
	if changed, rerr := h.quoteChanged(c, err); changed {
		return rerr
	}
	if err != nil {
		return err
	}
	if d.Done {
		h.Log.Info("customer confirmed", "invocation_id", d.Invocation.ID)
		if err := rememberDecided(c, d.Invocation.ID); err != nil {
			return err
		}
	}
	// Decided meanwhile, or a fresh quote: show what happened, or the
	// fresh quote.
	return kit.SeeOther(c, "/requests/"+d.Invocation.ID)
}

// handleCustomerDecline answers POST /requests/:id/decline, with an
// optional reason the assistant sees.
func (h *Handler) handleCustomerDecline(c echo.Context) error {
	reason := c.FormValue("reason")
	d, err := h.customerDecide(c, controlplane.CustomerDecline, reason)
	if changed, rerr := h.quoteChanged(c, err); changed {
		return rerr
	}
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid && d.Invocation.ID != "" {
		return h.renderCustomerRequest(c, http.StatusUnprocessableEntity, d.Invocation, d.Task, reason, h.fieldWords(c, err))
	}
	if err != nil {
		return err
	}
	if d.Done {
		if err := rememberDecided(c, d.Invocation.ID); err != nil {
			return err
		}
	}
	return kit.SeeOther(c, "/requests/"+d.Invocation.ID)
}

// handleCustomerStop answers POST /requests/:id/stop, the customer's "Stop
// this": the task behind the request is paused as a person's pause, which
// only a console user lifts (an assistant's resume answers 403
// paused_by_person), so nothing more of it is dispatched. It needs the
// same proof as deciding the request, and the audit trail records it as
// the customer's, with that proof.
func (h *Handler) handleCustomerStop(c echo.Context) error {
	d, err := h.customerDecide(c, controlplane.CustomerStop, "")
	if err != nil {
		return err
	}
	if d.Done {
		h.Log.Info("customer stopped the task", "task_id", d.Task.ID, "invocation_id", d.Invocation.ID)
	}
	// Paused or ended meanwhile: the page says so.
	return kit.SeeOther(c, "/requests/"+d.Invocation.ID)
}

// mayStop says whether the page offers "Stop this": the task still works
// and this browser's proof may decide the request.
func (h *Handler) mayStop(c echo.Context, inv controlplane.Invocation, task controlplane.Task) bool {
	if task.State != controlplane.TaskActive {
		return false
	}
	p, ok := kit.CustomerOf(c)
	return ok && h.cfg.Confirmations.MayDecide(c.Request().Context(), p, inv, task.CustomerRef) == nil
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
func (h *Handler) handleMyRequests(c echo.Context) error {
	ctx := c.Request().Context()
	p, ok := kit.CustomerOf(c)
	if !ok {
		if _, signedIn := kit.CurrentUser(c); signedIn {
			return noSuchRequest(c)
		}
		page := h.page(c, locale.T(ctx, "pages.requests_prove.title", nil), h.frameFor(c, ""))
		page.Narrow = true
		return kit.Render(c, http.StatusUnauthorized, views.MyRequestsProvePage(page, views.MyRequestsProveView{SignIn: true,
			SignedOut: c.QueryParam("signed_out") != ""}))
	}
	invs, err := h.cfg.Lists.CustomerInvocations(ctx, p.CustomerRef, myRequestsLimit)
	if err != nil {
		return err
	}
	truncated := len(invs) >= myRequestsLimit
	if !p.Spans() {
		covered := invs[:0]
		for _, inv := range invs {
			if err := h.cfg.Confirmations.Covers(ctx, p, inv, p.CustomerRef); err == nil {
				covered = append(covered, inv)
			} else if !apperr.Is(err, apperr.Unauthenticated) {
				return err
			}
		}
		invs, truncated = covered, false
	}
	// Only the customer's own requests: an action on the business's own
	// objects (a catalogue edit) is an operator's, whoever's task it came
	// through.
	own := invs[:0]
	for _, inv := range invs {
		if h.cfg.Control.ActionSpec(inv.System, inv.Action).ForCustomer() {
			own = append(own, inv)
		}
	}
	// The page speaks for the business of its requests; for none when
	// they are of more than one (one shop's name over another's request
	// misleads).
	system := ""
	if len(own) > 0 {
		system = own[0].System
	}
	mixed := false
	for _, inv := range own {
		if inv.System != system {
			system, mixed = "", true
			break
		}
	}
	h.localise(c, system)
	f := h.frameFor(c, system)
	if mixed {
		f = h.unbrandedFrame(c)
	}
	page := h.page(c, f.t("pages.list.title", nil), f)
	v := myRequestsView(own, f, truncated)
	v.OnlyProved = !p.Spans()
	return kit.Render(c, http.StatusOK, views.MyRequestsPage(page, v))
}

// myRequestsView groups the requests as the customer acts on them: what
// waits for them (soonest deadline first), what is in progress, and what
// is done, newest first, in the customer's words. A row names its object
// (reference, items), its amount and its time, so two requests alike in
// title are told apart.
func myRequestsView(invs []controlplane.Invocation, f customerFrame, truncated bool) views.MyRequestsView {
	v := views.MyRequestsView{Truncated: truncated}
	type waiting struct {
		row      views.MyRequestRow
		deadline time.Time
	}
	var wait []waiting
	for _, inv := range invs {
		// The list shows the badge and the deadline, never the headline
		// that the action's words are for.
		st := customerStatus(inv, adapter.ActionSpec{}, f, "")
		q := f.quote(inv)
		row := views.MyRequestRow{ID: inv.ID, Title: customerTitle(q), BadgeClass: st.BadgeClass, BadgeText: st.BadgeText,
			When: f.at(inv.CreatedAt), WhenISO: inv.CreatedAt.UTC().Format(time.RFC3339)}
		if cf := q.Customer; cf != nil {
			row.Reference, row.Items = cf.Reference, strings.Join(cf.Items, ", ")
		}
		if q.AmountCents != nil {
			row.Amount = f.money(*q.AmountCents, q.Currency)
		}
		switch {
		case !st.Decided && inv.DeadlineAt != nil:
			row.Deadline = f.t("pages.list.deadline", locale.Params{"When": isolate(f.at(*inv.DeadlineAt))})
			wait = append(wait, waiting{row, *inv.DeadlineAt})
		case st.Pending:
			v.InProgress = append(v.InProgress, row)
		default:
			v.Done = append(v.Done, row)
		}
	}
	// Waiting requests: the one whose time runs out first on top.
	slices.SortStableFunc(wait, func(a, b waiting) int { return a.deadline.Compare(b.deadline) })
	for _, w := range wait {
		v.Waiting = append(v.Waiting, w.row)
	}
	return v
}

// successorOf finds the fresh quote that replaced inv, if any.
func (h *Handler) successorOf(c echo.Context, inv controlplane.Invocation) (string, bool) {
	if inv.State != controlplane.Rejected {
		return "", false
	}
	next, err := h.cfg.Control.Successor(c.Request().Context(), inv.ID)
	if err != nil {
		if !errors.Is(err, controlplane.ErrNoSuccessor) {
			h.Log.Warn("successor lookup", "invocation_id", inv.ID, "error", err)
		}
		return "", false
	}
	return next.ID, true
}
