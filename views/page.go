// Package views holds the console's templ components. Pages take view
// models built by the web layer; nothing here reads the database.
package views

import "github.com/a-h/templ"

// Page is what the layout needs on every page.
type Page struct {
	Title string
	// User is nil when nobody is signed in.
	User *User
	// CSRF is the session's token; every form posts it as _csrf.
	CSRF string
	// Flash is a one-time message from the previous request.
	Flash Flash
	Nav   []NavItem
	// Narrow centres a single-column page (sign-in, errors).
	Narrow bool
	// RefreshSeconds, when set, reloads a page that waits for an outcome
	// every so many seconds in browsers without JavaScript.
	RefreshSeconds int
}

// User is the signed-in person as the header shows them.
type User struct {
	Name      string
	Email     string
	RoleLabel string
}

// NavItem is one link of the header's navigation.
type NavItem struct {
	Label   string
	Href    string
	Current bool
	// About says what the page is for, on the home page.
	About string
	// Count, when set, is shown as a badge beside the label; CountLabel
	// says what it counts for screen readers.
	Count      int
	CountLabel string
}

// Flash is a message carried across a redirect.
type Flash struct {
	Text string
	Bad  bool
}

// FieldErrors maps a form field name to what is wrong with it.
type FieldErrors map[string]string

// Has reports whether field has an error.
func (f FieldErrors) Has(field string) bool { _, ok := f[field]; return ok }

// Attrs returns aria-invalid and aria-describedby for a field with an
// error, and nothing for a valid one; spread it into the input.
func (f FieldErrors) Attrs(field string) templ.Attributes {
	if !f.Has(field) {
		return templ.Attributes{}
	}
	return templ.Attributes{"aria-invalid": "true", "aria-describedby": field + "-error"}
}
