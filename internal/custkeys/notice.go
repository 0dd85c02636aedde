package custkeys

import (
	"time"

	"countersign/internal/adapter"
	"countersign/internal/locale"
	"countersign/internal/mail"
)

// NoticeMail is the notice to a customer, at their contact to, that the
// passkey name (as stored: DisplayName writes it) was added (or, added false, removed) at at for brand's
// business, in l's language: what changed, when in the business's zone,
// and what to do if it was not them. It comes from "<business> via
// Countersign", in plain text and HTML (its language and direction
// said, the business's words isolated).
func NoticeMail(l *locale.Localizer, to adapter.Contact, brand adapter.Brand, added bool, name string, at time.Time) mail.Message {
	zone := brand.Zone
	if zone == nil {
		zone = time.UTC
	}
	kind := "removed"
	if added {
		kind = "added"
	}
	shop := locale.Params{"Shop": brand.Name}
	body := locale.Params{"Shop": brand.Name, "Name": DisplayName(l, name), "When": l.When(at, zone, at)}
	subject := l.T("mail.passkey."+kind+".subject", shop)
	m := mail.Message{To: to.Email, Subject: subject, FromName: l.T("mail.from", shop),
		Body: l.Lines(l.Text("mail.passkey."+kind+".body", body) + "\n\n" + l.Text("mail.passkey."+kind+".notyou", shop) + "\n"),
		HTML: mail.Page(l.Tag().String(), string(l.Dir()), subject,
			"<p>"+l.HTML("mail.passkey."+kind+".body", body, nil)+"</p>\n<p>"+l.HTML("mail.passkey."+kind+".notyou", shop, nil)+"</p>\n")}
	return m
}
