package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/money"
	"countersign/views"
)

// handleTasks answers GET /tasks: the agents' task list, searched by
// customer, conversation or id and by state; tasks with unverified or
// not-dispatched work come first.
func (s *Server) handleTasks(c echo.Context) error {
	q, state := strings.TrimSpace(c.QueryParam("q")), c.QueryParam("state")
	v := views.TaskListView{Query: q, State: state, States: []string{"active", "paused", "cancelled", "closed"}}
	tasks, err := s.cfg.Control.Tasks(c.Request().Context(), controlplane.TaskFilter{Query: q, State: controlplane.TaskState(state), Limit: 100})
	if err != nil {
		return err
	}
	for _, t := range tasks {
		v.Tasks = append(v.Tasks, views.TaskRow{ID: t.ID, CustomerRef: t.CustomerRef, ConversationID: t.ConversationID,
			State: taskBadge(t.State), BudgetLeft: t.BudgetLeft(), WriteBudget: t.WriteBudget,
			Updated: t.UpdatedAt.UTC().Format("Jan 2 15:04 UTC")})
	}
	p, err := s.page(c, "Tasks")
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.Tasks(p, v))
}

// handleTask answers GET /tasks/:id: where the task stands in words that keep
// approval and execution apart (Completed, Result needs checking, Not
// dispatched with why), its controls, its requests, its timeline, and with ?inspect= the
// read-only record of one original call.
func (s *Server) handleTask(c echo.Context) error {
	return s.renderTask(c, http.StatusOK, views.LiftBlockForm{})
}

// renderTask renders the task page; lift is a refused block lift to show
// again with its errors.
func (s *Server) renderTask(c echo.Context, status int, lift views.LiftBlockForm) error {
	ctx := c.Request().Context()
	u, _ := currentUser(c)
	live, err := s.taskLive(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	v := views.TaskView{Live: live, IsAdmin: u.Role == accounts.Admin, Lift: lift,
		CanLiftBlocks: u.Role == accounts.Agent || u.Role == accounts.Admin}
	if v.GlobalStopped, err = s.cfg.Control.GlobalStopped(ctx); err != nil {
		return err
	}
	blocks, err := s.cfg.Control.Blocks(ctx, live.ID)
	if err != nil {
		return err
	}
	for _, b := range blocks {
		v.Blocks = append(v.Blocks, views.BlockRow{System: b.System, TargetID: b.TargetID, Action: b.Action, Code: b.Code,
			Message: b.Message, Since: b.CreatedAt.UTC().Format("Jan 2 15:04 UTC")})
	}
	if id := c.QueryParam("inspect"); id != "" {
		in, err := s.cfg.Control.Inspect(ctx, id)
		if err != nil {
			return err
		}
		if in.Invocation.TaskID != live.ID {
			return echo.NewHTTPError(http.StatusNotFound, "That request is not part of this task.")
		}
		iv := inspectView(in)
		v.Inspect = &iv
	}
	p, err := s.page(c, "Task "+live.ID)
	if err != nil {
		return err
	}
	return render(c, status, views.Task(p, v))
}

// handleTaskLive answers GET /tasks/:id/live, the fragment the task page
// polls: 204 No Content while the task's mark is unchanged, so htmx swaps
// nothing and the reader keeps their place; the new fragment otherwise.
func (s *Server) handleTaskLive(c echo.Context) error {
	live, err := s.taskLive(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	if c.QueryParam("mark") == live.Mark {
		return c.NoContent(http.StatusNoContent)
	}
	p, err := s.page(c, "Task "+live.ID)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.TaskLive(p, live))
}

func (s *Server) taskLive(ctx context.Context, id string) (views.TaskLiveView, error) {
	t, err := s.cfg.Control.Task(ctx, id)
	if err != nil {
		return views.TaskLiveView{}, err
	}
	invs, err := s.cfg.Control.Invocations(ctx, id)
	if err != nil {
		return views.TaskLiveView{}, err
	}
	events, err := s.cfg.Control.Timeline(ctx, id)
	if err != nil {
		return views.TaskLiveView{}, err
	}
	v := views.TaskLiveView{ID: t.ID, CustomerRef: t.CustomerRef, ConversationID: t.ConversationID, State: taskBadge(t.State),
		Version: t.Version, BudgetLeft: t.BudgetLeft(), WriteBudget: t.WriteBudget, WritesUsed: t.WritesUsed,
		InflightLimit: t.InflightLimit, RatePerMinute: t.RatePerMinute, ExpiresAt: t.ExpiresAt.UTC().Format("Jan 2 15:04 UTC"),
		CanPause: t.State == controlplane.TaskActive, CanResume: t.State == controlplane.TaskPaused,
		CanCancel: t.State == controlplane.TaskActive || t.State == controlplane.TaskPaused}
	unverified := 0
	var lastState strings.Builder
	for _, inv := range invs {
		row := invocationRow(inv)
		if row.CanReverse {
			_, err := s.cfg.Control.Compensation(inv.System, inv.Action)
			row.CanReverse = err == nil
		}
		v.Invocations = append(v.Invocations, row)
		if inv.State == controlplane.Unverified {
			unverified++
		}
		fmt.Fprintf(&lastState, "%s:%d;", inv.ID, inv.Version)
	}
	if t.State == controlplane.TaskPaused {
		v.Notice = pausedNotice(unverified)
	}
	var lastEvent int64
	for _, e := range events {
		v.Timeline = append(v.Timeline, timelineRow(e))
		lastEvent = e.ID
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

func invocationRow(inv controlplane.Invocation) views.InvocationRow {
	r := views.InvocationRow{ID: inv.ID, Title: inv.Quote.Title, Action: inv.Action, State: stateBadge(inv.State),
		Unverified: inv.State == controlplane.Unverified, Pending: inv.State == controlplane.AwaitingApproval,
		CanReverse: inv.State == controlplane.Completed}
	if inv.Quote.AmountCents != nil {
		r.Amount = money.Format(*inv.Quote.AmountCents, inv.Quote.Currency)
	}
	switch inv.State {
	case controlplane.NotDispatched:
		r.Why = inv.NotDispatchedReason.Sentence()
	case controlplane.Rejected:
		if q, ok := controlplane.IsQuestion(inv.DecisionReason); ok {
			r.Why = "Sent back to the assistant: " + q
		} else {
			r.Why = inv.DecisionReason
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

func timelineRow(e controlplane.Event) views.TimelineRow {
	name, _ := e.Data["actor_name"].(string)
	actor := string(e.ActorKind)
	if name != "" {
		actor += " " + name
	}
	var detail []string
	for _, k := range []string{"reason", "to", "from", "args_hash"} {
		if v, ok := e.Data[k]; ok && v != nil && v != "" {
			detail = append(detail, fmt.Sprintf("%s: %v", k, v))
		}
	}
	return views.TimelineRow{ID: e.ID, At: e.At.UTC().Format("Jan 2 15:04:05"), AtISO: e.At.UTC().Format(time.RFC3339),
		Actor: actor, Action: e.Action, Invocation: e.InvocationID, Detail: strings.Join(detail, " · ")}
}

func inspectView(in controlplane.Inspection) views.InspectView {
	inv := in.Invocation
	at := func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return t.UTC().Format("Jan 2 15:04:05.000 UTC")
	}
	js := func(raw json.RawMessage) string {
		if raw == nil {
			return "—"
		}
		return string(raw)
	}
	v := views.InspectView{ID: inv.ID, Action: inv.System + "/" + inv.Action, State: stateBadge(inv.State),
		IdempotencyKey: inv.IdempotencyKey, Proposed: js(inv.Args.Proposed), ApprovedArgs: js(inv.Args.Approved),
		Effective: js(inv.Args.Effective), Created: at(&inv.CreatedAt), ApprovedAt: at(inv.ApprovedAt), Permit: at(inv.PermitAt),
		Finished: at(inv.FinishedAt), Unverified: inv.State == controlplane.Unverified}
	switch {
	case !in.Asked:
		v.LookupError = "this request never got a permit, so it never left"
	case in.LookupErr != nil:
		v.LookupError = in.LookupErr.Error()
	default:
		v.Found, v.LedgerState = in.Lookup.Found, in.Lookup.LedgerState
		for _, e := range in.Lookup.Effects {
			v.Effects = append(v.Effects, fmt.Sprintf("%s %s on %s at %s", e.ID, e.Kind, e.Object, e.At.UTC().Format("15:04:05 UTC")))
		}
	}
	return v
}
