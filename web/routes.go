package web

import (
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
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

// header lists the pages of the header's navigation, in order. Who sees
// each is the route table's rule for GET of its address (Access.Allows).
var header = []views.NavItem{
	{Label: "Home", Href: "/"},
	{Label: "My requests", Href: "/requests", About: "What assistants prepared for you: confirm or decline, and see how each turned out."},
	{Label: "Queue", Href: "/queue", About: "Requests awaiting a person's approval: decide, edit, or send back to the assistant."},
	{Label: "Tasks", Href: "/tasks", About: "Every task: where each request stands, pause, resume, cancel, inspect and reconcile."},
	{Label: "Hand-offs", Href: "/handoffs", About: "Conversations the assistant handed to a person, with what it prepared."},
	{Label: "Systems", Href: "/systems", About: "The connected business systems: each action's contract, limits and guidance, and the read tools."},
	{Label: "Metrics", Href: "/metrics", About: "How actions turn out: containment, success, reversals, clarifications, hand-offs, time to resolution, stage readiness."},
	{Label: "Policies", Href: "/policies", About: "Each action's stage, limits, approval rules, deadlines, owner and review date; change them with a what-if."},
	{Label: "Users", Href: "/admin/users", About: "Create people's accounts, change their roles, disable them."},
	{Label: "Assistants", Href: "/admin/assistants", About: "Create assistants, issue and revoke their API keys, choose the actions each may use, its task limits and whether it may act for any customer."},
	{Label: "Clients", Href: "/admin/clients", About: "Programs people connected to the MCP server (Claude, ChatGPT…): approve or revoke them and their connections."},
	{Label: "Password", Href: "/account/password", About: "Change your password; your other sessions end."},
}

// navFor lists the pages the signed-in user may open, in header order,
// the current one marked, with the queue's count on its badge for staff.
func (s *Server) navFor(c echo.Context, u accounts.User) []views.NavItem {
	current := c.Request().URL.Path
	var items []views.NavItem
	for _, item := range header {
		if !s.access[echo.GET+" "+item.Href].Allows(u.Role) {
			continue
		}
		item.Current = current == item.Href || (item.Href != "/" && strings.HasPrefix(current, item.Href+"/"))
		items = append(items, item)
	}
	if u.Role != accounts.Customer {
		s.console.CountQueue(c, items)
	}
	return items
}
