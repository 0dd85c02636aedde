package web

import (
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// routes is the server's own part of the route table: the probes and the
// static files. The audiences' packages list the rest; New concatenates
// them, so the table is still one, and a route added outside it has no
// access rule and fails the role-matrix test.
func (s *Server) routes() []kit.Route {
	return []kit.Route{
		kit.GET("/healthz", s.handleHealthz, kit.Anyone),
		kit.GET("/readyz", s.handleReadyz, kit.Anyone),
		kit.GET("/static/*", s.handleStatic, kit.Anyone),
	}
}

// header lists the pages of the header's navigation, in order: each named
// by console.words.nav.<key> and, when it says what it is for on the home
// page, console.words.nav.<key>_about. Who sees each is the route table's
// rule for GET of its address (Access.Allows).
var header = []struct {
	key, href string
	about     bool
}{
	{"home", "/", false},
	{"requests", "/requests", true},
	{"queue", "/queue", true},
	{"tasks", "/tasks", true},
	{"handoffs", "/handoffs", true},
	{"systems", "/systems", true},
	{"metrics", "/metrics", true},
	{"policies", "/policies", true},
	{"users", "/admin/users", true},
	{"assistants", "/admin/assistants", true},
	{"clients", "/admin/clients", true},
	{"audit", "/admin/audit", true},
	{"password", "/account/password", true},
}

// navItem is a page of the header named from the console's catalogue.
func navItem(key, href string, about bool) views.NavItem {
	item := views.NavItem{Label: locale.Console("console.words.nav."+key, nil), Href: href}
	if about {
		item.About = locale.Console("console.words.nav."+key+"_about", nil)
	}
	return item
}

// navFor lists the pages the signed-in user may open, in header order,
// the current one marked, with the queue's count on its badge for staff.
func (s *Server) navFor(c echo.Context, u accounts.User) []views.NavItem {
	current := c.Request().URL.Path
	var items []views.NavItem
	for _, h := range header {
		if !s.access[echo.GET+" "+h.href].Allows(u.Role) {
			continue
		}
		item := navItem(h.key, h.href, h.about)
		item.Current = current == item.Href || (item.Href != "/" && strings.HasPrefix(current, item.Href+"/"))
		items = append(items, item)
	}
	if u.Role != accounts.Customer {
		s.console.CountQueue(c, items)
	}
	return items
}
