package customer_test

import (
	"context"
	"encoding/json"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/locale/pseudotest"
	"countersign/web/webtest"
)

// strays fails t with the text of sel, found on page where, that came
// from no catalogue and is none of data.
func areaStrays(t *testing.T, where string, sel *goquery.Selection, data ...string) {
	t.Helper()
	if sel.Length() == 0 {
		t.Errorf("%s: nothing to check", where)
		return
	}
	var b strings.Builder
	sel.Each(func(_ int, s *goquery.Selection) {
		h, _ := goquery.OuterHtml(s)
		b.WriteString(h)
	})
	if got := pseudotest.SentenceStrays(b.String(), data...); len(got) > 0 {
		t.Errorf("%s: text not from a catalogue:\n%s", where, strings.Join(got, "\n"))
	}
	// A moment inside a sentence is hidden by the sentence's brackets: it
	// must be written by the catalogue's patterns itself (locale.When).
	sel.Find("time").Each(func(_ int, tm *goquery.Selection) {
		if text := strings.TrimSpace(tm.Text()); !strings.HasPrefix(text, "⟦") {
			t.Errorf("%s: the moment %q is not written by the catalogue's patterns", where, text)
		}
	})
}

// pageStrays checks a whole page of this area: its title and its main.
func pageStrays(t *testing.T, where string, res webtest.Response, data ...string) {
	t.Helper()
	doc := res.Doc(t)
	areaStrays(t, where+" (title)", doc.Find("title"), data...)
	areaStrays(t, where, doc.Find("main"), data...)
}

// businessWords are every text of a quote: the business's own data.
func businessWords(t *testing.T, quote json.RawMessage) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(quote, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// TestTheReceiptAreaIsAllFromTheCatalogue renders, in the pseudo-locale,
// every page and part of a page this area writes — the confirmation
// link's and the mail link's problems (one whose request changed among
// them), the mail link's page, the receipt,
// the passkey offer (before and after adding one), the passkeys list and
// its removal, the decision with a passkey and a refusal its script
// shows, the refusal of a receipt not issued yet — and finds no visible
// text that is neither a catalogue's nor the business's.
func TestTheReceiptAreaIsAllFromTheCatalogue(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	srv := b.ServeAnother(t, webtest.WithPasskeys(), webtest.WithPseudoLocale())
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	origin := "http://localhost:" + port
	pk := &webtest.Stack{Server: &httptest.Server{URL: origin}, Store: b.Store, Mail: b.Mail, Links: b.Links}
	cat, err := locale.Load(locale.WithPseudo())
	if err != nil {
		t.Fatal(err)
	}
	pseudo := cat.For(locale.Pseudo)
	inv, link := b.PendingRefund(t)
	// The passkey's name, made from the browser that added it, is written
	// from the catalogue too (custkeys.DisplayName).
	data := append(businessWords(t, b.Invocation(t, inv.ID).QuoteJSON), webtest.ShopName)
	c := pk.Client(t)
	res := c.Get("/c/not-a-link")
	problem := res.Doc(t).Find(`[data-testid="link-problem-title"], [data-testid="link-problem-message"], .link-problem > p:nth-of-type(2)`)
	areaStrays(t, "the link's problem", problem, data...)
	areaStrays(t, "the link's problem (title)", res.Doc(t).Find("title"), data...)
	pageStrays(t, "an unknown mail link", c.Get("/m/"+strings.Repeat("A", 43)), data...)

	path := c.MailLink(link, c.Get(link))
	pageStrays(t, "the mail link's page", c.Get(path), data...)
	page := c.SpendMailLink(path)
	if res := c.Post("/requests/"+inv.ID+"/confirm", map[string][]string{"_csrf": {c.PageCSRF(page)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm: %d\n%s", res.StatusCode, res.Text)
	}
	if res := c.Get("/requests/" + inv.ID + "/receipt"); res.StatusCode != http.StatusConflict ||
		!strings.Contains(res.Text, html.EscapeString(pseudo.T("receipt.error.not_done", nil))) {
		t.Errorf("the receipt of a request not done: %d\n%s", res.StatusCode, res.Text)
	}
	if _, err := b.Control.Dispatch(context.Background(), inv.ID); err != nil {
		t.Fatal(err)
	}
	done := b.Invocation(t, inv.ID)
	if done.State != controlplane.Completed {
		t.Fatalf("after dispatch: %s", done.State)
	}
	data = append(data, done.Result.ShortReference)
	doc := c.Get("/requests/" + inv.ID).Doc(t)
	areaStrays(t, "the receipt", doc.Find(`[data-testid="receipt"]`), data...)
	areaStrays(t, "the passkey offer", doc.Find(`[data-testid="passkey-offer"]`), data...)

	if _, status, r := addCustomerPasskey(t, c, inv.ID, origin); status != http.StatusOK {
		t.Fatalf("adding a passkey: %d %+v", status, r)
	}
	areaStrays(t, "the passkey added", c.Get("/requests/"+inv.ID+"?passkey=added").Doc(t).Find(`[data-testid="passkey-offer"]`), data...)
	list := c.Get("/requests/" + inv.ID + "/passkeys")
	pageStrays(t, "the passkeys", list, data...)
	remove := list.Doc(t).Find(`[data-testid="passkey-remove"]`).AttrOr("href", "")
	pageStrays(t, "removing a passkey", c.Get(remove), data...)
	pageStrays(t, "a passkey removed", c.Get("/requests/"+inv.ID+"/passkeys?removed=1"), data...)

	next, link2 := b.PendingRefund(t)
	data = append(data, businessWords(t, b.Invocation(t, next.ID).QuoteJSON)...)
	c2 := pk.Client(t)
	decide := c2.Get(link2).Doc(t).Find(`[data-testid="passkey-decide"]`)
	areaStrays(t, "deciding with a passkey", decide, data...)
	for _, attr := range []string{"data-passkey-refused", "data-passkey-cancelled", "data-passkey-failed"} {
		if v := decide.Find("form").AttrOr(attr, ""); !strings.HasPrefix(v, "⟦") || pseudotest.Stray(v) != "" {
			t.Errorf("the passkey script's %s is %q, not a catalogue's", attr, v)
		}
	}
	tok := decide.Find(`input[name="_csrf"]`).AttrOr("value", "")
	status, raw := postJSON(t, c2, link2+"/passkey/begin", tok, map[string]string{"decision": "confirm", "version": "0", "digest": "00"})
	if r := replyOf(t, raw); status != http.StatusConflict || !strings.HasPrefix(r.Error, "⟦") || pseudotest.Stray(r.Error) != "" {
		t.Errorf("a page too old for the passkey: %d %q", status, r.Error)
	}

	// A mail link of that request, quoted again since (the shop's order
	// changed meanwhile): what changed, the quote it showed and the one now.
	c3 := pk.Client(t)
	old := c3.MailLink(link2, c3.Get(link2))
	page3 := c3.Open(link2)
	refundAtTheShop(t, b, next.Target.ID, 1, "goodwill, in another tab")
	successor := confirmStale(t, c3, next.ID, page3)
	stale := pk.Client(t).Get(old)
	if stale.StatusCode != http.StatusConflict {
		t.Fatalf("the old mail's link: %d\n%s", stale.StatusCode, stale.Text)
	}
	pageStrays(t, "a mail link whose request changed", stale, append(data, businessWords(t, b.Invocation(t, successor).QuoteJSON)...)...)
}
