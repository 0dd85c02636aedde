package console

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
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
			return echo.NewHTTPError(http.StatusNotFound, say("console.rest.task.request_elsewhere", nil))
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
	p := h.Page(c, title("task", locale.Params{"ID": live.ID}))
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
	if unverified == 0 {
		return say("console.words.task.paused", nil)
	}
	// The count is written as it always was, without separators.
	return locale.ConsoleN("console.words.task.paused_unverified", unverified, locale.Params{"N": strconv.Itoa(unverified)})
}

func taskBadge(st controlplane.TaskState) views.StateBadgeView {
	switch st {
	case controlplane.TaskActive:
		return views.StateBadgeView{Label: say("console.words.task.badge.active", nil), Tone: "info"}
	case controlplane.TaskPaused:
		return views.StateBadgeView{Label: say("console.words.task.badge.paused", nil), Tone: "warn"}
	case controlplane.TaskCancelled:
		return views.StateBadgeView{Label: say("console.words.task.badge.cancelled", nil), Tone: "bad"}
	}
	return views.StateBadgeView{Label: say("console.words.task.badge.closed", nil), Tone: "idle"}
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
		return say("console.words.task.subject_none", nil)
	case requests == 1:
		return first
	}
	return sayN("console.words.task.subject_more", int64(requests-1), locale.Params{"First": first})
}

// requestTitle names a request by its quote's title or, where the quote
// was not recorded (imported history), by its action and its object.
func (h *Handler) requestTitle(quoteTitle, action, display, targetID string) string {
	if quoteTitle != "" {
		return quoteTitle
	}
	return requestWords(h.actionName(action), display, targetID)
}

// requestWords names a request by its action (in words) and its object:
// what it displays, else its id; by its action alone when it has none.
func requestWords(action, display, targetID string) string {
	if display == "" {
		display = targetID
	}
	if display == "" {
		return action
	}
	return say("console.timeline.request_on", locale.Params{"Action": action, "Target": display})
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
		r.Why = notDispatchedWords(inv.NotDispatchedReason)
	case controlplane.Rejected:
		// Who ended it, not only why: a customer's decline reads as theirs.
		switch q, ok := controlplane.IsQuestion(inv.DecisionReason); {
		case ok:
			r.Why = say("console.words.row.sent_back", locale.Params{"Question": q})
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
		r.Why = say("console.words.row.unverified", nil)
	case controlplane.Completed, controlplane.Reversed:
		if inv.Result != nil {
			r.Reference = inv.Result.Reference
		}
	case controlplane.Expired:
		r.Why = say("console.words.row.expired", nil)
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
		return say("console.words.row.completed", nil)
	case controlplane.Reversed:
		return say("console.words.row.reversed", nil)
	case controlplane.Failed:
		return say("console.words.row.failed", nil)
	case controlplane.Rejected, controlplane.NotDispatched:
		return say("console.words.row.not_recorded", nil)
	case controlplane.AwaitingApproval:
		return say("console.words.row.awaiting_approval", nil)
	case controlplane.AwaitingConfirmation:
		return say("console.words.row.awaiting_confirmation", nil)
	case controlplane.Proposed:
		return say("console.words.row.proposed", nil)
	case controlplane.Approved:
		return say("console.words.row.approved", nil)
	case controlplane.Dispatching:
		return say("console.words.row.dispatching", nil)
	case controlplane.Unverified:
		return say("console.words.row.unverified", nil)
	case controlplane.Expired:
		return say("console.words.row.expired", nil)
	}
	return say("console.words.row.unknown", nil)
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
			subject = say("console.timeline.request_id", locale.Params{"ID": e.InvocationID})
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
		p := locale.Params{"System": system, "What": effectWords(e.Kind), "Object": e.Object, "At": e.At.UTC().Format("Jan 2 15:04:05 UTC")}
		if e.AmountCents != nil {
			p["Amount"] = money.Format(*e.AmountCents, effectCurrency(e, inv.Quote.Currency))
			v.Effects = append(v.Effects, say("console.timeline.evidence.recorded_amount", p))
			continue
		}
		v.Effects = append(v.Effects, say("console.timeline.evidence.recorded", p))
	}
	ledger := "—"
	if in.Asked && in.LookupErr == nil {
		ledger = say("console.timeline.tech.ledger_not_found", nil)
		if in.Lookup.Found {
			ledger = in.Lookup.LedgerState
		}
	}
	v.Tech = []views.ArgField{
		{Key: "action", Label: say("console.timeline.tech.action", nil), Value: inv.System + "/" + inv.Action},
		{Key: "id", Label: say("console.timeline.tech.id", nil), Value: inv.ID},
		{Key: "key", Label: say("console.timeline.tech.key", nil), Value: inv.IdempotencyKey},
		{Key: "ledger", Label: say("console.timeline.tech.ledger", nil), Value: ledger},
	}
	if len(inv.ArgsHash) > 0 {
		v.Tech = append(v.Tech, views.ArgField{Key: "hash", Label: say("console.timeline.tech.hash", nil), Value: hex.EncodeToString(inv.ArgsHash)})
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
		return say("console.timeline.system_unnamed", nil)
	}
	return say("console.timeline.system", locale.Params{"System": strings.ToLower(humanize(system))})
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
		return say("console.timeline.evidence.not_asked", locale.Params{"System": kit.LowerFirst(system)}),
			say("console.timeline.evidence.not_asked_outlook", nil)
	}
	if in.LookupErr != nil {
		return say("console.timeline.evidence.lookup_failed", locale.Params{"System": system, "Error": in.LookupErr.Error()}),
			say("console.timeline.evidence.lookup_failed_outlook", nil)
	}
	look := in.Lookup
	var parts []string
	for _, e := range look.Effects {
		p := locale.Params{"What": effectWords(e.Kind), "When": e.At.UTC().Format("15:04 UTC"), "Object": e.Object}
		switch {
		case e.AmountCents != nil && inv.Quote.AmountCents != nil && *e.AmountCents == *inv.Quote.AmountCents &&
			strings.EqualFold(effectCurrency(e, inv.Quote.Currency), inv.Quote.Currency):
			p["Amount"] = money.Format(*e.AmountCents, inv.Quote.Currency)
			parts = append(parts, say("console.timeline.evidence.effect_matching", p))
		case e.AmountCents != nil && inv.Quote.AmountCents != nil:
			p["Amount"] = money.Format(*e.AmountCents, effectCurrency(e, inv.Quote.Currency))
			p["Quoted"] = money.Format(*inv.Quote.AmountCents, inv.Quote.Currency)
			parts = append(parts, say("console.timeline.evidence.effect_other_amount", p))
		default:
			parts = append(parts, say("console.timeline.evidence.effect", p))
		}
	}
	ledger := "console.timeline.evidence.ledger_unknown"
	switch {
	case !look.Found && look.Kept:
		ledger = "console.timeline.evidence.ledger_never_left"
	case !look.Found:
		ledger = "console.timeline.evidence.ledger_none"
	case look.LedgerState == "applied":
		ledger = "console.timeline.evidence.ledger_applied"
	case look.LedgerState == "refused":
		ledger = "console.timeline.evidence.ledger_refused"
	case look.LedgerState == "sending":
		ledger = "console.timeline.evidence.ledger_sending"
	}
	p := locale.Params{"System": system, "Ledger": say(ledger, nil)}
	switch {
	case len(parts) > 0:
		p["Effects"] = strings.Join(parts, say("console.timeline.evidence.effect_separator", nil))
		evidence = say("console.timeline.evidence.shows", p)
	case look.NotApplied != nil:
		// The adapter declares its record authoritative: there, no change
		// under the key long enough after the call is proof.
		p["Proof"] = look.NotApplied.Message
		evidence = say("console.timeline.evidence.shows_nothing_authoritative", p)
	case !look.Found && look.Kept:
		evidence = say("console.timeline.evidence.shows_nothing_kept", p)
	default:
		evidence = say("console.timeline.evidence.shows_nothing", p)
	}
	switch {
	case inv.State != controlplane.Unverified:
		outlook = say("console.timeline.evidence.outlook_settled", locale.Params{"State": stateWords(inv.State)})
	case look.Result != nil:
		outlook = say("console.timeline.evidence.outlook_completes", nil)
	case look.LedgerState == "refused" && look.Error != nil && look.Error.Outcome != adapter.Unknown && len(look.Effects) == 0:
		outlook = say("console.timeline.evidence.outlook_fails", locale.Params{"Message": look.Error.Message})
	case look.NotApplied != nil && len(look.Effects) == 0:
		outlook = say("console.timeline.evidence.outlook_not_applied", nil)
	case !look.Found && look.Kept && len(look.Effects) == 0:
		outlook = say("console.timeline.evidence.outlook_never_sent", nil)
	default:
		outlook = say("console.timeline.evidence.outlook_stays", nil)
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
