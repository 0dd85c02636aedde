package confirmation_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/text/language"

	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
)

// declineIn has jordan decline a new refund on a page in tag, so the
// audit trail records the language jordan last decided in.
func declineIn(t *testing.T, links *confirmation.Service, cp *controlplane.Service, now time.Time, tag string) {
	t.Helper()
	inv, _ := pendingFor(t, links, cp, now, jordan, "issue_refund", jordanRefund)
	d, err := controlplane.CustomerDecision{Actor: controlplane.CustomerActor(jordan, "account"), InvocationID: inv.ID,
		Verb: controlplane.CustomerDecline, Locale: tag, LocaleFrom: "switch"}.Showing(inv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cp.CustomerDecide(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// onPage is ctx as a customer's page in tag, decided by src, carries it.
func onPage(tag string, src locale.Source) context.Context {
	ch := locale.Choice{Tag: language.MustParse(tag), Source: src}
	return locale.WithLocalizer(context.Background(), locale.Shipped().For(ch.Tag), ch)
}

// TestAMailFollowsTheCustomersLanguage: with no word from the business, a
// customer's mail is in English until they decide on a page in German;
// then in German, even from the console's own loop; a page the mail is
// asked on in French (the switch) writes it in French, and the
// business's word behind the page (an assertion's loc) in Spanish.
func TestAMailFollowsTheCustomersLanguage(t *testing.T) {
	t.Parallel()
	links, cp, now, outbox := setupWithMail(t)
	_, tok := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	send := func(ctx context.Context) string {
		t.Helper()
		if _, err := links.SendCode(ctx, tok); err != nil {
			t.Fatal(err)
		}
		sent := outbox.Sent()
		return sent[len(sent)-1].Subject
	}
	if got := send(context.Background()); got != "Your code to confirm a request with Harbour & Pine" {
		t.Errorf("before any decision: %q; want English", got)
	}
	declineIn(t, links, cp, *now, "de")
	if got := send(context.Background()); got != "Ihr Code zur Bestätigung einer Anfrage bei Harbour & Pine" {
		t.Errorf("after a decision in German: %q; want German", got)
	}
	if got := send(onPage("fr", locale.FromSwitch)); got != "Votre code pour confirmer une demande de Harbour & Pine" {
		t.Errorf("asked on a French page: %q; want French", got)
	}
	*now = now.Add(time.Hour)
	if got := send(onPage("es", locale.FromBusiness)); got != "Su código para confirmar una solicitud de Harbour & Pine" {
		t.Errorf("asked on a page the business said is Spanish: %q; want Spanish", got)
	}
	*now = now.Add(time.Hour)
	if got := send(onPage("en", locale.FromDefault)); got != "Ihr Code zur Bestätigung einer Anfrage bei Harbour & Pine" {
		t.Errorf("asked on a page in the default language: %q; want German, the last decision's", got)
	}
}

// TestTheOutboxKeepsTheMailsLanguage: the console's own mail of a request
// written in French, which the mail server would not take, goes out in
// French when sent later, though the customer decided in German since;
// the outbox says it was written in French.
func TestTheOutboxKeepsTheMailsLanguage(t *testing.T) {
	t.Parallel()
	links, cp, now, outbox := setupWithMail(t)
	declineIn(t, links, cp, *now, "fr")
	inv, _ := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	outbox.Fail(errors.New("451 try again later"))
	if n := mailWaiting(t, links); n != 0 {
		t.Fatalf("%d sent while the server refuses", n)
	}
	if m, err := storeOf(links).MailOfVersion(context.Background(), inv.ID, inv.Version); err != nil || m.Sent || outboxLocale(t, links, inv) != "fr" {
		t.Fatalf("the outbox after the failure: %+v, %v, in %q; want written in fr, not sent", m, err, outboxLocale(t, links, inv))
	}
	*now = now.Add(time.Minute)
	declineIn(t, links, cp, *now, "de")
	outbox.Fail(nil)
	*now = now.Add(time.Hour)
	if n := mailWaiting(t, links); n != 1 {
		t.Fatalf("%d sent; want the one", n)
	}
	if got := outbox.Sent()[0].Subject; got != "Une demande de Harbour & Pine attend votre décision" {
		t.Errorf("the mail went out as %q; want the French it was written in", got)
	}
	if m, err := storeOf(links).MailOfVersion(context.Background(), inv.ID, inv.Version); err != nil || !m.Sent || outboxLocale(t, links, inv) != "fr" {
		t.Errorf("the outbox after sending: %+v, %v, in %q; want sent in fr", m, err, outboxLocale(t, links, inv))
	}
}

// outboxLocale is the language the outbox says inv's mail was written in.
func outboxLocale(t *testing.T, links *confirmation.Service, inv controlplane.Invocation) string {
	t.Helper()
	var loc string
	if err := storeOf(links).Pool().QueryRow(context.Background(), `SELECT locale FROM customer_mail_outbox WHERE invocation_id = $1 AND version = $2`,
		inv.ID, inv.Version).Scan(&loc); err != nil {
		t.Fatal(err)
	}
	return loc
}
