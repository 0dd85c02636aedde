package confirmation

import (
	"context"

	"countersign/internal/adapter"
	"countersign/internal/locale"
)

// LanguageRecord reads the language a customer last decided in
// (*store.Store).
type LanguageRecord interface {
	LastCustomerLocale(ctx context.Context, system, customerRef string) (string, error)
}

// MailLanguage is the language a mail to customerRef of system is written
// in, by locale.ForMail: the business's word (an assertion's loc on the
// page the mail follows, then contact, the customer record), then what
// the customer reads (the page ctx carries, then their last decision in
// rec), then brand's default, then English. Every mail a customer gets —
// the quote with its link, the code, the passkey notices — is written in
// it. The last decision is only a hint: a record that cannot be read
// leaves it out, and the error is returned for the caller to log. It is
// read only when nothing before it in the order chose: a mail that
// follows a page or a customer record with a language costs no query.
func MailLanguage(ctx context.Context, rec LanguageRecord, brand adapter.Brand, system, customerRef string, contact adapter.Contact) (locale.Choice, error) {
	in := locale.MailInputs{Page: locale.PageOf(ctx), Contact: contact.Locale, Default: brand.Locale}
	ch := locale.ForMail(in)
	if rec == nil || ch.Source == locale.FromBusiness || ch.Source == locale.FromRead {
		return ch, nil
	}
	var err error
	in.Read, err = rec.LastCustomerLocale(ctx, system, customerRef)
	return locale.ForMail(in), err
}

// mailLocalizer is the Localizer of a mail to o's customer whose contact
// on file is contact; a mail already written in a language (kept, a
// non-empty BCP 47 tag) stays in it.
func (s *Service) mailLocalizer(ctx context.Context, o Opened, contact adapter.Contact, kept string) *locale.Localizer {
	cat := s.cfg.Catalogue
	if cat == nil {
		cat = locale.Installed()
	}
	if t, ok := locale.Match(kept); ok {
		return cat.For(t)
	}
	ch, err := MailLanguage(ctx, s.store, s.brand(o.System), o.System, o.CustomerRef, contact)
	if err != nil {
		s.cfg.Log.Warn("customer mail: the language of the customer's last decision could not be read", "system", o.System, "error", err)
	}
	return cat.For(ch.Tag)
}
