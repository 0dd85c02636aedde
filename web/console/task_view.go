package console

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/money"
	"countersign/views"
	"countersign/web/kit"
	"countersign/web/layout"
)

// handleTask answers GET /tasks/:id: where the task stands in words that keep
// approval and execution apart (Completed, Result needs checking, Not
// dispatched with why), its controls, its requests, its timeline, and with ?inspect= the
// read-only record of one original call.
func (h *Handler) handleTask(c echo.Context) error {
	return h.renderTask(c, http.StatusOK, views.LiftBlockForm{})
}

// renderTask renders the task page; lift is a refused block lift to show
// again with its errors.
func (h *Handler) renderTask(c echo.Context, status int, lift views.LiftBlockForm) error {
	ctx := c.Request().Context()
	u, _ := kit.CurrentUser(c)
	live, err := h.taskLive(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	v := views.TaskView{Live: live, IsAdmin: u.Role == accounts.Admin, Lift: lift,
		CanLiftBlocks: u.Role == accounts.Agent || u.Role == accounts.Admin}
	if v.GlobalStopped, err = h.cfg.Control.GlobalStopped(ctx); err != nil {
		return err
	}
	// The task was read for live: its customer's blocks need no second read.
	blocks, err := h.cfg.Control.CustomerBlocks(ctx, live.CustomerRef)
	if err != nil {
		return err
	}
	for _, b := range blocks {
		v.Blocks = append(v.Blocks, views.BlockRow{System: b.System, TargetID: b.TargetID, Action: b.Action, Code: b.Code,
			Message: b.Message, Since: b.CreatedAt.UTC().Format("Jan 2 15:04 UTC")})
	}
	if id := c.QueryParam("inspect"); id != "" {
		in, err := h.cfg.Control.Inspect(ctx, id)
		if err != nil {
			return err
		}
		if in.Invocation.TaskID != live.ID {
			return echo.NewHTTPError(http.StatusNotFound, "That request is not part of this task.")
		}
		iv := inspectView(in, h.actionName)
		v.Inspect = &iv
	}
	p := h.Page(c, live.Heading())
	return kit.Render(c, status, views.Task(p, v))
}

// handleTaskLive answers GET /tasks/:id/live, the fragment the task page
// polls: 204 No Content while the task's mark is unchanged, so htmx swaps
// nothing and the reader keeps their place; the new fragment otherwise.
func (h *Handler) handleTaskLive(c echo.Context) error {
	live, err := h.taskLive(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	if c.QueryParam("mark") == live.Mark {
		return c.NoContent(http.StatusNoContent)
	}
	p := h.Page(c, "Task "+live.ID)
	return kit.Render(c, http.StatusOK, views.TaskLive(p, live))
}

func (h *Handler) taskLive(ctx context.Context, id string) (views.TaskLiveView, error) {
	t, err := h.cfg.Control.Task(ctx, id)
	if err != nil {
		return views.TaskLiveView{}, err
	}
	invs, err := h.cfg.Control.Invocations(ctx, id)
	if err != nil {
		return views.TaskLiveView{}, err
	}
	events, err := h.cfg.Control.Timeline(ctx, id)
	if err != nil {
		return views.TaskLiveView{}, err
	}
	v := views.TaskLiveView{ID: t.ID, Title: h.taskSubject(invs), CustomerRef: t.CustomerRef, ConversationID: t.ConversationID, State: taskBadge(t.State),
		Version: t.Version, BudgetLeft: t.BudgetLeft(), WriteBudget: t.WriteBudget, WritesUsed: t.WritesUsed,
		InflightLimit: t.InflightLimit, RatePerMinute: t.RatePerMinute, ExpiresAt: t.ExpiresAt.UTC().Format("Jan 2 15:04 UTC"),
		CanPause: t.State == controlplane.TaskActive, CanResume: t.State == controlplane.TaskPaused,
		CanCancel: t.State == controlplane.TaskActive || t.State == controlplane.TaskPaused}
	unverified := 0
	var lastState strings.Builder
	takes := t.TakesProposals(h.Now())
	for _, inv := range invs {
		row := h.invocationRow(inv)
		// The button is offered only when Reverse would take it: the rule
		// the API's "reversible" uses, in a task that takes proposals.
		row.CanReverse = inv.State == controlplane.Completed && takes && h.cfg.Control.HasReversal(inv)
		v.Invocations = append(v.Invocations, row)
		if inv.State == controlplane.Unverified {
			unverified++
		}
		fmt.Fprintf(&lastState, "%s:%d;", inv.ID, inv.Version)
	}
	if t.State == controlplane.TaskPaused {
		v.Notice = pausedNotice(unverified)
	}
	known := make(map[string]string, len(invs))
	for _, inv := range invs {
		known[inv.ID] = h.requestTitle("", inv.Action, inv.Target.Display, inv.Target.ID)
	}
	v.Timeline = timeline(events, known)
	var lastEvent int64
	if len(events) > 0 {
		lastEvent = events[len(events)-1].ID
	}
	v.Mark = fmt.Sprintf("v%d-e%d-n%d", t.Version, lastEvent, len(invs))
	return v, nil
}

// pausedNotice is what a paused task says at the top: further dispatch is
// paused, and how many earlier requests still need checking, because a pause
// stops new permits, not work already sent.
func pausedNotice(unverified int) string {
	switch unverified {
	case 0:
		return "Further dispatch is paused."
	case 1:
		return "Further dispatch is paused. One earlier request still needs checking."
	default:
		return fmt.Sprintf("Further dispatch is paused. %d earlier requests still need checking.", unverified)
	}
}

func taskBadge(st controlplane.TaskState) views.StateBadgeView {
	switch st {
	case controlplane.TaskActive:
		return views.StateBadgeView{Label: "Active", Tone: "info"}
	case controlplane.TaskPaused:
		return views.StateBadgeView{Label: "Paused", Tone: "warn"}
	case controlplane.TaskCancelled:
		return views.StateBadgeView{Label: "Cancelled", Tone: "bad"}
	}
	return views.StateBadgeView{Label: "Closed", Tone: "idle"}
}

// taskSubject titles a task by what it is about: its first request in
// words ("Refund $42.10 on order ord_1 (Walnut desk lamp)"), and how many
// more it holds; the customer is the page's subtitle.
func (h *Handler) taskSubject(invs []controlplane.Invocation) string {
	if len(invs) == 0 {
		return ""
	}
	first := invs[0]
	return subjectWords(h.requestTitle(first.Quote.Title, first.Action, first.Target.Display, first.Target.ID), len(invs))
}

// subjectWords is a task's title from its first request's and how many
// requests it has; a task with none is "No request yet".
func subjectWords(first string, requests int) string {
	switch {
	case requests == 0 || first == "":
		return "No request yet"
	case requests == 1:
		return first
	}
	return first + " and " + views.Plural(int64(requests-1), "more request", "more requests")
}

// requestTitle names a request by its quote's title or, where the quote
// was not recorded (imported history), by its action and its object.
func (h *Handler) requestTitle(quoteTitle, action, display, targetID string) string {
	if quoteTitle != "" {
		return quoteTitle
	}
	if display == "" {
		display = targetID
	}
	if display == "" {
		return h.actionName(action)
	}
	return h.actionName(action) + ": " + display
}

// invocationRow is one request of the task page. A request loaded from
// history may lack its quote, result or error: the row says what is known
// (its action and object, the amount recorded) and "not recorded" for the
// rest, never a blank cell.
func (h *Handler) invocationRow(inv controlplane.Invocation) (r views.InvocationRow) {
	r = views.InvocationRow{ID: inv.ID, Title: h.requestTitle(inv.Quote.Title, inv.Action, inv.Target.Display, inv.Target.ID),
		Action: inv.Action, State: layout.StateBadge(inv.State),
		Unverified: inv.State == controlplane.Unverified, Pending: inv.State == controlplane.AwaitingApproval}
	if _, spec, err := h.cfg.Registry.Action(inv.System, inv.Action); err == nil {
		r.CannotUndo = spec.Risk == adapter.Irreversible
	}
	switch {
	case inv.Quote.AmountCents != nil:
		r.Amount = money.Format(*inv.Quote.AmountCents, inv.Quote.Currency)
	case inv.AmountCents != nil:
		r.Amount = money.Format(*inv.AmountCents, inv.Quote.Currency)
	}
	defer func() {
		if r.Why == "" && r.Reference == "" {
			r.Why = rowFallback(inv.State)
		}
	}()
	switch inv.State {
	case controlplane.NotDispatched:
		r.Why = inv.NotDispatchedReason.Sentence()
	case controlplane.Rejected:
		// Who ended it, not only why: a customer's decline reads as theirs.
		switch q, ok := controlplane.IsQuestion(inv.DecisionReason); {
		case ok:
			r.Why = "Sent back to the assistant: " + q
		case inv.Reason().Code == controlplane.ReasonRejectedByAgent:
			r.Why = inv.DecisionReason
		default:
			r.Why = inv.Reason().Message
		}
	case controlplane.Failed:
		if inv.Error != nil {
			r.Why = inv.Error.Message
		}
	case controlplane.Unverified:
		r.Why = "The system did not confirm the result; nothing was re-sent."
	case controlplane.Completed, controlplane.Reversed:
		if inv.Result != nil {
			r.Reference = inv.Result.Reference
		}
	case controlplane.Expired:
		r.Why = "Nobody decided before the deadline."
	}
	return r
}

// rowFallback is what a request's row says when nothing more particular
// is known: where it stands, in its state's own words, and for an end
// state whose result or reason was not recorded (history imported without
// them), that it was not.
func rowFallback(st controlplane.State) string {
	switch st {
	case controlplane.Completed:
		return "Verified; its reference was not recorded."
	case controlplane.Reversed:
		return "Reversed; its reference was not recorded."
	case controlplane.Failed:
		return "Failed; the system's error was not recorded."
	case controlplane.Rejected, controlplane.NotDispatched:
		return "The reason was not recorded."
	case controlplane.AwaitingApproval:
		return "Waiting for a support agent."
	case controlplane.AwaitingConfirmation:
		return "Waiting for the customer to confirm."
	case controlplane.Proposed:
		return "Checking it with the system."
	case controlplane.Approved:
		return "Approved; not sent yet."
	case controlplane.Dispatching:
		return "Being sent now."
	case controlplane.Unverified:
		return "The system did not confirm the result; nothing was re-sent."
	case controlplane.Expired:
		return "Nobody decided before the deadline."
	}
	return "Not recorded."
}

// timelineRow writes an event as a sentence about the request it concerns
// (named as the events so far recorded it, see timeline), with its actor;
// no codes, no hashes. An event about the same request as the one before
// calls it "it".
func timelineRow(e controlplane.Event, titles map[string]string, previous string) views.TimelineRow {
	subject := ""
	if e.InvocationID != "" && e.InvocationID == previous {
		subject = "it"
	} else if e.InvocationID != "" {
		subject = titles[e.InvocationID]
		if subject == "" {
			subject = "request " + e.InvocationID
		}
	}
	sentence := eventSentence(e, subject)
	actor := actorWords(e)
	// A sentence that starts with a capital is about the request, not by
	// someone: Countersign's own bookkeeping reads better without a name.
	if (e.ActorKind == controlplane.ActorSystem && sentence != "" && strings.ToUpper(sentence[:1]) == sentence[:1]) || namesItsActor[e.Action] {
		actor = ""
	}
	row := views.TimelineRow{ID: e.ID, At: e.At.UTC().Format("Jan 2 15:04:05 UTC"), AtISO: e.At.UTC().Format(time.RFC3339),
		Actor: actor, Sentence: sentence, Kind: string(e.Action)}
	if actor != "" && e.ActorKind == controlplane.ActorUser {
		row.IdentifiedBy = identifiedWords(e)
	}
	return row
}

// inspectView shows an original call for a person: the arguments as
// labelled fields side by side, and the system's evidence as a comparison
// with the request and what reconciling will do with it. The codes stay
// under "Technical details".
func inspectView(in controlplane.Inspection, actionName func(string) string) views.InspectView {
	inv := in.Invocation
	at := func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return t.UTC().Format("Jan 2 15:04:05 UTC")
	}
	v := views.InspectView{ID: inv.ID, Title: inv.Quote.Title, State: layout.StateBadge(inv.State),
		Created: at(&inv.CreatedAt), ApprovedAt: at(inv.ApprovedAt), Permit: at(inv.PermitAt),
		Finished: at(inv.FinishedAt), Unverified: inv.State == controlplane.Unverified}
	if v.Title == "" {
		v.Title = actionName(inv.Action)
	}
	v.Args = compareArgs(inv.Args.Proposed, inv.Args.Approved, inv.Args.Effective, inv.Quote.Currency)
	v.Evidence, v.Outlook = evidenceWords(in)
	system := systemWords(inv.System)
	for _, e := range in.Lookup.Effects {
		line := fmt.Sprintf("%s recorded: %s on %s at %s", system, effectWords(e.Kind), e.Object, e.At.UTC().Format("Jan 2 15:04:05 UTC"))
		if e.AmountCents != nil {
			line += ", " + money.Format(*e.AmountCents, effectCurrency(e, inv.Quote.Currency))
		}
		v.Effects = append(v.Effects, line)
	}
	ledger := "—"
	if in.Asked && in.LookupErr == nil {
		ledger = "not found"
		if in.Lookup.Found {
			ledger = in.Lookup.LedgerState
		}
	}
	v.Tech = []views.ArgField{
		{Key: "action", Label: "Action", Value: inv.System + "/" + inv.Action},
		{Key: "id", Label: "Request id", Value: inv.ID},
		{Key: "key", Label: "Idempotency key", Value: inv.IdempotencyKey},
		{Key: "ledger", Label: "Request ledger state", Value: ledger},
	}
	if len(inv.ArgsHash) > 0 {
		v.Tech = append(v.Tech, views.ArgField{Key: "hash", Label: "Arguments hash", Value: hex.EncodeToString(inv.ArgsHash)})
	}
	return v
}

// compareArgs lines up the proposed, approved and sent arguments by label.
func compareArgs(proposed, approved, sent json.RawMessage, currency string) []views.ArgCompare {
	var order []string
	rows := map[string]*views.ArgCompare{}
	add := func(raw json.RawMessage, set func(*views.ArgCompare, string)) {
		for _, f := range argFields(raw, currency) {
			r, ok := rows[f.Key]
			if !ok {
				r = &views.ArgCompare{Label: f.Label, Proposed: "—", Approved: "—", Sent: "—"}
				rows[f.Key] = r
				order = append(order, f.Key)
			}
			set(r, f.Value)
		}
	}
	add(proposed, func(r *views.ArgCompare, s string) { r.Proposed = s })
	add(approved, func(r *views.ArgCompare, s string) { r.Approved = s })
	add(sent, func(r *views.ArgCompare, s string) { r.Sent = s })
	out := make([]views.ArgCompare, 0, len(order))
	for _, k := range order {
		r := *rows[k]
		r.Changed = (r.Approved != "—" && r.Approved != r.Proposed) || (r.Sent != "—" && r.Sent != r.Proposed)
		out = append(out, r)
	}
	return out
}

// systemWords names a business system in a sentence: "shop" → "The shop".
func systemWords(system string) string {
	if system == "" {
		return "The system"
	}
	return "The " + strings.ToLower(humanize(system))
}

// evidenceWords compares what the business system and the request ledger
// show for the request's key with the request, and says what Reconcile
// will make of it (mirroring controlplane.Reconcile: a result read back is
// completed, a clean refusal or an authoritative record's proof that it
// was not applied is failed, anything else stays unverified).
func evidenceWords(in controlplane.Inspection) (evidence, outlook string) {
	inv := in.Invocation
	system := systemWords(inv.System)
	if !in.Asked {
		return "This request never got a dispatch permit, so it never left Countersign: " + strings.ToLower(system[:1]) + system[1:] + " was not asked.",
			"There is nothing to reconcile."
	}
	if in.LookupErr != nil {
		return system + " could not be asked just now (" + in.LookupErr.Error() + ").",
			"Nothing is decided: open this again later, or check with the system's owner."
	}
	look := in.Lookup
	var parts []string
	for _, e := range look.Effects {
		what := effectWords(e.Kind)
		if noun, verb, ok := strings.Cut(what, " "); ok {
			what = noun + " " + verb
		}
		when := e.At.UTC().Format("15:04 UTC")
		switch {
		case e.AmountCents != nil && inv.Quote.AmountCents != nil && *e.AmountCents == *inv.Quote.AmountCents &&
			strings.EqualFold(effectCurrency(e, inv.Quote.Currency), inv.Quote.Currency):
			parts = append(parts, fmt.Sprintf("a matching %s %s at %s on %s with this request's key",
				money.Format(*e.AmountCents, inv.Quote.Currency), what, when, e.Object))
		case e.AmountCents != nil && inv.Quote.AmountCents != nil:
			parts = append(parts, fmt.Sprintf("a %s of %s at %s on %s with this request's key, but this request is for %s",
				what, money.Format(*e.AmountCents, effectCurrency(e, inv.Quote.Currency)), when, e.Object, money.Format(*inv.Quote.AmountCents, inv.Quote.Currency)))
		default:
			parts = append(parts, fmt.Sprintf("a %s at %s on %s with this request's key", what, when, e.Object))
		}
	}
	ledger := ""
	switch {
	case !look.Found && look.Kept:
		ledger = "Countersign's request record has no call under this key, and it records each call before it leaves: this one never left"
	case !look.Found:
		ledger = "Countersign's request record has no entry for this key"
	case look.LedgerState == "applied":
		ledger = "Countersign's request record says the system applied it"
	case look.LedgerState == "refused":
		ledger = "Countersign's request record says the system refused it"
	case look.LedgerState == "sending":
		ledger = "Countersign's request record says it was being sent when the answer was lost"
	default:
		ledger = "Countersign's request record does not know how it ended"
	}
	switch {
	case len(parts) > 0:
		evidence = system + " shows " + strings.Join(parts, "; and ") + ". " + ledger + "."
	case look.NotApplied != nil:
		// The adapter declares its record authoritative: there, no change
		// under the key long enough after the call is proof.
		evidence = system + " shows no change carrying this request's key, and its record is authoritative: " + look.NotApplied.Message + " " + ledger + "."
	case !look.Found && look.Kept:
		evidence = system + " shows no change carrying this request's key. " + ledger + "."
	default:
		evidence = system + " shows no change carrying this request's key. " + ledger + ". A missing record is not proof that nothing happened."
	}
	switch {
	case inv.State != controlplane.Unverified:
		outlook = "This request is " + strings.ToLower(inv.State.Label()) + "; there is nothing to reconcile."
	case look.Result != nil:
		outlook = "Reconcile will read the object back and mark it completed if the change is there."
	case look.LedgerState == "refused" && look.Error != nil && look.Error.Outcome != adapter.Unknown && len(look.Effects) == 0:
		outlook = "Reconcile will mark it failed: " + look.Error.Message
	case look.NotApplied != nil && len(look.Effects) == 0:
		outlook = "Reconcile will mark it failed, not applied: nothing changed, and nothing will be re-sent."
	case !look.Found && look.Kept && len(look.Effects) == 0:
		outlook = "Reconcile will mark it failed, not applied: no call under this key ever left Countersign, and Reconcile closes the key so none ever will."
	default:
		outlook = "Reconcile will leave it as “Result needs checking”: this evidence does not settle it. Check with the system's owner."
	}
	return evidence, outlook
}

// effectCurrency is the currency the system recorded with an effect's
// amount, or the quote's when it names none.
func effectCurrency(e adapter.Effect, quote string) string {
	if e.Currency != "" {
		return e.Currency
	}
	return quote
}
