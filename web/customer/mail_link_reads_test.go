package customer_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/web/webtest"
)

// TestSpendingAMailLinkReadsItsRequestOnce: the mail link's POST (the
// customer pressing "Continue to the request") loads the request once —
// the look before the spend checks the link against it, and the spend
// and the page use what it read — and its GET once too.
func TestSpendingAMailLinkReadsItsRequestOnce(t *testing.T) {
	t.Parallel()
	rec := &webtest.Statements{}
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage(), webtest.WithQueryTracer(rec))
	_, link := b.PendingRefund(t)
	c := b.Client(t)
	path := c.MailLink(link, c.Get(link))
	var page, res webtest.Response
	get := rec.During(func() { page = c.Get(path) })
	tok, _ := page.Doc(t).Find(`[data-testid="mail-link-form"] input[name="_csrf"]`).Attr("value")
	post := rec.During(func() { res = c.Post(path, url.Values{"_csrf": {tok}}) })
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/requests/") {
		t.Fatalf("spending the mail link: %d to %q\n%s", res.StatusCode, res.Header.Get("Location"), res.Text)
	}
	for name, sql := range map[string][]string{"GET": get, "POST": post} {
		loads := 0
		for _, q := range sql {
			if strings.Contains(q, "FROM invocations WHERE id = $1") {
				loads++
			}
		}
		if loads != 1 {
			t.Errorf("the mail link's %s loaded the request %d times, want once:\n%s", name, loads, strings.Join(sql, "\n"))
		}
	}
}
