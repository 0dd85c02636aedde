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
	"countersign/views"
	"countersign/web/kit"
)

// taskNeeds are the task list's "needs" filters, in the order shown.
var taskNeeds = []struct{ value, label string }{
	{"person", "Needs a person"},
	{"unverified", "Result to check"},
	{"approval", "Awaiting approval"},
	{"paused", "Paused"},
	{"handoff", "Hand-offs waiting"},
	{"mine", "Mine"},
	{"all", "All tasks"},
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
		v.Needs = append(v.Needs, views.FilterLink{Label: n.label, Count: thousands(counts[n.value]), URL: to,
			Current: n.value == need, TestID: "need-" + n.value})
		if n.value == need {
			v.Showing = n.label
		}
	}
	for _, st := range []struct {
		value, label string
		n            int64
	}{{"active", "Active", k.Active}, {"paused", "Paused", k.PausedState}, {"cancelled", "Cancelled", k.Cancelled}, {"closed", "Closed", k.Closed}} {
		v.States = append(v.States, views.FilterOption{Value: st.value, Label: fmt.Sprintf("%s (%s)", st.label, thousands(st.n)), Selected: st.value == f.State})
	}
	for _, a := range sortedKeys(k.Actions) {
		v.Actions = append(v.Actions, views.FilterOption{Value: a, Label: fmt.Sprintf("%s (%s)", h.actionName(a), thousands(k.Actions[a])), Selected: a == f.Action})
	}
	for _, t := range page.Items {
		r := taskRow(t)
		r.Title = subjectWords(h.requestTitle(t.FirstTitle, t.FirstAction, t.FirstTarget, ""), t.Requests)
		v.Tasks = append(v.Tasks, r)
	}
	v.Pager = pagerView(k.Before, len(page.Items), k.Total, "task", "tasks")
	if page.Next != nil {
		v.Pager.NextURL = link(need, fmt.Sprintf("%d.%d.%s", page.Next.Rank, page.Next.UpdatedAt.UnixMicro(), page.Next.ID))
	}
	if f.After != nil {
		v.Pager.FirstURL = link(need, "")
	}
	p := h.Page(c, "Tasks")
	return kit.Render(c, http.StatusOK, views.Tasks(p, v))
}

// taskRow says what a task needs from a person, in sentences.
func taskRow(t lists.TaskItem) views.TaskRow {
	r := views.TaskRow{ID: t.ID, CustomerRef: t.CustomerRef, ConversationID: t.ConversationID, State: taskBadge(t.State),
		NeedsPerson: t.NeedsPerson, Mine: t.Mine, BudgetLeft: t.BudgetLeft(), WriteBudget: t.WriteBudget,
		Updated: t.UpdatedAt.UTC().Format("Jan 2 15:04 UTC")}
	if t.Unverified > 0 {
		r.Needs = append(r.Needs, views.Plural(int64(t.Unverified), "result needs checking", "results need checking"))
	}
	if t.AwaitingApproval > 0 {
		r.Needs = append(r.Needs, views.Plural(int64(t.AwaitingApproval), "request awaits approval", "requests await approval"))
	}
	if t.State == controlplane.TaskPaused {
		r.Needs = append(r.Needs, "paused: resume or cancel it")
	}
	if t.HandoffsWaiting > 0 {
		r.Needs = append(r.Needs, views.Plural(int64(t.HandoffsWaiting), "hand-off nobody has taken", "hand-offs nobody has taken"))
	}
	if t.AwaitingCustomer > 0 {
		r.Waiting = "Waiting for the customer to confirm " + views.Plural(int64(t.AwaitingCustomer), "request", "requests") + "."
	}
	return r
}

// pagerView words a page's place in its list: "Showing 51–100 of 1,234
// tasks", "1 task", "No tasks".
func pagerView(before int64, n int, total int64, one, many string) views.Pager {
	switch {
	case total == 0:
		return views.Pager{Showing: "No " + many + "."}
	case n == 0:
		return views.Pager{Showing: fmt.Sprintf("Nothing more: %s in all.", views.Plural(total, one, many))}
	case total == 1:
		return views.Pager{Showing: "Showing the only " + one + "."}
	case before == 0 && int64(n) == total:
		return views.Pager{Showing: fmt.Sprintf("Showing all %s.", views.Plural(total, one, many))}
	}
	return views.Pager{Showing: fmt.Sprintf("Showing %s–%s of %s.", thousands(before+1), thousands(before+int64(n)), views.Plural(total, one, many))}
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
