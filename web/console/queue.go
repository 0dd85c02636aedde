package console

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/lists"
	"countersign/internal/locale"
	"countersign/internal/money"
	"countersign/views"
	"countersign/web/kit"
	"countersign/web/layout"
)

// queuePage is how many cards one page of the queue shows.
const queuePage = 25

// queueAges are the "waiting at least" choices of the queue's filter.
var queueAges = map[string]time.Duration{"15m": 15 * time.Minute, "1h": time.Hour, "4h": 4 * time.Hour, "24h": 24 * time.Hour}

// handleQueue answers GET /queue: invocations awaiting approval, soonest
// deadline first, filtered, one keyset page at a time (after_at/after_id),
// with how many wait. After a decision (?decided=id) the card just decided
// heads the page in its state now and the next card takes the focus.
func (h *Handler) handleQueue(c echo.Context) error {
	ctx := c.Request().Context()
	u, _ := kit.CurrentUser(c)
	q := c.QueryParams()
	v := views.QueueView{Errors: views.FieldErrors{}, Filter: views.QueueFilterView{System: q.Get("system"), Action: q.Get("action"),
		Customer: strings.TrimSpace(q.Get("customer")), MinAmount: q.Get("min"), MaxAmount: q.Get("max"), Age: q.Get("age"), Mine: q.Get("mine") == "1"}}
	f := lists.QueueFilter{System: v.Filter.System, Action: v.Filter.Action, CustomerRef: v.Filter.Customer, Limit: queuePage + 1,
		OlderThan: queueAges[v.Filter.Age]}
	if v.Filter.Mine {
		f.ClaimedBy = u.ID
	}
	var err error
	if f.MinCents, err = parseDollars(v.Filter.MinAmount); err != nil {
		v.Errors["min"] = err.Error()
	}
	if f.MaxCents, err = parseDollars(v.Filter.MaxAmount); err != nil {
		v.Errors["max"] = err.Error()
	}
	if at, id := q.Get("after_at"), q.Get("after_id"); at != "" && id != "" {
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			return echo.NewHTTPError(http.StatusBadRequest, say("console.rest.queue.cursor_damaged", nil))
		}
		f.After = &lists.QueueCursor{DeadlineAt: t, ID: id}
		v.FirstURL = "/queue?" + queueQuery(v.Filter, nil)
	}
	for _, sys := range h.cfg.Registry.Systems() {
		v.Systems = append(v.Systems, sys.Name())
		for _, a := range sys.Actions() {
			if !slices.Contains(v.Actions, a.Name) {
				v.Actions = append(v.Actions, a.Name)
			}
		}
	}
	sort.Strings(v.Actions)
	v.Filtered = v.Filter != (views.QueueFilterView{})
	var cards []controlplane.QueueCard
	if len(v.Errors) == 0 {
		if cards, err = h.cfg.Lists.ApprovalQueue(ctx, f); err != nil {
			return err
		}
	}
	pending, unverified, err := h.pendingCounts(c)
	if err != nil {
		return err
	}
	v.Unverified = unverified
	if len(v.Errors) == 0 {
		// Unfiltered, the queue shows exactly what the header's badge
		// counts: one cheap count serves both. A filter needs its own.
		v.Waiting = pending
		if v.Filtered {
			if v.Waiting, err = h.cfg.Lists.CountQueue(ctx, f); err != nil {
				return err
			}
		}
		v.Capped = v.Waiting >= lists.PendingCountCap
	}
	if len(cards) > queuePage {
		cards = cards[:queuePage]
		last := cards[len(cards)-1]
		v.NextURL = "/queue?" + queueQuery(v.Filter, &lists.QueueCursor{DeadlineAt: *last.DeadlineAt, ID: last.ID})
	}
	changes, err := h.cfg.Control.TargetChanges(ctx, cardIDs(cards))
	if err != nil {
		return err
	}
	decided := q.Get("decided")
	policies := loadPolicies(ctx, h.cfg.Control, len(cards))
	for _, card := range cards {
		cv := h.cardView(ctx, card, u, policies, cardInList)
		cv.Stale = staleSentences(changes[card.ID], card.Target.Kind)
		v.Cards = append(v.Cards, cv)
		switch bulkChoice(card, cv) {
		case bulkYes:
			v.BulkIDs = append(v.BulkIDs, cv.ID)
		case bulkStepUp:
			v.BulkStepUp = append(v.BulkStepUp, cv)
		}
		if decided != "" && v.FocusID == "" && card.ID != decided {
			v.FocusID = card.ID
		}
	}
	if decided != "" {
		if v.Decided, err = h.decidedView(ctx, decided, u); err != nil {
			return err
		}
		v.FocusEmpty = v.FocusID == "" && len(v.Cards) == 0
	}
	p := h.Page(c, title("approval_queue", nil))
	status := http.StatusOK
	if len(v.Errors) > 0 {
		status = http.StatusUnprocessableEntity
	}
	return kit.Render(c, status, views.Queue(p, v))
}

// handleQueueClaim answers POST /queue/:id/claim: opening a card for
// deciding holds it for a few minutes, unless another agent holds it
// (then the card opens saying who does). Someone whose role the action's
// policy does not let decide is refused (403, role_may_not_approve); the
// queue offers them View instead.
func (h *Handler) handleQueueClaim(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	id := c.Param("id")
	claim, err := h.cfg.Control.Claim(c.Request().Context(), actorOf(c, u), id)
	if err != nil {
		return err
	}
	if claim.UserID != u.ID {
		kit.SetFlash(c, locale.Console("console.flash.card_taken", nil), true)
	}
	return kit.SeeOther(c, "/queue/"+url.PathEscape(id))
}

func queueQuery(f views.QueueFilterView, after *lists.QueueCursor) string {
	q := url.Values{}
	for k, v := range map[string]string{"system": f.System, "action": f.Action, "customer": f.Customer, "min": f.MinAmount,
		"max": f.MaxAmount, "age": f.Age} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Mine {
		q.Set("mine", "1")
	}
	if after != nil {
		q.Set("after_at", after.DeadlineAt.UTC().Format(time.RFC3339Nano))
		q.Set("after_id", after.ID)
	}
	return q.Encode()
}

// parseDollars reads an optional amount typed in dollars into cents.
func parseDollars(s string) (*int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1e9 {
		return nil, fmt.Errorf("write an amount in dollars, like 25 or 19.99")
	}
	n := int64(math.Round(f * 100))
	return &n, nil
}

// cardDetail says how much of a card to build: the queue's list shows
// its title, deadline, hold and risk, not its arguments or who approved
// it first (a read per approver).
type cardDetail bool

const (
	cardInList cardDetail = false
	cardWhole  cardDetail = true
)

// cardView builds what a card shows from a queue card.
func (h *Handler) cardView(ctx context.Context, card controlplane.QueueCard, u accounts.User, policies policyCache, detail cardDetail) views.QueueCard {
	now := h.Now()
	inv := card.Invocation
	v := views.QueueCard{ID: inv.ID, TaskID: inv.TaskID, System: inv.System, Action: inv.Action, Quote: quoteView(inv.Quote, nil),
		Summary: inv.Summary, SummaryDisagrees: inv.SummaryDisagrees, CustomerRef: card.CustomerRef, ConversationID: inv.ConversationID,
		BudgetLeft: max(card.WriteBudget-card.WritesUsed, 0), WriteBudget: card.WriteBudget, InflightLimit: card.InflightLimit,
		Inflight: card.Inflight, Version: inv.Version, ArgsHash: hex.EncodeToString(inv.ArgsHash),
		Edited: inv.Args.Approved != nil && string(inv.Args.Approved) != string(inv.Args.Proposed), State: layout.StateBadge(inv.State),
		TargetKey: inv.System + "/" + inv.Target.Kind + "/" + inv.Target.ID, TargetDisplay: inv.Target.Display,
		Why: inv.RouteReason, PolicyVersion: policyVersionWords(inv.PolicyVersion)}
	if !card.QuotedAt.IsZero() {
		v.QuotedAt, v.QuotedAgo, v.QuotedISO = clock(card.QuotedAt), ago(now.Sub(card.QuotedAt)), card.QuotedAt.UTC().Format(time.RFC3339)
	}
	if v.TargetDisplay == "" {
		v.TargetDisplay = say("console.words.queue.same_target", locale.Params{"Kind": inv.Target.Kind})
	}
	if v.Summary == "" {
		v.Summary = say("console.words.queue.no_summary", nil)
	}
	if detail == cardWhole {
		args := inv.Args.Approved
		if args == nil {
			args = inv.Args.Proposed
		}
		v.Args = flattenArgs(args, inv.Quote.Currency)
	}
	if inv.DeadlineAt != nil {
		v.DeadlineISO, v.NowISO = inv.DeadlineAt.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)
		left := inv.DeadlineAt.Sub(now)
		v.TimeLeft, v.Urgent = timeLeft(left), left < 15*time.Minute
	}
	if card.HolderID != 0 {
		v.HolderName, v.HeldByMe, v.HoldUntil = card.HolderName, card.HolderID == u.ID, card.HoldUntil.UTC().Format("15:04 UTC")
	}
	_, spec, err := h.cfg.Registry.Action(inv.System, inv.Action)
	if err == nil {
		v.ActionTitle = spec.Title
		v.Limits = append(v.Limits, spec.Limits...)
	}
	p := policies.get(ctx, h.cfg.Control, inv.System, inv.Action)
	v.MayDecide, v.Deciders = cardDeciders(p, inv.System, inv.Action, u)
	if p != nil {
		// The limits are written in the policy's currency; an amount in
		// another is compared with none of them, so it needs every
		// person the policy can ask for (controlplane.Policy.Unlike).
		unlike := p.Unlike(inv)
		if p.ApprovalAboveCents != nil {
			v.Limits = append(v.Limits, say("console.words.queue.limit_approval", locale.Params{
				"Deciders": strings.ToUpper(v.Deciders[:1]) + v.Deciders[1:], "Amount": money.Format(*p.ApprovalAboveCents, p.Currency())}))
		}
		if p.SecondApproverAboveCents != nil {
			v.Limits = append(v.Limits, say("console.words.queue.limit_second", locale.Params{"Amount": money.Format(*p.SecondApproverAboveCents, p.Currency())}))
			// With what already moved or is pending on the customer or
			// object: the approval counts it too.
			v.NeedsSecond = unlike || inv.AmountCents != nil && *inv.AmountCents+inv.ExposureCents > *p.SecondApproverAboveCents
		}
		v.LowRisk = err == nil && spec.Risk == adapter.Reversible && !v.NeedsSecond && !unlike &&
			(inv.AmountCents == nil || (p.AutoMaxCents != nil && *inv.AmountCents+inv.ExposureCents <= *p.AutoMaxCents))
	}
	v.Irreversible = err == nil && spec.Risk == adapter.Irreversible
	v.NeedsStepUp = h.cfg.Control.ApprovalNeedsStepUp(p, inv)
	v.ConfirmApprove = v.Irreversible || v.NeedsSecond
	for _, id := range card.FirstApprovers {
		if detail == cardInList {
			break
		}
		if user, err := h.Accounts.User(ctx, id); err == nil {
			v.FirstApprovers = append(v.FirstApprovers, user.Name)
		}
	}
	return v
}

// quoteView renders a quote; lines whose label is in changed are marked.
func quoteView(q adapter.Quote, changed map[string]bool) views.QuoteView {
	v := views.QuoteView{Title: q.Title, Consequences: q.Consequences}
	for _, l := range q.Lines {
		v.Lines = append(v.Lines, views.QuoteLineView{Label: l.Label, From: l.From, To: l.To, Emphasis: l.Emphasis, Changed: changed[l.Label]})
	}
	if q.AmountCents != nil {
		v.Amount = money.Format(*q.AmountCents, q.Currency)
	}
	if q.EffectiveAt != nil {
		v.Effective = q.EffectiveAt.UTC().Format("January 2, 2006")
	}
	return v
}

// flattenArgs lists arguments for people: labelled ("Amount", "Address
// city"), amounts as money in the task's currency, codes in words.
func flattenArgs(raw json.RawMessage, currency string) []views.ArgView {
	var out []views.ArgView
	for _, f := range argFields(raw, currency) {
		out = append(out, views.ArgView{Name: f.Label, Value: f.Value})
	}
	return out
}

func argText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// timeLeft says how long until a deadline, or that it passed.
func timeLeft(d time.Duration) string {
	switch {
	case d <= 0:
		return say("console.words.time.left_none", nil)
	case d < time.Minute:
		return say("console.words.time.left_seconds", locale.Params{"S": strconv.Itoa(int(d.Seconds()))})
	case d < time.Hour:
		return say("console.words.time.left_minutes", locale.Params{"M": strconv.Itoa(int(d.Minutes())), "S": fmt.Sprintf("%02d", int(d.Seconds())%60)})
	default:
		return say("console.words.time.left_hours", locale.Params{"H": strconv.Itoa(int(d.Hours())), "M": fmt.Sprintf("%02d", int(d.Minutes())%60)})
	}
}

// pendingCounts is PendingCounts, read once per request: the page and the
// header's badge ask for the same numbers.
func (h *Handler) pendingCounts(c echo.Context) (awaitingApproval, unverified int, err error) {
	type counts struct{ awaiting, unverified int }
	if got, ok := c.Get("countersign.pending").(counts); ok {
		return got.awaiting, got.unverified, nil
	}
	awaitingApproval, unverified, err = h.cfg.Lists.PendingCounts(c.Request().Context())
	if err == nil {
		c.Set("countersign.pending", counts{awaitingApproval, unverified})
	}
	return awaitingApproval, unverified, err
}

// CountQueue puts the header's badge on the queue's navigation item: the
// requests awaiting approval, which is exactly what the queue shows.
// Results nobody could confirm are not in the queue; the home page and
// the queue's own page count them apart, linked to where they are. A
// failed count leaves the badge off rather than failing the page.
func (h *Handler) CountQueue(c echo.Context, nav []views.NavItem) {
	pending, _, err := h.pendingCounts(c)
	if err != nil {
		h.Log.Warn("count pending approvals", "error", err)
		return
	}
	for i := range nav {
		if nav[i].Href == "/queue" {
			nav[i].Count = pending
			nav[i].CountLabel = say("console.words.nav.queue_count", locale.Params{"N": strconv.Itoa(pending)})
			if pending >= lists.PendingCountCap {
				nav[i].CountLabel = say("console.words.nav.queue_count_more", locale.Params{"N": strconv.Itoa(lists.PendingCountCap)})
			}
		}
	}
}

func cardIDs(cards []controlplane.QueueCard) []string {
	ids := make([]string, len(cards))
	for i, c := range cards {
		ids[i] = c.ID
	}
	return ids
}

// staleSentences says what moved on a card's object after its quote was
// made, one sentence per other write, with when.
func staleSentences(changes []controlplane.TargetChange, kind string) []string {
	var out []string
	for _, ch := range changes {
		// A change without a title is named by its action: one message
		// per way of naming it, so neither is glued into the other.
		id, p := "console.words.queue.stale.titled.", locale.Params{"Title": ch.Title, "Kind": kind, "At": clock(ch.At)}
		if ch.Title == "" {
			id, p["Action"] = "console.words.queue.stale.action.", strings.ReplaceAll(ch.Action, "_", " ")
		}
		switch ch.State {
		case controlplane.Completed:
			out = append(out, say(id+"completed", p))
		case controlplane.Dispatching:
			out = append(out, say(id+"sending", p))
		default:
			out = append(out, say(id+"sent", p))
		}
	}
	return out
}

// clock says a time of day as the console does: "12:04 UTC".
func clock(t time.Time) string {
	return t.UTC().Format("15:04 UTC")
}

// ago says how long ago, in the words an agent reads at a glance.
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return say("console.words.time.just_now", nil)
	case d < time.Hour:
		return say("console.words.time.minutes_ago", locale.Params{"N": strconv.Itoa(int(d.Minutes()))})
	case d < 48*time.Hour:
		h := int(d.Hours())
		return locale.ConsoleN("console.words.time.hours_ago", h, locale.Params{"N": strconv.Itoa(h)})
	default:
		return say("console.words.time.days_ago", locale.Params{"N": strconv.Itoa(int(d.Hours() / 24))})
	}
}
