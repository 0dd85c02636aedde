package shopadapter

import (
	"context"
	"net/url"

	"countersign/internal/adapter"
)

// customer maps the principal (the customer's e-mail) to exactly one shop
// customer. It fails with unknown_customer when the shop has none, and
// never falls back to a guess.
func (a *Adapter) customer(ctx context.Context, p adapter.Principal) (shopCustomer, error) {
	email, err := adapter.PrincipalEmail(p)
	if err != nil {
		return shopCustomer{}, err
	}
	var list shopList[shopCustomer]
	if err := a.shop.read(ctx, "/customers?limit=2&email="+url.QueryEscape(email), &list); err != nil {
		return shopCustomer{}, err
	}
	var found []shopCustomer
	for _, c := range list.Data {
		if adapter.NormaliseCustomerRef(c.Email) == email {
			found = append(found, c)
		}
	}
	return adapter.OneAccount(a.name, email, found)
}

// notOwned answers a reference to an object of another customer exactly
// like one to an object that does not exist.
func notOwned(kind, ref string) error { return adapter.NotFound(kind, ref) }

// Contact returns the e-mail address the shop has on file for the
// principal, where the one-time codes that prove a customer go, and the
// customer's language, the shop's word on which one their pages speak.
func (a *Adapter) Contact(ctx context.Context, p adapter.Principal) (adapter.Contact, error) {
	c, err := a.customer(ctx, p)
	if err != nil {
		return adapter.Contact{}, err
	}
	return adapter.Contact{Email: c.Email, Name: c.Name, Locale: adapter.RecordLocale(c.Locale)}, nil
}

var _ adapter.ContactDirectory = (*Adapter)(nil)
