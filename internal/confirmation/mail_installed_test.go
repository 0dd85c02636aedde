package confirmation_test

import (
	"context"
	"testing"
	"testing/fstest"

	"countersign/internal/locale"
)

// installOverride makes the process's catalogue the shipped one with
// English's id given text, as an installation's -locales-dir file would,
// and puts the shipped one back when t ends.
func installOverride(t *testing.T, id, text string) {
	t.Helper()
	cat, err := locale.Load(locale.WithFiles(fstest.MapFS{"en.json": {Data: []byte(`{"` + id + `": "` + text + `"}`)}}))
	if err != nil {
		t.Fatal(err)
	}
	locale.Install(cat)
	t.Cleanup(func() { locale.Install(locale.Shipped()) })
}

// TestTheInstalledCatalogueWritesTheMails: a service given no catalogue
// writes its mails from the installation's (locale.Install, what
// -locales-dir loads), so a text an installation changes, or a language
// it adds, reaches the customer's mails, not the pages alone. Not
// parallel: it changes the process's catalogue.
func TestTheInstalledCatalogueWritesTheMails(t *testing.T) {
	installOverride(t, "mail.code.subject", "Your Harbour code: {{.Shop}}")
	links, cp, now, outbox := setupWithMail(t)
	_, tok := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	if _, err := links.SendCode(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	sent := outbox.Sent()
	if got := sent[len(sent)-1].Subject; got != "Your Harbour code: Harbour & Pine" {
		t.Errorf("the code mail's subject is %q; want the installed catalogue's", got)
	}
}
