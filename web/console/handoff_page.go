package console

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/handoffs"
	"countersign/internal/lists"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
	"countersign/web/layout"
)

// handoffCustomerRequests is how many of the customer's latest requests the
// hand-off page names.
const handoffCustomerRequests = 5

func handoffURL(id int64) string { return "/handoffs/" + strconv.FormatInt(id, 10) }

func handoffID(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, refusal(apperr.NotFound, "no_handoff", nil)
	}
	return id, nil
}

// handleHandoff answers GET /handoffs/:id: one conversation handed to a
// person — what the assistant reported, in order; who the customer is;
// where the hand-off stands (waiting against its target, taken, resolved
// or given back, by whom and when, with the note); the write the assistant
// prepared, to send on through the normal route or discard; and the forms
// to take, resolve and give back.
func (h *Handler) handleHandoff(c echo.Context) error {
	id, err := handoffID(c)
	if err != nil {
		return err
	}
	v, err := h.handoffView(c, id)
	if err != nil {
		return err
	}
	return h.renderHandoff(c, http.StatusOK, v)
}

func (h *Handler) renderHandoff(c echo.Context, status int, v views.HandoffPageView) error {
	return kit.Render(c, status, views.HandoffPage(h.Page(c, title("handoff", locale.Params{"Intent": v.Intent})), v))
}

// handoffView reads the hand-off's page as the signed-in person sees it.
func (h *Handler) handoffView(c echo.Context, id int64) (views.HandoffPageView, error) {
	u, _ := kit.CurrentUser(c)
	ctx := c.Request().Context()
	d, err := h.cfg.Lists.Handoff(ctx, id)
	if err != nil {
		return views.HandoffPageView{}, err
	}
	now := h.Now()
	open := d.State == lists.HandoffWaiting || d.State == lists.HandoffTaken
	v := views.HandoffPageView{ID: id, LatestID: d.Latest.ID, ConversationID: d.ConversationID, Intent: intentWords(d.Latest.Intent),
		Summary: d.Latest.Summary, Facts: factLines(d.Latest.Facts), Target: waitedFor(handoffTarget),
		CanTake: d.State == lists.HandoffWaiting, CanClose: open && (d.HolderID == 0 || d.HolderID == u.ID)}
	if v.Summary == "" {
		v.Summary = noSummaryWords(d.Latest.Intent, "", v.Facts)
	}
	switch d.State {
	case lists.HandoffWaiting:
		wait := now.Sub(d.FirstOpenAt)
		v.State = views.StateBadgeView{Label: say("console.words.handoff.badge.waiting", nil), Tone: "warn"}
		p := locale.Params{"Wait": waitedFor(wait), "Since": clock(d.FirstOpenAt), "Target": waitedFor(handoffTarget)}
		v.StateWords = say("console.words.handoff.state.waiting", p)
		if wait > handoffTarget {
			v.State.Tone, v.OverTarget = "bad", true
			v.StateWords = say("console.words.handoff.state.waiting_over", p)
		}
	case lists.HandoffTaken:
		v.State = views.StateBadgeView{Label: say("console.words.handoff.badge.taken", nil), Tone: "info"}
		p := locale.Params{"Name": d.HolderName, "At": clockOf(d.TakenAt), "Since": clock(d.FirstOpenAt)}
		if d.HolderID == u.ID {
			v.StateWords = say("console.words.handoff.state.taken_by_you", p)
		} else {
			v.StateWords = say("console.words.handoff.state.taken", p)
		}
		if d.HolderID != u.ID {
			v.HeldBy = d.HolderName
			v.CanTakeOver = u.Role == accounts.Manager || u.Role == accounts.Admin
		}
	case lists.HandoffResolved:
		v.State = views.StateBadgeView{Label: say("console.words.handoff.badge.resolved", nil), Tone: "ok"}
		v.StateWords = say("console.words.handoff.state.resolved", locale.Params{"Name": d.ClosedByName, "At": clockOf(d.ClosedAt)})
		v.Note = d.Note
	case lists.HandoffGivenBack:
		v.State = views.StateBadgeView{Label: say("console.words.handoff.badge.given_back", nil), Tone: "idle"}
		v.StateWords = say("console.words.handoff.state.given_back", locale.Params{"Name": d.ClosedByName, "At": clockOf(d.ClosedAt)})
		v.Note = d.Note
	}
	if t := d.TakenOver; t != nil {
		v.TakenOver = say("console.rest.handoff.taken_over", locale.Params{"To": t.ToName, "From": t.FromName, "At": clock(t.At), "Reason": quoted(t.Reason)})
	}
	for _, e := range d.Entries {
		v.Entries = append(v.Entries, views.ConversationEntryView{At: e.At.UTC().Format("Jan 2 15:04 UTC"), What: modeWords(e.Mode),
			Intent: intentWords(e.Intent), Summary: e.Summary, Current: e.ID == d.Latest.ID})
	}
	if err := h.handoffCustomer(ctx, &v, d); err != nil {
		return views.HandoffPageView{}, err
	}
	// The draft and its forms are the hand-off shown (the latest), on the
	// task the send uses; the digest makes the send refuse anything else.
	if action, args := wouldPropose(d.Latest.WouldPropose, h.actionName); action != "" {
		decided := d.DraftSent != "" || d.DraftSending || d.DraftDiscarded
		v.Draft = &views.HandoffDraftView{HandoffID: d.Latest.ID, Action: action, Args: args, Discarded: d.DraftDiscarded,
			Sending: d.DraftSending && d.DraftSent == "", CanSend: open && d.HolderID == u.ID && d.TaskID != "" && !decided}
		var task controlplane.Task
		if d.TaskID != "" {
			if task, err = h.cfg.Control.Task(ctx, d.TaskID); err != nil {
				return views.HandoffPageView{}, err
			}
		}
		prepared, _ := h.cfg.Handoffs.PrepareDraft(d.Latest.ID, task, d.Latest.Data)
		v.Draft.Digest = prepared.Digest
		if d.TaskID != "" && prepared.System != "" {
			v.Draft.For = say("console.words.handoff.draft_for", locale.Params{"Customer": v.Customer, "Task": d.TaskID, "System": prepared.System})
		}
		if d.DraftSent != "" {
			v.Draft.SentURL = "/tasks/" + url.PathEscape(d.TaskID) + "?inspect=" + url.QueryEscape(d.DraftSent)
		}
		switch {
		case d.TaskID == "":
			v.Draft.Why = say("console.words.handoff.draft_no_task", nil)
		case prepared.System == "" && !decided:
			v.Draft.CanSend = false
			v.Draft.Why = say("console.words.handoff.draft_no_system", locale.Params{"Systems": handoffs.SystemsWords(prepared.Candidates)})
		case open && d.HolderID != u.ID && !decided:
			v.Draft.Why = say("console.words.handoff.draft_take_first", nil)
		}
	}
	return v, nil
}

// handoffCustomer fills in who the customer is: the task's customer, its
// state, and their latest requests.
func (h *Handler) handoffCustomer(ctx context.Context, v *views.HandoffPageView, d lists.HandoffDetail) error {
	if d.TaskID == "" {
		v.Customer = say("console.words.handoff.no_customer", nil)
		return nil
	}
	task, err := h.cfg.Control.Task(ctx, d.TaskID)
	if err != nil {
		return err
	}
	v.Customer, v.TaskID, v.TaskState = task.CustomerRef, task.ID, taskBadge(task.State)
	v.TaskWords = say("console.words.handoff.task", locale.Params{"Used": strconv.Itoa(task.WritesUsed), "Budget": strconv.Itoa(task.WriteBudget),
		"Expires": task.ExpiresAt.UTC().Format("Jan 2 15:04 UTC")})
	invs, err := h.cfg.Lists.CustomerInvocations(ctx, task.CustomerRef, handoffCustomerRequests)
	if err != nil {
		return err
	}
	sort.SliceStable(invs, func(i, j int) bool { return invs[i].CreatedAt.After(invs[j].CreatedAt) })
	for _, inv := range invs {
		title := inv.Quote.Title
		if title == "" {
			title = h.actionName(inv.Action)
		}
		v.CustomerRequests = append(v.CustomerRequests, views.WaitingItem{Title: say("console.labels.request_state", locale.Params{"Title": title, "State": layout.StateLabel(inv.State)}),
			Since: inv.CreatedAt.UTC().Format("Jan 2 15:04 UTC"), Href: "/tasks/" + url.PathEscape(inv.TaskID) + "?inspect=" + url.QueryEscape(inv.ID)})
	}
	return nil
}

// handleHandoffResolve answers POST /handoffs/:id/resolve: the person
// dealt with the customer; the note is recorded and told to the assistant.
func (h *Handler) handleHandoffResolve(c echo.Context) error {
	return h.closeHandoff(c, handoffs.Resolved, locale.Console("console.flash.handoff_resolved", nil))
}

// handleHandoffGiveBack answers POST /handoffs/:id/give-back: the
// conversation goes back to the assistant with the person's note.
func (h *Handler) handleHandoffGiveBack(c echo.Context) error {
	return h.closeHandoff(c, handoffs.GivenBack, locale.Console("console.flash.handoff_given_back", nil))
}

func (h *Handler) closeHandoff(c echo.Context, outcome handoffs.Outcome, done string) error {
	u, _ := kit.CurrentUser(c)
	id, err := handoffID(c)
	if err != nil {
		return err
	}
	note := c.FormValue("note")
	err = h.cfg.Handoffs.Close(c.Request().Context(), actorOf(c, u), id, outcome, note)
	field := "resolve-note"
	if outcome == handoffs.GivenBack {
		field = "give-back-note"
	}
	return h.refuseHandoffForm(c, id, err, done, field, note)
}

// refuseHandoffForm is afterHandoffChange for a form with text a person
// typed (a note, a reason): a missing or refused value, or someone first,
// re-renders the page (422) with the problem in its error summary and the
// text kept — in its field while the form is still offered, else shown to
// copy — instead of losing it in a redirect.
func (h *Handler) refuseHandoffForm(c echo.Context, id int64, err error, done, field, typed string) error {
	e, ok := apperr.As(err)
	if err == nil || !ok || (e.Kind != apperr.Invalid && e.Kind != apperr.Conflict && e.Kind != apperr.IllegalTransition) {
		return h.afterHandoffChange(c, id, err, done)
	}
	v, verr := h.handoffView(c, id)
	if verr != nil {
		return verr
	}
	msg := e.Message
	if len(e.Fields) > 0 {
		msg = ""
		for _, f := range sortedKeys(e.Fields) {
			msg = strings.TrimSpace(msg + " " + e.Fields[f])
		}
	} else if e.Hint != "" {
		msg += " " + e.Hint
	}
	if !v.Offers(field) {
		field = "kept-text"
		v.KeptText = typed
	}
	v.Errors = views.FieldErrors{field: msg}
	v.Typed = map[string]string{field: typed}
	return h.renderHandoff(c, http.StatusUnprocessableEntity, v)
}

// handleHandoffDraftSend answers POST /handoffs/:id/draft/send: the
// assistant's prepared write becomes the person's own proposal on the
// conversation's task, quoted by the system and routed by its policy.
func (h *Handler) handleHandoffDraftSend(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	id, err := handoffID(c)
	if err != nil {
		return err
	}
	inv, err := h.cfg.Handoffs.SendDraft(c.Request().Context(), actorOf(c, u), id, c.FormValue("digest"))
	if err != nil {
		return h.afterHandoffChange(c, id, err, "")
	}
	said := "console.flash.handoff_sent"
	switch {
	case inv.Deduplicated:
		said = "console.flash.handoff_sent_before"
	case inv.State == controlplane.AwaitingConfirmation:
		said = "console.flash.handoff_sent_to_customer"
	case inv.State == controlplane.AwaitingApproval:
		said = "console.flash.handoff_sent_to_approver"
	}
	kit.SetFlash(c, locale.Console(said, locale.Params{"Title": inv.Quote.Title, "State": strings.ToLower(layout.StateLabel(inv.State))}), false)
	return kit.SeeOther(c, handoffURL(id))
}

// handleHandoffDraftDiscard answers POST /handoffs/:id/draft/discard: the
// prepared write is set aside; nothing is proposed.
func (h *Handler) handleHandoffDraftDiscard(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	id, err := handoffID(c)
	if err != nil {
		return err
	}
	err = h.cfg.Handoffs.DiscardDraft(c.Request().Context(), actorOf(c, u), id, c.FormValue("digest"))
	return h.afterHandoffChange(c, id, err, locale.Console("console.flash.draft_discarded", nil))
}

// afterHandoffChange goes back to the hand-off's page, saying what
// happened: a refusal the person can act on (a note to write, someone
// first, a state that moved on, the system's own answer) is shown there
// in words; anything else is the error page.
func (h *Handler) afterHandoffChange(c echo.Context, id int64, err error, done string) error {
	if err == nil {
		kit.SetFlash(c, done, false)
		return kit.SeeOther(c, handoffURL(id))
	}
	e, ok := apperr.As(err)
	if !ok || e.Kind == apperr.NotFound || e.Kind == apperr.Internal {
		return err
	}
	msg := e.Message
	for _, f := range sortedKeys(e.Fields) {
		msg += " " + e.Fields[f]
	}
	if e.Hint != "" {
		msg += " " + e.Hint
	}
	kit.SetFlash(c, msg, true)
	return kit.SeeOther(c, handoffURL(id))
}

// clockOf says the time of a moment that may be missing.
func clockOf(t *time.Time) string {
	if t == nil {
		return say("console.words.time.unrecorded", nil)
	}
	return clock(*t)
}

// modeWords says what the assistant did with a request.
func modeWords(mode string) string {
	switch mode {
	case "answered", "read_and_answered", "linked", "clarified", "proposed", "executed", "handed_off", "resolved":
		return say("console.words.handoff.mode."+mode, nil)
	}
	return humanize(mode)
}
