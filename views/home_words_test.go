package views

import (
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// TestTheHomePageComesFromTheCatalogue: the landing page (nothing
// waiting, one of each, several with the approvals capped and reviews
// overdue; results nobody could confirm, listed in part; a role without
// waiting work) writes no text of its own: an installation's override of
// every console text shows, and nothing else. The role's introduction
// and the places' names are made by web/console and are data here.
func TestTheHomePageComesFromTheCatalogue(t *testing.T) {
	installMarkedConsole(t)
	p := Page{Title: "Home", User: &User{Name: "Ada", RoleLabel: "agent"}, CSRF: "tok"}
	components := map[string]templ.Component{"no waiting work": Home(p, HomeView{Name: "Ada", RoleLabel: "agent"})}
	for name, n := range map[string]int{"nothing waiting": 0, "one of each": 1, "several": 2} {
		w := &WaitingView{Approvals: n, ApprovalsCapped: n == 2, Soonest: "in 12m 03s", SoonestUrgent: true, Unverified: n + 1,
			Handoffs: n, ShowReviews: true, UnverifiedItems: []WaitingItem{{Title: "Refund $42.10", Href: "/tasks/t1", Since: "09:00"}}}
		components[name] = Home(p, HomeView{Name: "Ada", RoleLabel: "agent", Intro: "You approve what assistants propose.",
			Links: []NavItem{{Label: "Queue", Href: "/queue", About: "Requests waiting for you."}}, Waiting: w,
			OverdueReviews: []string{"shop/refund_order", "shop/change_address"}[:n]})
	}
	data := []string{"Home", "Ada", "agent", "in 12m 03s", "Refund $42.10", "09:00", "You approve what assistants propose.",
		"Queue", "Requests waiting for you.", "shop/refund_order", "shop/change_address"}
	for name, c := range components {
		_, html := renderDoc(t, c)
		if strays := consoleStrays(html, data...); len(strays) > 0 {
			t.Errorf("%s writes text of its own:\n%s", name, strings.Join(strays, "\n"))
		}
	}
}
