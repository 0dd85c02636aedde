package confirmation_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/text/language"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/mail"
)

// mailLinkIn finds a mail link's token in a message.
var mailLinkIn = regexp.MustCompile(`https://console\.test/m/([A-Za-z0-9_-]{43})`)

// mailedLink has a link mailed for the confirmation link tok and returns
// the mail and its link's token.
func mailedLink(t *testing.T, links *confirmation.Service, outbox *mail.Memory, tok string) (mail.Message, string) {
	t.Helper()
	if _, err := links.SendLink(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	sent := outbox.Sent()
	m := sent[len(sent)-1]
	match := mailLinkIn.FindStringSubmatch(m.Body)
	if match == nil {
		t.Fatalf("no link in the mail:\n%s", m.Body)
	}
	return m, match[1]
}

// htmlText is the text a mail reader shows of an HTML part, squashed.
func htmlText(t *testing.T, html string) string {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(doc.Text()), " ")
}

// TestTheLinkMailCarriesTheWholeQuote: the mail to the contact on file
// carries every line the customer's page shows — the title in the
// customer's words, the reference, the items, each quote line, why the
// amount, when the money arrives, the consequences and the deadline — in
// the shop's name, in its plain text and its HTML alike, and one link; the
// HTML part escapes the quote's text.
func TestTheLinkMailCarriesTheWholeQuote(t *testing.T) {
	t.Parallel()
	links, cp, now, outbox := setupWithMail(t)
	inv, tok := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	m, token := mailedLink(t, links, outbox, tok)
	q := inv.Quote
	if q.Customer == nil || len(q.Lines) < 3 || len(q.Consequences) == 0 || len(q.Customer.Why) == 0 {
		t.Fatalf("the refund's quote is too thin to test the mail with: %+v", q)
	}
	want := []string{q.Customer.Title, q.Customer.Reference, "Harbour & Pine", q.Customer.MoneyArrives, "Please decide by Apr 2, 02:00 PDT"}
	want = append(want, q.Customer.Items...)
	want = append(want, q.Customer.Why...)
	want = append(want, q.Consequences...)
	for _, l := range q.Lines {
		want = append(want, l.Label, l.To)
	}
	text := htmlText(t, m.HTML)
	for _, w := range want {
		if !strings.Contains(m.Body, w) {
			t.Errorf("the plain text lacks %q:\n%s", w, m.Body)
		}
		if !strings.Contains(text, strings.Join(strings.Fields(w), " ")) {
			t.Errorf("the HTML lacks %q:\n%s", w, text)
		}
	}
	if !strings.Contains(m.HTML, `href="https://console.test/m/`+token+`"`) || !strings.Contains(text, "Review and decide") {
		t.Errorf("the HTML has no \"Review and decide\" button to the link:\n%s", m.HTML)
	}
	if !strings.EqualFold(m.To, jordan) || m.FromName != "Harbour & Pine via Countersign" || m.Subject != "Review and decide a request with Harbour & Pine" {
		t.Errorf("the mail goes to %q from %q with subject %q", m.To, m.FromName, m.Subject)
	}
	if strings.Contains(m.Subject, inv.Target.ID) {
		t.Errorf("the subject %q carries the target's id", m.Subject)
	}

	hostile := controlplane.Invocation{System: "shop", Quote: adapter.Quote{Title: `<script>alert(1)</script> & "more"`,
		Lines: []adapter.QuoteLine{{Label: "<b>Ship to</b>", From: "<i>old</i>", To: "1 Main St <img src=x>"}}}}
	h := confirmation.LinkMail(locale.Shipped().For(language.English), adapter.Contact{Email: "a@b.example", Name: "<Jo>"}, "https://console.test/m/x", hostile,
		adapter.Brand{Name: "Harbour & Pine"}, *now, *now)
	for _, raw := range []string{"<script>", "<b>Ship to", "<i>old", "<img", "<Jo>"} {
		if strings.Contains(h.HTML, raw) {
			t.Errorf("the HTML carries %q unescaped:\n%s", raw, h.HTML)
		}
	}
	if !strings.Contains(h.HTML, "&lt;script&gt;") || !strings.Contains(h.Body, "<b>Ship to</b>: <i>old</i> → 1 Main St <img src=x>") {
		t.Errorf("the quote is not in both parts as written:\n%s\n%s", h.Body, h.HTML)
	}
}

// TestACodeMailCarriesTheWholeQuoteAboveTheCode: where a business keeps
// typed codes, the code's mail shows the whole quote before the code.
func TestACodeMailCarriesTheWholeQuoteAboveTheCode(t *testing.T) {
	t.Parallel()
	links, cp, now, outbox := setupWithMail(t)
	inv, tok := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	if _, err := links.SendCode(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	m := outbox.Sent()[0]
	code := strings.Index(m.Body, "Your code is ")
	text := htmlText(t, m.HTML)
	for _, w := range append(append([]string{}, inv.Quote.Consequences...), inv.Quote.Customer.Why...) {
		if at := strings.Index(m.Body, w); at < 0 || at > code {
			t.Errorf("the code mail lacks %q above the code:\n%s", w, m.Body)
		}
		if !strings.Contains(text, w) {
			t.Errorf("the code mail's HTML lacks %q", w)
		}
	}
}

// TestTheMailLinkIsSingleUseAndScannerSafe: fetching the link's page (a
// mail scanner, a preview) spends nothing; the first spend proves the
// customer for its request with the proof "link"; a second spend, and a
// look after it, say it was used. Sixteen spends racing: one wins.
func TestTheMailLinkIsSingleUseAndScannerSafe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, now, outbox := setupWithMail(t)
	inv, tok := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	_, token := mailedLink(t, links, outbox, tok)
	for i := 0; i < 3; i++ {
		if _, err := links.OpenMailLink(ctx, token); err != nil {
			t.Fatalf("look %d: %v", i, err)
		}
	}
	m, err := links.SpendMailLink(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	p := confirmation.ProvedOn(m.Opened, confirmation.ProofLink)
	if m.InvocationID != inv.ID || p.Proof != confirmation.ProofLink || !strings.EqualFold(p.CustomerRef, jordan) {
		t.Errorf("spent: %+v, want jordan proved for %s by link", p, inv.ID)
	}
	if err := links.MayDecide(ctx, p, inv, jordan); err != nil {
		t.Errorf("the link's proof may not decide its request: %v", err)
	}
	for name, f := range map[string]func(context.Context, string) (confirmation.MailOpened, error){
		"spend again": links.SpendMailLink, "look again": links.OpenMailLink} {
		if _, err := f(ctx, token); !isMail(err, confirmation.MailSpent) {
			t.Errorf("%s: %v, want spent", name, err)
		}
	}

	_, token = mailedLink(t, links, outbox, tok)
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, spent := 0, 0
	start := make(chan struct{})
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := links.SpendMailLink(ctx, token)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case isMail(err, confirmation.MailSpent):
				spent++
			default:
				t.Errorf("spend: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if won != 1 || spent != 15 {
		t.Errorf("16 racing spends: %d proved, %d refused as spent; want 1 and 15", won, spent)
	}
}

// TestTheMailLinkIsBoundToItsRequest: a mail link's proof decides its own
// request only; another request of the same customer answers "show us
// it's you for this request", through MayDecide and through Decide.
func TestTheMailLinkIsBoundToItsRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, now, outbox := setupWithMail(t)
	_, tokA := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	b, _ := pendingFor(t, links, cp, *now, jordan, "cancel_subscription",
		`{"subscription_id":"Pro plan for acme.example","reason_code":"too_expensive","effective":"end_of_period"}`)
	_, token := mailedLink(t, links, outbox, tokA)
	m, err := links.SpendMailLink(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	p := confirmation.ProvedOn(m.Opened, confirmation.ProofLink)
	if err := links.MayDecide(ctx, p, b, jordan); codeOf(err) != "prove_for_this_request" {
		t.Errorf("A's mail link on B: %v, want prove_for_this_request", err)
	}
	if _, err := links.Decide(ctx, p, controlplane.CustomerDecision{InvocationID: b.ID, Verb: controlplane.CustomerDecline}); codeOf(err) != "prove_for_this_request" {
		t.Errorf("A's mail link declining B: %v, want prove_for_this_request", err)
	}
}

// TestTheMailLinkExpires: a mail link works MailLinkLifetime; after it,
// it is refused as expired, spends nothing and proves nothing.
func TestTheMailLinkExpires(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, now, outbox := setupWithMail(t)
	_, tok := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	sent, err := links.SendLink(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if !sent.ExpiresAt.Equal(now.Add(confirmation.MailLinkLifetime)) {
		t.Errorf("the link lives until %v, want %v", sent.ExpiresAt, now.Add(confirmation.MailLinkLifetime))
	}
	token := mailLinkIn.FindStringSubmatch(outbox.Sent()[0].Body)[1]
	*now = now.Add(confirmation.MailLinkLifetime)
	for name, f := range map[string]func(context.Context, string) (confirmation.MailOpened, error){
		"look": links.OpenMailLink, "spend": links.SpendMailLink} {
		if _, err := f(ctx, token); !isMail(err, confirmation.MailExpired) {
			t.Errorf("%s after %v: %v, want expired", name, confirmation.MailLinkLifetime, err)
		}
	}
	// One character other than the token's own: "x" on a token that starts
	// with "x" would be the same token.
	changed := "x" + token[1:]
	if token[0] == 'x' {
		changed = "y" + token[1:]
	}
	if _, err := links.SpendMailLink(ctx, changed); !isMail(err, confirmation.MailUnknown) {
		t.Errorf("a changed token: %v, want unknown", err)
	}
}

// TestTypedCodesAreOffByDefault: with nothing configured a system takes
// the mail link and the account (with the account, a passkey); no code
// is sent or compared.
func TestTypedCodesAreOffByDefault(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, now, _ := setupWithMail(t)
	_, tok := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	outbox := &mail.Memory{}
	plain := confirmation.New(storeOf(links), cp, registryOf(links), confirmation.Config{Mail: outbox}, func() time.Time { return *now })
	if got := plain.Accepts("shop"); !slices.Equal(got, []confirmation.Proof{confirmation.ProofLink, confirmation.ProofAccount, confirmation.ProofPasskey}) {
		t.Errorf("the default proofs are %v, want link, account and the passkey the account brings", got)
	}
	if _, err := plain.SendCode(ctx, tok); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("a code asked for by default: %v, want forbidden", err)
	}
	if _, err := plain.CheckCode(ctx, tok, "123456"); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("a code typed by default: %v, want forbidden", err)
	}
	if n := len(outbox.Sent()); n != 0 {
		t.Errorf("%d mails sent", n)
	}
}

func isMail(err error, p confirmation.MailProblem) bool {
	me, ok := confirmation.AsMailLinkError(err)
	return ok && me.Problem == p
}

func codeOf(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Code
	}
	return ""
}
