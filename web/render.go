package web

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/views"
)

// Render writes a templ component through a buffer, so that a Render error
// becomes an error page instead of half a page.
func Render(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.HTMLBlob(status, buf.Bytes())
}

// Page builds the layout's model for this request (the queue badge's count
// is best effort).
func (s *Server) Page(c echo.Context, title string) views.Page {
	p := views.Page{Title: title}
	if sess := Session(c); sess != nil && !sess.IsNew {
		// Anonymous visitors have no session row; their forms take the CSRF
		// cookie's token from csrfToken.
		p.CSRF, _ = sess.Values[KeyCSRF].(string)
		p.Flash = popFlash(c)
	}
	if _, ok := CustomerOf(c); ok {
		p.CustomerSignOut = true // a link's session: no console account is signed in
	}
	if u, ok := CurrentUser(c); ok {
		p.User = &views.User{Name: u.Name, Email: u.Email, RoleLabel: u.Role.Label()}
		p.Nav = navFor(u.Role, c.Request().URL.Path)
		if u.Role != accounts.Customer {
			s.countQueue(c, p.Nav)
		}
	}
	return p
}

// navFor lists the pages a role may open, in header order.
func navFor(role accounts.Role, current string) []views.NavItem {
	var items []views.NavItem
	add := func(label, href, about string) {
		items = append(items, views.NavItem{Label: label, Href: href, About: about,
			Current: current == href || (href != "/" && strings.HasPrefix(current, href+"/"))})
	}
	add("Home", "/", "")
	if role == accounts.Customer {
		add("My requests", "/requests", "What assistants prepared for you: confirm or decline, and see how each turned out.")
	}
	if role != accounts.Customer {
		add("Queue", "/queue", "Requests awaiting a person's approval: decide, edit, or send back to the assistant.")
		add("Tasks", "/tasks", "Every task: where each request stands, pause, resume, cancel, inspect and reconcile.")
		add("Hand-offs", "/handoffs", "Conversations the assistant handed to a person, with what it prepared.")
	}
	if role != accounts.Customer {
		add("Systems", "/systems", "The connected business systems: each action's contract, limits and guidance, and the read tools.")
	}
	if role == accounts.Manager || role == accounts.Admin {
		add("Metrics", "/metrics", "How actions turn out: containment, success, reversals, clarifications, hand-offs, time to resolution, stage readiness.")
		add("Policies", "/policies", "Each action's stage, limits, approval rules, deadlines, owner and review date; change them with a what-if.")
	}
	if role == accounts.Admin {
		add("Users", "/admin/users", "Create people's accounts, change their roles, disable them.")
		add("Assistants", "/admin/assistants", "Create assistants, issue and revoke their API keys, choose the actions each may use, its task limits and whether it may act for any customer.")
	}
	add("Password", "/account/password", "Change your password; your other sessions end.")
	return items
}

// SetFlash stores a message for the next page this session sees.
func SetFlash(c echo.Context, text string, bad bool) {
	sess := Session(c)
	if bad {
		text = "!" + text
	}
	sess.Values[keyFlash] = text
	MarkDirty(sess)
	_ = sess.Save(c.Request(), c.Response())
}

func popFlash(c echo.Context) views.Flash {
	sess := Session(c)
	text, _ := sess.Values[keyFlash].(string)
	if text == "" {
		return views.Flash{}
	}
	delete(sess.Values, keyFlash)
	MarkDirty(sess)
	_ = sess.Save(c.Request(), c.Response())
	if strings.HasPrefix(text, "!") {
		return views.Flash{Text: text[1:], Bad: true}
	}
	return views.Flash{Text: text}
}

// SeeOther redirects after a successful form post.
func SeeOther(c echo.Context, to string) error { return c.Redirect(http.StatusSeeOther, to) }
