package custkeys_test

import (
	"testing"
	"testing/fstest"

	"countersign/internal/adapter"
	"countersign/internal/custkeys"
	"countersign/internal/factors/softkey"
	"countersign/internal/locale"
	"countersign/internal/mail"
)

// TestTheInstalledCatalogueWritesTheNotices: a service given no
// catalogue writes the passkey notices from the installation's
// (locale.Install, what -locales-dir loads), so a text an installation
// changes reaches them (here Spanish, contactShop's default). Not
// parallel: it changes the process's catalogue.
func TestTheInstalledCatalogueWritesTheNotices(t *testing.T) {
	cat, err := locale.Load(locale.WithFiles(fstest.MapFS{"es.json": {Data: []byte(`{"mail.passkey.added.subject": "Nueva llave en {{.Shop}}"}`)}}))
	if err != nil {
		t.Fatal(err)
	}
	locale.Install(cat)
	t.Cleanup(func() { locale.Install(locale.Shipped()) })
	outbox := &mail.Memory{}
	english := ""
	b, _ := setupWith(t, custkeys.Config{Mail: outbox, Registry: adapter.NewRegistry(contactShop{contactLocale: &english})})
	cer, err := b.svc.BeginRegistration(t.Context(), jordan, "inv_1", "link")
	if err != nil {
		t.Fatal(err)
	}
	_, body, err := softkey.Create(cer.Options, rpID, origin)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.svc.FinishRegistration(t.Context(), custkeys.Registration{C: jordan, InvocationID: "inv_1", Proof: "link"}, cer.ID, body); err != nil {
		t.Fatal(err)
	}
	sent := outbox.Sent()
	if len(sent) == 0 {
		t.Fatal("no notice sent")
	}
	if got := sent[len(sent)-1].Subject; got != "Nueva llave en Harbour & Pine" {
		t.Errorf("the notice's subject is %q; want the installed catalogue's", got)
	}
}
