package customer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/web/webtest"
)

// frenchTitle is the title of the French translation inFrenchToo gives a
// quote; frenchLine its lines' label, numbered.
const (
	frenchTitle = "Remboursement de la lampe en noyer"
	frenchLine  = "Ligne en français"
)

// inFrenchToo gives request id's stored quote a French translation, as a
// description file with per-locale texts would (adapter.Quote.Translations),
// before anyone has seen it: its title, and each line labelled
// "Ligne en français N" with its values kept.
func inFrenchToo(t *testing.T, b *webtest.Stack, id string) {
	t.Helper()
	var raw []byte
	if err := b.Store.Pool().QueryRow(t.Context(), `SELECT quote FROM invocations WHERE id = $1`, id).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var q adapter.Quote
	if err := json.Unmarshal(raw, &q); err != nil {
		t.Fatal(err)
	}
	w := adapter.QuoteWords{Title: frenchTitle, Consequences: q.Consequences, ConfirmLabel: "Confirmer", DeclineLabel: "Ne pas le faire",
		Customer: &adapter.CustomerWords{Title: frenchTitle}}
	for i, l := range q.Lines {
		lw := adapter.QuoteLineWords{Label: fmt.Sprintf("%s %d", frenchLine, i+1), From: l.From, To: l.To}
		if l.Customer != "" {
			lw.Customer = fmt.Sprintf("Phrase en français %d", i+1)
		}
		w.Lines = append(w.Lines, lw)
	}
	q.Translations = map[string]adapter.QuoteWords{"fr": w}
	out, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.Pool().Exec(t.Context(), `UPDATE invocations SET quote = $2 WHERE id = $1`, id, out); err != nil {
		t.Fatal(err)
	}
}

// withLanguage sets c's language switch cookie to tag.
func withLanguage(c *webtest.Client, tag string) {
	u, _ := url.Parse(c.Stack.Server.URL)
	c.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: locale.CookieName, Value: tag, Path: "/"}})
}

// TestTheReceiptSaysWhatTheCustomerRead: a request decided on a page in
// French, its quote in French, shows on its receipt the French quote's
// title and lines whatever language the receipt is viewed in, marked as
// French, and says in the viewer's language which language the customer
// read; the receipt's own words are the viewer's.
func TestTheReceiptSaysWhatTheCustomerRead(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	inFrenchToo(t, b, inv.ID)
	c := b.Client(t)
	withLanguage(c, "fr")
	page := c.Open(link)
	if res := c.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {c.PageCSRF(page)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm: %d\n%s", res.StatusCode, res.Text)
	}
	if _, err := b.Control.Dispatch(context.Background(), inv.ID); err != nil {
		t.Fatal(err)
	}
	if st := b.Invocation(t, inv.ID).State; st != controlplane.Completed {
		t.Fatalf("after dispatch: %s", st)
	}
	if got := b.Consent(t, inv.ID).Locale; got != "fr" {
		t.Errorf("the consent says the customer read %q, want fr", got)
	}

	for _, tc := range []struct {
		tag, heading, readIn, who string
	}{
		{"en", "Receipt from Harbour & Pine", "You read this request in French.", "You confirmed this on "},
		{"fr", "Reçu de Harbour & Pine", "Vous avez lu cette demande en français.", "Vous l’avez confirmé le "},
		{"ar", "إيصال من Harbour & Pine", "قرأتم هذا الطلب باللغة الفرنسية.", "أكّدتم هذا في "},
	} {
		withLanguage(c, tc.tag)
		res := c.Get("/requests/" + inv.ID)
		receipt := res.Doc(t).Find(`[data-testid="receipt"]`)
		if receipt.Length() != 1 {
			t.Fatalf("%s: no receipt:\n%s", tc.tag, res.Text)
		}
		if got := webtest.Squash(receipt.Find("h2").Text()); got != tc.heading {
			t.Errorf("%s: the heading %q, want %q", tc.tag, got, tc.heading)
		}
		title := receipt.Find(`[data-testid="receipt-title"]`)
		if got := strings.TrimSpace(title.Text()); got != frenchTitle {
			t.Errorf("%s: the receipt's title %q, want the French quote's %q", tc.tag, got, frenchTitle)
		}
		if lang := title.AttrOr("lang", ""); (tc.tag == "fr") != (lang == "") || (lang != "" && lang != "fr") {
			t.Errorf("%s: the French title is marked lang=%q", tc.tag, lang)
		}
		lines := webtest.Squash(receipt.Find(`[data-testid="receipt-changed"]`).Text())
		if !strings.Contains(lines, frenchLine) || !strings.Contains(lines, "$42.10") {
			t.Errorf("%s: what changed %q, want the French quote's lines", tc.tag, lines)
		}
		if got := webtest.Squash(receipt.Find(`[data-testid="receipt-read-in"]`).Text()); got != tc.readIn {
			t.Errorf("%s: %q, want %q", tc.tag, got, tc.readIn)
		}
		if got := webtest.Squash(receipt.Find(`[data-testid="receipt-who"]`).Text()); !strings.HasPrefix(got, tc.who) {
			t.Errorf("%s: who confirmed %q, want it to start %q", tc.tag, got, tc.who)
		}
	}
}

// TestAReceiptOurTeamApprovedIsInThePagesLanguage: a request no customer
// decided (our team approved it) records no language read; its receipt
// shows the quote in the page's language, with our team's approval said
// in it too.
func TestAReceiptOurTeamApprovedIsInThePagesLanguage(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	ctx := context.Background()
	m := b.Users[accounts.Manager]
	p, err := b.Control.Policy(ctx, "shop", "resend_receipt")
	if err != nil {
		t.Fatal(err)
	}
	p.Stage = controlplane.StagePropose
	if _, err := b.Control.ChangePolicy(ctx, controlplane.UserActor(m.ID, string(accounts.Manager), m.Name), p, p.Version, "our team approves receipts"); err != nil {
		t.Fatal(err)
	}
	inv := b.ProposeAny(t, b.CustomerTask(t, webtest.Jordan), "resend_receipt", map[string]any{"invoice_id": "paid Pro invoice"})
	if inv.State != controlplane.AwaitingApproval {
		t.Fatalf("the receipt resend is %s, want awaiting approval", inv.State)
	}
	inFrenchToo(t, b, inv.ID)
	inv = b.Invocation(t, inv.ID)
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: b.Users[accounts.Agent].Actor(), InvocationID: inv.ID,
		Verb: controlplane.StaffApprove, Version: inv.Version, ArgsHash: inv.ArgsHash}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Control.Dispatch(ctx, inv.ID); err != nil {
		t.Fatal(err)
	}
	if st := b.Invocation(t, inv.ID).State; st != controlplane.Completed {
		t.Fatalf("after dispatch: %s", st)
	}
	c := b.Client(t)
	c.MustSignIn(b.CustomerAccount(t, webtest.Jordan))
	withLanguage(c, "fr")
	res := c.Get("/requests/" + inv.ID)
	if got := webtest.TextByTestID(res, t, "receipt-title"); got != frenchTitle {
		t.Errorf("the receipt's title %q, want the quote in the page's language, %q", got, frenchTitle)
	}
	if got := webtest.Squash(webtest.TextByTestID(res, t, "receipt-who")); !strings.HasPrefix(got, "Notre équipe l’a approuvé le ") {
		t.Errorf("who approved: %q", got)
	}
	if n := res.Doc(t).Find(`[data-testid="receipt-read-in"]`).Length(); n != 0 {
		t.Errorf("a receipt no customer decided says which language they read")
	}
}
