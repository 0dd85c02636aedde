package console

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/money"
	"countersign/views"
	"countersign/web/kit"
	"countersign/web/layout"
)

// whatIfDays is how far back a policy what-if replays proposals.
const whatIfDays = 30

// handlePolicies answers GET /policies: every action's stage, limits,
// approval rules, deadlines, owner and review date, overdue reviews flagged.
func (h *Handler) handlePolicies(c echo.Context) error {
	ctx := c.Request().Context()
	policies, err := h.cfg.Control.Policies(ctx)
	if err != nil {
		return err
	}
	names, err := h.userNames(ctx)
	if err != nil {
		return err
	}
	var v views.PoliciesView
	for _, p := range policies {
		v.Policies = append(v.Policies, h.policyRow(p, names))
	}
	pg := h.Page(c, title("policies", nil))
	return kit.Render(c, http.StatusOK, views.Policies(pg, v))
}

// handlePolicyForm answers GET /policies/:system/:action: the form that
// changes a policy, with the what-if of the current policy.
func (h *Handler) handlePolicyForm(c echo.Context) error {
	ctx := c.Request().Context()
	p, err := h.cfg.Control.Policy(ctx, c.Param("system"), c.Param("action"))
	if err != nil {
		return err
	}
	w, err := h.cfg.Control.PolicyWhatIf(ctx, p, whatIfDays)
	if err != nil {
		return err
	}
	return h.renderPolicyForm(c, http.StatusOK, p, formOf(p), &w, nil)
}

// handlePolicyChange answers POST /policies/:system/:action: with
// intent=preview it shows the draft's what-if and changes nothing; with
// intent=save it changes the policy (a reason is required, the change is
// audited) and redirects to the list. Only managers and admins reach it.
func (h *Handler) handlePolicyChange(c echo.Context) error {
	ctx := c.Request().Context()
	current, err := h.cfg.Control.Policy(ctx, c.Param("system"), c.Param("action"))
	if err != nil {
		return err
	}
	form := views.PolicyForm{Version: c.FormValue("version"), Stage: c.FormValue("stage"), Enabled: c.FormValue("enabled") == "on",
		AutoMax: c.FormValue("auto_max"), ApprovalAbove: c.FormValue("approval_above"), SecondApproverAbove: c.FormValue("second_approver_above"),
		ApprovalHours: c.FormValue("approval_window"), ConfirmationMinutes: c.FormValue("confirmation_window"),
		Owner: c.FormValue("owner"), ReviewOn: c.FormValue("review_on"), Reason: c.FormValue("reason"),
		StepUpEvery: c.FormValue("step_up_every") == "on", StepUpAbove: c.FormValue("step_up_above"), Currency: c.FormValue("currency")}
	if params, err := c.FormParams(); err == nil {
		form.Approvers = params["approvers"]
	}
	draft, version, errs := h.parsePolicyForm(ctx, current, form)
	if len(errs) > 0 {
		form.Errors = errs
		return h.renderPolicyForm(c, http.StatusUnprocessableEntity, current, form, nil, nil)
	}
	today, err := h.cfg.Control.PolicyWhatIf(ctx, current, whatIfDays)
	if err != nil {
		return err
	}
	w, err := h.cfg.Control.PolicyWhatIf(ctx, draft, whatIfDays)
	if err != nil {
		return err
	}
	if c.FormValue("intent") != "save" {
		return h.renderPolicyForm(c, http.StatusOK, current, form, &today, &w)
	}
	u, _ := kit.CurrentUser(c)
	changed, err := h.cfg.Control.ChangePolicy(ctx, actorOf(c, u), draft, version, form.Reason)
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid {
		form.Errors = e.Fields
		return h.renderPolicyForm(c, http.StatusUnprocessableEntity, current, form, &today, &w)
	}
	if err != nil {
		return err
	}
	kit.SetFlash(c, say("console.labels.policies.changed", locale.Params{"System": changed.System, "Action": changed.Action, "Version": strconv.Itoa(int(changed.Version))}), false)
	return kit.SeeOther(c, "/policies")
}

// renderPolicyForm shows the form with the what-if of today's policy and,
// when a draft was previewed, the draft's and the change.
func (h *Handler) renderPolicyForm(c echo.Context, status int, p controlplane.Policy, form views.PolicyForm, today, draft *controlplane.WhatIf) error {
	ctx := c.Request().Context()
	names, err := h.userNames(ctx)
	if err != nil {
		return err
	}
	users, err := h.Accounts.Users(ctx)
	if err != nil {
		return err
	}
	v := views.PolicyEditView{System: p.System, Action: p.Action, Current: h.policyRow(p, names), Form: form}
	for _, st := range []controlplane.Stage{controlplane.StagePropose, controlplane.StageAssisted, controlplane.StageAutonomous} {
		v.Stages = append(v.Stages, views.Option{Value: strconv.Itoa(int(st)), Label: stageLabel(st)})
	}
	for _, r := range controlplane.ApproverRoleChoices {
		v.Deciders = append(v.Deciders, views.Option{Value: r, Label: layout.RolesLabel(accounts.Role(r))})
	}
	for _, u := range users {
		if (u.Role == accounts.Manager || u.Role == accounts.Admin) && !u.Disabled() {
			v.Owners = append(v.Owners, views.Option{Value: strconv.FormatInt(u.ID, 10), Label: say("console.labels.role.named", locale.Params{"Name": u.Name, "Role": layout.RoleLabel(u.Role)})})
		}
	}
	if today != nil {
		v.WhatIf = whatIfView(p, *today, draft)
	}
	pg := h.Page(c, title("policy_change", nil))
	return kit.Render(c, status, views.PolicyEdit(pg, v))
}

// whatIfRoute is one route of the what-if: its key (its words are
// console.rest.whatif.<key>, its change console.rest.whatif.more.<key>
// and .fewer.<key>), and its count and money in a WhatIf.
type whatIfRoute struct {
	key   string
	count func(controlplane.WhatIf) int
	cents func(controlplane.WhatIf) int64
}

var whatIfRoutes = []whatIfRoute{
	{"auto", func(w controlplane.WhatIf) int { return w.Auto }, func(w controlplane.WhatIf) int64 { return w.AutoCents }},
	{"approval", func(w controlplane.WhatIf) int { return w.Approval }, func(w controlplane.WhatIf) int64 { return w.ApprovalCents }},
	{"confirmation", func(w controlplane.WhatIf) int { return w.Confirmation }, func(w controlplane.WhatIf) int64 { return w.ConfirmationCents }},
	{"refused", func(w controlplane.WhatIf) int { return w.Refused }, func(w controlplane.WhatIf) int64 { return w.RefusedCents }},
}

// whatIfView lays out today's routing and, for a draft, the draft's and
// the change per route, led by the change in one sentence.
func whatIfView(p controlplane.Policy, today controlplane.WhatIf, draft *controlplane.WhatIf) *views.WhatIfView {
	v := &views.WhatIfView{Draft: draft != nil, Since: today.Since.Format(time.DateOnly), Proposals: money.Count(int64(today.Proposals)),
		TodayVersion: strconv.Itoa(int(p.Version))}
	var more, fewer []string
	for _, r := range whatIfRoutes {
		row := views.WhatIfRow{Key: r.key, Route: say("console.rest.whatif."+r.key, nil), TodayCount: money.Count(int64(r.count(today))),
			TodayMoney: money.Format(r.cents(today), today.Currency)}
		if draft != nil {
			n := r.count(*draft) - r.count(today)
			row.DraftCount, row.DraftMoney = money.Count(int64(r.count(*draft))), money.Format(r.cents(*draft), draft.Currency)
			row.Change = signedCount(int64(n))
			if draft.Currency == today.Currency {
				// Sums in two currencies are not subtracted.
				row.MoneyChange = signedMoney(r.cents(*draft)-r.cents(today), today.Currency)
			}
			switch {
			case n > 0:
				more = append(more, sayN("console.rest.whatif.more."+r.key, int64(n), nil))
			case n < 0:
				fewer = append(fewer, sayN("console.rest.whatif.fewer."+r.key, int64(-n), nil))
			}
		}
		v.Rows = append(v.Rows, row)
	}
	if draft != nil {
		if changes := append(more, fewer...); len(changes) == 0 {
			v.Summary = sayN("console.rest.whatif.summary_none", whatIfDays, nil)
		} else {
			v.Summary = say("console.rest.whatif.summary", locale.Params{"Changes": joinWords(changes)})
		}
	}
	return v
}

// signedCount writes a change in a count: "+5", "−3", "no change".
func signedCount(n int64) string {
	switch {
	case n > 0:
		return "+" + money.Count(n)
	case n < 0:
		return money.Count(n)
	}
	return say("console.rest.whatif.no_change", nil)
}

// signedMoney writes a change in money in currency: "+$120.00",
// "−€15.00", "" for none.
func signedMoney(minor int64, currency string) string {
	switch {
	case minor > 0:
		return "+" + money.Format(minor, currency)
	case minor < 0:
		return money.Format(minor, currency)
	}
	return ""
}

// parsePolicyForm turns the form into a draft policy and the version it
// was edited from, or field errors.
func (h *Handler) parsePolicyForm(ctx context.Context, current controlplane.Policy, f views.PolicyForm) (controlplane.Policy, int32, views.FieldErrors) {
	errs := views.FieldErrors{}
	draft := current
	version, err := strconv.ParseInt(f.Version, 10, 32)
	if err != nil {
		errs["version"] = say("console.rest.policies.error.version", nil)
	}
	stage, err := strconv.Atoi(f.Stage)
	if err != nil {
		errs["stage"] = say("console.rest.policies.error.stage", nil)
	}
	draft.Stage, draft.Enabled, draft.StepUpEvery = controlplane.Stage(stage), f.Enabled, f.StepUpEvery
	// The amounts are read in the currency the form states for them, with
	// its own decimals (none for yen).
	cur := strings.ToUpper(strings.TrimSpace(f.Currency))
	if !money.Known(cur) {
		errs["currency"] = say("console.rest.policies.error.currency", nil)
	}
	draft.LimitCurrency = cur
	for name, dst := range map[string]**int64{"auto_max": &draft.AutoMaxCents, "approval_above": &draft.ApprovalAboveCents,
		"second_approver_above": &draft.SecondApproverAboveCents, "step_up_above": &draft.StepUpAboveCents} {
		raw := map[string]string{"auto_max": f.AutoMax, "approval_above": f.ApprovalAbove, "second_approver_above": f.SecondApproverAbove,
			"step_up_above": f.StepUpAbove}[name]
		minor, ok := parsePolicyAmount(raw, cur)
		if !ok {
			errs[name] = say("console.rest.policies.error.amount", locale.Params{"Currency": cur, "Example": money.Example(cur)})
			continue
		}
		*dst = minor
	}
	hours, err := strconv.ParseFloat(strings.TrimSpace(f.ApprovalHours), 64)
	if err != nil || hours <= 0 || hours > 24*30 {
		errs["approval_window"] = say("console.rest.policies.error.approval_window", nil)
	} else {
		draft.ApprovalWindow = time.Duration(hours * float64(time.Hour)).Round(time.Minute)
	}
	minutes, err := strconv.Atoi(strings.TrimSpace(f.ConfirmationMinutes))
	if err != nil || minutes < 1 || minutes > 60*24*7 {
		errs["confirmation_window"] = say("console.rest.policies.error.confirmation_window", nil)
	} else {
		draft.ConfirmationWindow = time.Duration(minutes) * time.Minute
	}
	draft.OwnerID = nil
	if f.Owner != "" {
		id, err := strconv.ParseInt(f.Owner, 10, 64)
		if err != nil {
			errs["owner"] = say("console.rest.policies.error.owner", nil)
		} else if u, err := h.Accounts.User(ctx, id); err != nil || (u.Role != accounts.Manager && u.Role != accounts.Admin) || u.Disabled() {
			errs["owner"] = say("console.rest.policies.error.owner", nil)
		} else {
			draft.OwnerID = &id
		}
	}
	// Who decides the action's cards: the ticked roles, agents among them
	// (controlplane/approvers.go).
	if msg := approverRolesProblem(f.Approvers); msg != "" {
		errs["approvers"] = msg
	} else {
		draft.ApproverRoles = f.Approvers
	}
	draft.ReviewOn = nil
	if strings.TrimSpace(f.ReviewOn) != "" {
		d, err := time.Parse(time.DateOnly, strings.TrimSpace(f.ReviewOn))
		if err != nil {
			errs["review_on"] = say("console.rest.policies.error.review_on", nil)
		} else {
			draft.ReviewOn = &d
		}
	}
	return draft, int32(version), errs
}

// parsePolicyAmount reads a limit typed in currency's main unit ("25",
// "25.50"; "4210" for yen) as its minor units; blank is no limit.
func parsePolicyAmount(s, currency string) (*int64, bool) {
	if strings.TrimSpace(s) == "" {
		return nil, true
	}
	minor, err := money.Parse(s, currency)
	if err != nil {
		return nil, false
	}
	return &minor, true
}

// amountField shows an optional limit in a form field, in the policy's
// limit currency; none is empty.
func amountField(minor *int64, currency string) string {
	if minor == nil {
		return ""
	}
	return money.Major(*minor, currency)
}

func formOf(p controlplane.Policy) views.PolicyForm {
	cur := p.Currency()
	f := views.PolicyForm{Version: strconv.Itoa(int(p.Version)), Stage: strconv.Itoa(int(p.Stage)), Enabled: p.Enabled,
		Currency: cur, AutoMax: amountField(p.AutoMaxCents, cur), ApprovalAbove: amountField(p.ApprovalAboveCents, cur),
		SecondApproverAbove: amountField(p.SecondApproverAboveCents, cur),
		ApprovalHours:       strconv.FormatFloat(p.ApprovalWindow.Hours(), 'f', -1, 64),
		ConfirmationMinutes: strconv.Itoa(int(p.ConfirmationWindow.Minutes())), Approvers: p.ApproverRoles,
		StepUpEvery: p.StepUpEvery, StepUpAbove: amountField(p.StepUpAboveCents, cur)}
	if p.OwnerID != nil {
		f.Owner = strconv.FormatInt(*p.OwnerID, 10)
	}
	if p.ReviewOn != nil {
		f.ReviewOn = p.ReviewOn.Format(time.DateOnly)
	}
	return f
}

func (h *Handler) userNames(ctx context.Context) (map[int64]string, error) {
	users, err := h.Accounts.Users(ctx)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(users))
	for _, u := range users {
		names[u.ID] = u.Name
	}
	return names, nil
}

func (h *Handler) policyRow(p controlplane.Policy, names map[int64]string) views.PolicyRow {
	r := views.PolicyRow{System: p.System, Action: p.Action, Stage: stageLabel(p.Stage), Enabled: p.Enabled,
		Owner: say("console.rest.policies.owner_nobody", nil), ReviewOn: say("console.rest.policies.review_not_set", nil),
		Version: strconv.Itoa(int(p.Version)),
		Deadlines: say("console.rest.policies.deadlines", locale.Params{"Agents": metricsDuration(p.ApprovalWindow),
			"Customers": metricsDuration(p.ConfirmationWindow)})}
	if p.AutoMaxCents != nil {
		r.Limits = append(r.Limits, say("console.rest.policies.auto_up_to", locale.Params{"Amount": money.Format(*p.AutoMaxCents, p.Currency())}))
	}
	if _, spec, err := h.cfg.Registry.Action(p.System, p.Action); err == nil {
		r.Limits = append(r.Limits, spec.Limits...)
	}
	if p.ApprovalAboveCents != nil {
		r.Approval = append(r.Approval, say("console.rest.policies.approval_above", locale.Params{"Amount": money.Format(*p.ApprovalAboveCents, p.Currency())}))
	}
	if p.SecondApproverAboveCents != nil {
		r.Approval = append(r.Approval, say("console.rest.policies.second_approver_above", locale.Params{"Amount": money.Format(*p.SecondApproverAboveCents, p.Currency())}))
	}
	r.Approval = append(r.Approval, say("console.rest.policies.decided_by", locale.Params{"Deciders": decidersWords(p)}))
	if w := stepUpWords(p); w != "" {
		r.Approval = append(r.Approval, w)
	}
	if p.OwnerID != nil {
		r.Owner = names[*p.OwnerID]
	}
	if p.ReviewOn != nil {
		r.ReviewOn = p.ReviewOn.Format(time.DateOnly)
		r.ReviewOverdue = reviewOverdue(p, h.Now())
	}
	return r
}

// reviewOverdue reports whether a policy's review date has passed.
func reviewOverdue(p controlplane.Policy, now time.Time) bool {
	if p.ReviewOn == nil {
		return false
	}
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return p.ReviewOn.Before(today)
}

// metricsDuration writes a deadline short: "24h", "30m"
// (console.rest.duration.*).
func metricsDuration(d time.Duration) string {
	if d%time.Hour == 0 {
		return say("console.rest.duration.hours", locale.Params{"N": int(d.Hours())})
	}
	return say("console.rest.duration.minutes", locale.Params{"N": int(d.Minutes())})
}

// overdueReviews names ("system/action") the policies whose review date
// has passed, for the manager's home page.
func (h *Handler) overdueReviews(ctx context.Context) ([]string, error) {
	policies, err := h.cfg.Control.Policies(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range policies {
		if reviewOverdue(p, h.Now()) {
			out = append(out, p.System+"/"+p.Action)
		}
	}
	return out, nil
}
