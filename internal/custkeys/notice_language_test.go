package custkeys_test

import (
	"context"
	"testing"

	"golang.org/x/text/language"

	"countersign/internal/adapter"
	"countersign/internal/custkeys"
	"countersign/internal/factors/softkey"
	"countersign/internal/locale"
	"countersign/internal/mail"
)

// contactShop is a system that names itself Harbour & Pine, writes to its
// customers in Spanish by default, and keeps jordan's language as
// contactLocale says.
type contactShop struct {
	adapter.System
	contactLocale *string
}

func (contactShop) Name() string { return "shop" }

func (s contactShop) Contact(context.Context, adapter.Principal) (adapter.Contact, error) {
	return adapter.Contact{Email: jordan.Ref, Locale: *s.contactLocale}, nil
}

func (contactShop) Brand() adapter.Brand { return adapter.Brand{Name: "Harbour & Pine", Locale: "es"} }

// TestAPasskeyNoticeIsInTheCustomersLanguage: the notice of a passkey
// added follows the order every customer mail follows: the customer
// record's language over the page's switch, the page's over the system's
// default, the default without either.
func TestAPasskeyNoticeIsInTheCustomersLanguage(t *testing.T) {
	t.Parallel()
	outbox := &mail.Memory{}
	contactLocale := ""
	b, _ := setupWith(t, custkeys.Config{Mail: outbox, Registry: adapter.NewRegistry(contactShop{contactLocale: &contactLocale})})
	frenchPage := func() context.Context {
		ch := locale.Choice{Tag: language.French, Source: locale.FromSwitch}
		return locale.WithLocalizer(t.Context(), locale.Shipped().For(ch.Tag), ch)
	}
	for _, tc := range []struct {
		name, contact string
		ctx           context.Context
		subject       string
	}{
		{"the page's switch", "", frenchPage(), "Une clé d’accès a été ajoutée pour Harbour & Pine"},
		{"the customer record", "de-AT", frenchPage(), "Für Harbour & Pine wurde ein Passkey hinzugefügt"},
		{"the system's default", "", t.Context(), "Se ha añadido una llave de acceso para Harbour & Pine"},
	} {
		contactLocale = tc.contact
		cer, err := b.svc.BeginRegistration(tc.ctx, jordan, "inv_1", "link")
		if err != nil {
			t.Fatal(err)
		}
		_, body, err := softkey.Create(cer.Options, rpID, origin)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.svc.FinishRegistration(tc.ctx, custkeys.Registration{C: jordan, InvocationID: "inv_1", Proof: "link"}, cer.ID, body); err != nil {
			t.Fatal(err)
		}
		sent := outbox.Sent()
		if got := sent[len(sent)-1].Subject; got != tc.subject {
			t.Errorf("%s: %q; want %q", tc.name, got, tc.subject)
		}
	}
}
