package httpadapter

import (
	"context"

	"countersign/internal/adapter"
)

// Contact returns the e-mail address (and name and language) the system
// has on file for the principal, where the file's principal.contact points. A file without
// it offers no contact: the console then offers no one-time codes for the
// system's customers.
func (a *Adapter) Contact(ctx context.Context, p adapter.Principal) (adapter.Contact, error) {
	if a.principal == nil || a.principal.contact == nil {
		return adapter.Contact{}, &adapter.Error{Code: "no_contact", Outcome: adapter.Refused,
			Message: "The description of " + a.name + " does not say where a customer's e-mail is kept.",
			Hint:    "Add principal.contact to the system's description file, or let customers prove themselves another way."}
	}
	acc, err := a.account(ctx, p)
	if err != nil {
		return adapter.Contact{}, err
	}
	email, _ := lookupPointer(acc, a.principal.contact.Email)
	c := adapter.Contact{Email: text(email)}
	if a.principal.contact.Name != "" {
		name, _ := lookupPointer(acc, a.principal.contact.Name)
		c.Name = text(name)
	}
	if a.principal.contact.Locale != "" {
		loc, _ := lookupPointer(acc, a.principal.contact.Locale)
		if s, ok := loc.(string); ok {
			c.Locale = adapter.RecordLocale(s)
		}
	}
	if c.Email == "" {
		return adapter.Contact{}, &adapter.Error{Code: "no_contact", Outcome: adapter.Refused,
			Message: "The customer's account in " + a.name + " has no e-mail address.", Hint: "Let the customer prove themselves another way."}
	}
	return c, nil
}

var _ adapter.ContactDirectory = (*Adapter)(nil)
