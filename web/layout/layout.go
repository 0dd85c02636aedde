// Package layout builds the frame of the pages people read — the layout's
// model for a request (its title, the form token, the flash message, who is
// signed in and the header's navigation) — and the pieces the customer's
// pages and the console draw alike. The assistant's API does not import it.
package layout

import (
	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// Frame is what a page handler needs to draw the layout around its page.
type Frame struct {
	*kit.Site
	// Nav lists the header's pages for the signed-in user, the current
	// one marked; the server builds it from its route table.
	Nav func(c echo.Context, u accounts.User) []views.NavItem
}

// Page builds the layout's model for this request.
func (f *Frame) Page(c echo.Context, title string) views.Page {
	p := views.Page{Title: title}
	if sess := kit.Session(c); sess != nil && !sess.IsNew {
		// Anonymous visitors have no session row; their forms take the CSRF
		// cookie's token from CSRFToken.
		p.CSRF, _ = sess.Values[kit.KeyCSRF].(string)
		text, bad := kit.PopFlash(c)
		p.Flash = views.Flash{Text: text, Bad: bad}
	}
	if _, ok := kit.CustomerOf(c); ok {
		p.CustomerSignOut = true // a link's session: no console account is signed in
	}
	if u, ok := kit.CurrentUser(c); ok {
		p.User = &views.User{Name: u.Name, Email: u.Email, RoleLabel: RoleLabel(u.Role)}
		if f.Nav != nil {
			p.Nav = f.Nav(c, u)
		}
	}
	return p
}

// StateBadge is the one badge of an invocation state.
func StateBadge(st controlplane.State) views.StateBadgeView {
	tone := "idle"
	switch st {
	case controlplane.Completed:
		tone = "ok"
	case controlplane.Unverified, controlplane.NotDispatched, controlplane.AwaitingApproval, controlplane.AwaitingConfirmation:
		tone = "warn"
	case controlplane.Failed, controlplane.Rejected, controlplane.Expired:
		tone = "bad"
	case controlplane.Approved, controlplane.Dispatching:
		tone = "info"
	}
	return views.StateBadgeView{Label: StateLabel(st), Tone: tone}
}

// StateLabel is a request's state as staff read it (console.words.state.*,
// from the console's catalogue): the words of controlplane's State.Label,
// which an installation may override; a state the catalogue does not name
// keeps Label's.
func StateLabel(st controlplane.State) string {
	switch st {
	case controlplane.Proposed, controlplane.AwaitingConfirmation, controlplane.AwaitingApproval, controlplane.Approved,
		controlplane.Dispatching, controlplane.Completed, controlplane.Failed, controlplane.Unverified,
		controlplane.NotDispatched, controlplane.Rejected, controlplane.Expired, controlplane.Reversed:
		return locale.Console("console.words.state."+string(st), nil)
	}
	return st.Label()
}

// RoleLabel is a role as staff read it (console.labels.role.*, from the
// console's catalogue): the words of accounts.Role.Label, which an
// installation may override. Only what pages show changes: the role's
// value in forms, the API and JSON stays the role itself. A role the
// catalogue does not name keeps Label's.
func RoleLabel(r accounts.Role) string {
	if !r.Valid() {
		return r.Label()
	}
	return locale.Console("console.labels.role."+string(r), nil)
}

// RolesLabel is a role said of everyone who has it ("Support agents",
// console.labels.roles.*).
func RolesLabel(r accounts.Role) string {
	if !r.Valid() {
		return r.Label()
	}
	return locale.Console("console.labels.roles."+string(r), nil)
}
