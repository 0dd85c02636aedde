package views

import (
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// TestTheTaskListComesFromTheCatalogue: the tasks list (filters, a row
// that needs a person and is the viewer's, a row waiting on someone else,
// both pagers) and the list with no task write no text of their own: an
// installation's override of every console text shows, and nothing else.
// The filters' labels, counts and the pager's "Showing …" are made by
// web/console and given here as data.
func TestTheTaskListComesFromTheCatalogue(t *testing.T) {
	installMarkedConsole(t)
	p := Page{Title: "Tasks", User: &User{Name: "Ada", RoleLabel: "agent"}}
	rows := []TaskRow{
		{ID: "t1", Title: "Refund $42.10 on order 245695", CustomerRef: "jordan@example.com", ConversationID: "conv-7",
			State: StateBadgeView{Label: "running"}, NeedsPerson: true, Needs: []string{"1 result needs checking"}, Mine: true,
			BudgetLeft: 3, WriteBudget: 5, Updated: "3 min ago"},
		{ID: "t2", Title: "Change the address", CustomerRef: "sam@example.com", ConversationID: "conv-8",
			State: StateBadgeView{Label: "running"}, Waiting: "1 awaiting the customer", BudgetLeft: 5, WriteBudget: 5, Updated: "1 h ago"},
	}
	for i := 0; i < 10; i++ {
		rows = append(rows, rows[1])
	}
	v := TaskListView{Need: "all", Showing: "all tasks",
		Needs:   []FilterLink{{Label: "Needs a person", Count: "1", URL: "/tasks", Current: true}, {Label: "All", Count: "12", URL: "/tasks?need=all"}},
		States:  []FilterOption{{Value: "running", Label: "running (12)", Selected: true}},
		Actions: []FilterOption{{Value: "shop/refund_order", Label: "Refund an order (1)"}},
		Tasks:   rows, Pager: Pager{Showing: "Showing 1–12 of 40 tasks", NextURL: "/tasks?after=x", FirstURL: "/tasks"}}
	data := []string{"Tasks", "Ada", "agent", "Needs a person", "All", "running (12)", "Refund an order (1)", "all tasks",
		"Showing 1–12 of 40 tasks", "t1", "t2", "conv-7", "conv-8", "Refund $42.10 on order 245695", "jordan@example.com",
		"running", "1 result needs checking", "3 min ago", "Change the address", "sam@example.com", "1 awaiting the customer", "1 h ago"}
	for name, c := range map[string]templ.Component{
		"tasks":   Tasks(p, v),
		"no task": Tasks(p, TaskListView{Need: "person", Pager: Pager{Showing: "Showing 1–12 of 40 tasks"}}),
	} {
		_, html := renderDoc(t, c)
		if strays := consoleStrays(html, data...); len(strays) > 0 {
			t.Errorf("%s writes text of its own:\n%s", name, strings.Join(strays, "\n"))
		}
	}
}
