package views

import (
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// TestTheHandoffsListComesFromTheCatalogue: the hand-offs list (over the
// target or not, a flood, rows taken, over target and waiting, with what
// the assistant would have proposed and the facts it read) and the list
// with none write no text of their own: an installation's override of
// every console text shows, and nothing else. The target, waits, times
// and the flood's sentence are made by web/console and are data here.
func TestTheHandoffsListComesFromTheCatalogue(t *testing.T) {
	installMarkedConsole(t)
	p := Page{Title: "Hand-offs", User: &User{Name: "Ada", RoleLabel: "agent"}, CSRF: "tok"}
	row := HandoffRow{ID: 1, LastID: 2, ConversationID: "conv-7", TaskID: "t1", Customer: "jordan@example.com",
		Intent: "Refund the lamp", Waiting: "waiting 5 min", Times: "first asked 09:00", Summary: "Wants a refund",
		Facts: []string{"Order 245695 delivered"}, WouldPropose: "Refund $42.10", ProposeArgs: []ArgField{{Label: "Amount", Value: "$42.10"}}}
	taken, over := row, row
	taken.TakenBy = "Grace Hopper"
	over.OverTarget = true
	v := HandoffsView{Target: "answered within 10 min", OverTarget: 1, Flood: "One assistant sent 12 in an hour.",
		Statuses: []FilterLink{{Label: "Waiting", Count: "3", URL: "/handoffs", Current: true}},
		Intents:  []FilterOption{{Value: "refund", Label: "Refund (2)"}},
		Handoffs: []HandoffRow{row, taken, over, row}, Pager: Pager{Showing: "Showing 1–4 of 4 hand-offs"}}
	none := HandoffsView{Target: "answered within 10 min", Pager: Pager{Showing: "Showing 1–4 of 4 hand-offs"}}
	data := []string{"Hand-offs", "Ada", "agent", "conv-7", "jordan@example.com", "Refund the lamp", "waiting 5 min",
		"first asked 09:00", "Wants a refund", "Order 245695 delivered", "Refund $42.10", "Amount", "$42.10",
		"Grace Hopper", "answered within 10 min", "One assistant sent 12 in an hour.", "Waiting", "Refund (2)",
		"Showing 1–4 of 4 hand-offs"}
	for name, c := range map[string]templ.Component{"hand-offs": Handoffs(p, v), "none": Handoffs(p, none)} {
		_, html := renderDoc(t, c)
		if strays := consoleStrays(html, data...); len(strays) > 0 {
			t.Errorf("%s writes text of its own:\n%s", name, strings.Join(strays, "\n"))
		}
	}
}
