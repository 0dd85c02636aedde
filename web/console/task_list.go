package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/controlplane"
	"countersign/internal/lists"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// taskNeeds are the task list's "needs" filters, in the order shown.
// Each is named by console.words.tasks.need.<value>.
var taskNeeds = []struct{ value string }{
	{"person"}, {"unverified"}, {"approval"}, {"paused"}, {"handoff"}, {"mine"}, {"all"},
}

// taskNeed is the list's "needs" filter from the query: need=…, with
// status=all (older links) meaning every task. Without either the list
// opens on what needs a person, unless a search, state or action asks for
// something else: those look through every task, as they always did.
func taskNeed(c echo.Context, searching bool) string {
	need := c.QueryParam("need")
	for _, n := range taskNeeds {
		if need != "" && n.value == need {
			return need
		}
	}
	if c.QueryParam("status") == "all" || searching {
		return "all"
	}
	return "person"
}

const listPageSize = 50

// handleTasks answers GET /tasks: the agents' task list, tasks that need a
// person first (a result to check, a card to approve, a pause, a hand-off
// nobody took), filtered by what they need, state, action and search, with
// a count beside each filter and 50 a page (keyset: after=rank.unixnano.id).
func (h *Handler) handleTasks(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	q := strings.TrimSpace(c.QueryParam("q"))
	f := lists.TaskFilter{Query: q, State: c.QueryParam("state"), Action: c.QueryParam("action"), UserID: u.ID, Limit: listPageSize}
	if !oneOf(f.State, "", "active", "paused", "cancelled", "closed") {
		f.State = ""
	}
	need := taskNeed(c, q != "" || f.State != "" || f.Action != "")
	if f.Need = need; need == "all" {
		f.Need = ""
	}
	f.After = parseTaskCursor(c.QueryParam("after"))
	page, err := h.cfg.Lists.TaskList(c.Request().Context(), f)
	if err != nil {
		return err
	}
	link := func(need, after string) string {
		v := url.Values{}
		for k, x := range map[string]string{"q": q, "state": f.State, "action": f.Action, "need": need, "after": after} {
			if x != "" {
				v.Set(k, x)
			}
		}
		return "/tasks?" + v.Encode()
	}
	k := page.Counts
	// Hand-offs are counted in conversations, as the home page and the
	// hand-off list count them (a hand-off may have no task), and the
	// filter leads to that list.
	handoffs, err := h.cfg.Lists.HandoffsWaiting(c.Request().Context())
	if err != nil {
		return err
	}
	counts := map[string]int64{"person": k.NeedsPerson, "unverified": k.Unverified, "approval": k.Approval,
		"paused": k.Paused, "handoff": handoffs, "mine": k.Mine, "all": k.All}
	v := views.TaskListView{Query: q, State: f.State, Action: f.Action, Need: need}
	for _, n := range taskNeeds {
		to := link(n.value, "")
		if n.value == "handoff" {
			to = "/handoffs?status=waiting"
		}
		label := say("console.words.tasks.need."+n.value, nil)
		v.Needs = append(v.Needs, views.FilterLink{Label: label, Count: thousands(counts[n.value]), URL: to,
			Current: n.value == need, TestID: "need-" + n.value})
		if n.value == need {
			v.Showing = label
		}
	}
	for _, st := range []struct {
		value string
		n     int64
	}{{"active", k.Active}, {"paused", k.PausedState}, {"cancelled", k.Cancelled}, {"closed", k.Closed}} {
		v.States = append(v.States, views.FilterOption{Value: st.value, Selected: st.value == f.State,
			Label: say("console.words.tasks.state."+st.value, locale.Params{"N": thousands(st.n)})})
	}
	for _, a := range sortedKeys(k.Actions) {
		v.Actions = append(v.Actions, views.FilterOption{Value: a, Selected: a == f.Action,
			Label: say("console.words.tasks.action", locale.Params{"Action": h.actionName(a), "N": thousands(k.Actions[a])})})
	}
	for _, t := range page.Items {
		r := taskRow(t)
		r.Title = subjectWords(h.requestTitle(t.FirstTitle, t.FirstAction, t.FirstTarget, ""), t.Requests)
		v.Tasks = append(v.Tasks, r)
	}
	v.Pager = pagerView(k.Before, len(page.Items), k.Total, "tasks")
	if page.Next != nil {
		v.Pager.NextURL = link(need, fmt.Sprintf("%d.%d.%s", page.Next.Rank, page.Next.UpdatedAt.UnixMicro(), page.Next.ID))
	}
	if f.After != nil {
		v.Pager.FirstURL = link(need, "")
	}
	p := h.Page(c, title("tasks", nil))
	return kit.Render(c, http.StatusOK, views.Tasks(p, v))
}

// taskRow says what a task needs from a person, in sentences.
func taskRow(t lists.TaskItem) views.TaskRow {
	r := views.TaskRow{ID: t.ID, CustomerRef: t.CustomerRef, ConversationID: t.ConversationID, State: taskBadge(t.State),
		NeedsPerson: t.NeedsPerson, Mine: t.Mine, BudgetLeft: t.BudgetLeft(), WriteBudget: t.WriteBudget,
		Updated: t.UpdatedAt.UTC().Format("Jan 2 15:04 UTC")}
	if t.Unverified > 0 {
		r.Needs = append(r.Needs, sayN("console.words.tasks.row.unverified", int64(t.Unverified), nil))
	}
	if t.AwaitingApproval > 0 {
		r.Needs = append(r.Needs, sayN("console.words.tasks.row.approval", int64(t.AwaitingApproval), nil))
	}
	if t.State == controlplane.TaskPaused {
		r.Needs = append(r.Needs, say("console.words.tasks.row.paused", nil))
	}
	if t.HandoffsWaiting > 0 {
		r.Needs = append(r.Needs, sayN("console.words.tasks.row.handoffs", int64(t.HandoffsWaiting), nil))
	}
	if t.AwaitingCustomer > 0 {
		r.Waiting = sayN("console.words.tasks.row.customer", int64(t.AwaitingCustomer), nil)
	}
	return r
}

// pagerView words a page's place in its list of what ("tasks" or
// "conversations", console.words.pager.<what>.*): "Showing 51–100 of
// 1,234 tasks.", "Showing the only task.", "No tasks.".
func pagerView(before int64, n int, total int64, what string) views.Pager {
	id := "console.words.pager." + what + "."
	switch {
	case total == 0:
		return views.Pager{Showing: say(id+"none", nil)}
	case n == 0:
		return views.Pager{Showing: sayN(id+"rest", total, nil)}
	case total == 1:
		return views.Pager{Showing: say(id+"only", nil)}
	case before == 0 && int64(n) == total:
		return views.Pager{Showing: sayN(id+"all", total, nil)}
	}
	return views.Pager{Showing: sayN(id+"range", total, locale.Params{"From": thousands(before + 1), "To": thousands(before + int64(n))})}
}

// parseTaskCursor reads after=rank.unixmicro.id; anything else is the first page.
func parseTaskCursor(s string) *lists.TaskCursor {
	parts := strings.SplitN(s, ".", 3)
	if len(parts) != 3 {
		return nil
	}
	rank, err1 := strconv.ParseInt(parts[0], 10, 32)
	micros, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || parts[2] == "" {
		return nil
	}
	return &lists.TaskCursor{Rank: int32(rank), UpdatedAt: time.UnixMicro(micros), ID: parts[2]}
}

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}
