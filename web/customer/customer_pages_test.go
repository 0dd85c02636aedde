package customer_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/controlplane"
)

// cents reads a money amount as the page prints it ("$101.00",
// "−$12.00") in cents; ok is false for text that is not an amount.
func cents(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "−") || strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "−-")
	if !strings.HasPrefix(s, "$") {
		return 0, false
	}
	whole, frac, ok := strings.Cut(strings.ReplaceAll(s[1:], ",", ""), ".")
	if !ok || len(frac) != 2 {
		return 0, false
	}
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	n := w*100 + f
	if neg {
		n = -n
	}
	return n, true
}

// shopZoneTime is a time as customer pages write it in the demo shop's
// zone (America/Los_Angeles) when the browser has told none: "Dec 2,
// 10:04 PST", never silently UTC.
var shopZoneTime = regexp.MustCompile(`\d{1,2}:\d{2} P[SD]T\b`)

// inShopZone says s ends with a time in the demo shop's zone.
func inShopZone(s string) bool {
	s = unisolated(s)
	loc := shopZoneTime.FindStringIndex(s)
	return loc != nil && loc[1] == len(s)
}

// breakdown is a rendered quote's money lines (every line but the reason):
// label, amount, and whether the page draws the line as the sum of those
// above it.
type breakdownLine struct {
	label string
	cents int64
	sum   bool
	total bool
}

func breakdown(t *testing.T, doc *goquery.Document) []breakdownLine {
	t.Helper()
	var out []breakdownLine
	doc.Find(`[data-testid="quote-line"]`).Each(func(_ int, s *goquery.Selection) {
		label := strings.TrimSpace(s.Find(`[data-testid="line-label"]`).Text())
		to := strings.TrimSpace(s.Find(`[data-testid="line-to"]`).Text())
		if label == "Reason" {
			return // the reason sent with the refund, in words: not money
		}
		n, ok := cents(to)
		if !ok {
			t.Errorf("line %q reads %q, not an amount", label, to)
			return
		}
		_, sum := s.Attr("data-sum")
		out = append(out, breakdownLine{label: label, cents: n, sum: sum, total: s.HasClass("emphasis")})
	})
	return out
}

// TestCustomerRefundBreakdownAddsUp renders refunds of Jordan's walnut lamp
// ($89.00 and $12.00 shipping) as the customer sees them and adds the lines
// up as a reader would: every line marked as a sum equals the lines above
// it, the last is the refund, nothing reads "$0.00", "Already refunded"
// appears only when something was, the amount is shown once, the page
// says why it is less than was paid and when the money arrives, and it
// names the order by number, date and items, never by the shop's id.
func TestCustomerRefundBreakdownAddsUp(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		reason      string
		amount      int64
		earlier     int64 // refunded on the order before, straight at the shop
		wantLabels  []string
		wantNoLabel []string
		wantWhy     []string
	}{
		{name: "damaged, part of it", reason: "damaged", amount: 4210,
			wantLabels:  []string{"Items", "Shipping", "You paid", "Shipping isn't refunded when an item arrived damaged", "Can be refunded when an item arrived damaged", "Not in this refund (can still be refunded later)", "This refund"},
			wantNoLabel: []string{"Already refunded"},
			wantWhy:     []string{"Shipping ($12.00) is not refunded", "The other $46.90"}},
		{name: "changed mind, all that can be", reason: "changed_mind", amount: 7565,
			wantLabels:  []string{"Restocking fee (15% of the items)", "This refund"},
			wantNoLabel: []string{"Not in this refund (can still be refunded later)", "Already refunded"},
			wantWhy:     []string{"restocking fee"}},
		{name: "damaged, after an earlier refund", reason: "damaged", amount: 3000, earlier: 2000,
			wantLabels: []string{"Already refunded", "This refund"},
			wantWhy:    []string{"$20.00 of this order was refunded before."}},
	}
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The cases share the lamp's order; the one with an earlier
			// refund comes last.
			task := b.CustomerTask(t, webtest.Jordan)
			if tc.earlier > 0 {
				first := b.ProposeFor(t, b.CustomerTask(t, webtest.Jordan), "issue_refund",
					map[string]any{"order_id": "walnut lamp", "amount_cents": 100, "reason_code": "damaged"}, "")
				shopRefund(t, b, first.Quote.Target.ID, tc.earlier)
			}
			inv := b.ProposeFor(t, task, "issue_refund",
				map[string]any{"order_id": "walnut lamp", "amount_cents": tc.amount, "reason_code": tc.reason}, "")
			res := b.Client(t).Open(b.Link(t, inv, webtest.Jordan))
			doc := res.Doc(t)
			lines := breakdown(t, doc)
			if len(lines) == 0 {
				t.Fatal("no breakdown on the page")
			}
			var running int64
			sums := 0
			for _, l := range lines {
				if l.cents == 0 {
					t.Errorf("line %q reads $0.00", l.label)
				}
				if l.sum {
					sums++
					if l.cents != running {
						t.Errorf("line %q says %d cents, the lines above it add up to %d", l.label, l.cents, running)
					}
					continue
				}
				running += l.cents
			}
			last := lines[len(lines)-1]
			if !last.sum || !last.total || last.cents != tc.amount || sums < 2 {
				t.Errorf("the breakdown ends with %+v (%d sums), want the refund of %d cents as its total", last, sums, tc.amount)
			}
			labels := map[string]bool{}
			for _, l := range lines {
				labels[l.label] = true
			}
			for _, want := range tc.wantLabels {
				if !labels[want] {
					t.Errorf("no line %q; lines: %+v", want, lines)
				}
			}
			for _, not := range tc.wantNoLabel {
				if labels[not] {
					t.Errorf("a line %q shows; lines: %+v", not, lines)
				}
			}
			// The amount once: in the total line, not again beside it.
			if n := doc.Find(`[data-testid="amount"]`).Length(); n != 0 {
				t.Errorf("the amount is shown again beside the breakdown (%d)", n)
			}
			amount := lines[len(lines)-1]
			quote := doc.Find(`.quote`).Text()
			if n := strings.Count(quote, formatCents(amount.cents)); n != 1 {
				t.Errorf("the quote shows %s %d times, want once", formatCents(amount.cents), n)
			}
			why := doc.Find(`[data-testid="why"]`).Text()
			for _, w := range tc.wantWhy {
				if !strings.Contains(why, w) {
					t.Errorf("the page does not say %q; why reads %q", w, why)
				}
			}
			if got := webtest.TextByTestID(res, t, "money-arrives"); !strings.Contains(got, "5–10 business days") {
				t.Errorf("when the money arrives: %q", got)
			}
			order := inv.Quote.Target.ID
			if ref := webtest.TextByTestID(res, t, "object-reference"); ref != "Order #"+strings.ToUpper(order[len(order)-6:]) {
				t.Errorf("reference %q, want the order's number", ref)
			}
			if d := webtest.TextByTestID(res, t, "object-date"); !inShopZone(d) {
				t.Errorf("order date %q carries no time and zone", d)
			}
			if it := webtest.TextByTestID(res, t, "object-item"); it != "Walnut desk lamp × 1" {
				t.Errorf("items %q", it)
			}
			if title := webtest.TextByTestID(res, t, "request-title"); strings.Contains(title, "ord_") || !strings.Contains(title, "Walnut desk lamp") {
				t.Errorf("title %q", title)
			}
			if page := doc.Find("main").Text(); strings.Contains(page, order) {
				t.Errorf("the page shows the shop's order id %s", order)
			}
			if d := webtest.TextByTestID(res, t, "deadline"); !shopZoneTime.MatchString(d) {
				t.Errorf("deadline %q carries no time zone", d)
			}
		})
	}
}

func formatCents(c int64) string {
	return "$" + strconv.FormatInt(c/100, 10) + "." + strconv.FormatInt(c%100/10, 10) + strconv.FormatInt(c%10, 10)
}

// shopRefund refunds amount of order straight at the shop, as its own staff
// would.
func shopRefund(t *testing.T, b *webtest.Stack, order string, amount int64) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"order_id": order, "amount_cents": amount, "reason": "damaged"})
	req, _ := http.NewRequest(http.MethodPost, b.ShopURL+"/refunds", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "test-earlier-refund-"+strconv.FormatInt(amount, 10))
	req.Header.Set("Authorization", "Bearer "+b.Shop.Token())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		t.Fatalf("refund at the shop: %d", res.StatusCode)
	}
}

// TestMyRequestsForALinkCustomer: a customer who came by link and showed
// it's them with a code reaches "See your requests" and finds the request
// the code was for, and only it; signed in to their account they find all
// their own requests, the ones waiting for them first (soonest deadline
// first) with the customer's words for the state, dates with times and zones;
// a visitor who only holds a link, or nothing, is told how to show it's
// them instead of being sent to a sign-in page, and sees no request.
func TestMyRequestsForALinkCustomer(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	task := b.CustomerTask(t, webtest.Jordan)
	declined := b.ProposeFor(t, task, "resend_receipt", map[string]any{"invoice_id": "paid Pro invoice"}, "")
	refund := b.ProposeFor(t, task, "issue_refund", map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}, "")
	b.Clock.Advance(5 * 60e9)
	cancel := b.ProposeFor(t, task, "cancel_subscription",
		map[string]any{"subscription_id": "Pro plan for acme.example", "reason_code": "too_expensive", "effective": "end_of_period"}, "")
	theirs := b.ProposeFor(t, b.CustomerTask(t, "hannah.weiss@example.de"), "reinstate_subscription",
		map[string]any{"subscription_id": "my Pro plan"}, "")

	// Holding the link is not proof: the link page offers no list, and
	// /requests tells the visitor how to show it's them.
	link := b.Link(t, refund, webtest.Jordan)
	visitor := b.Client(t)
	linkPage := visitor.Get(link)
	if linkPage.Doc(t).Find(`[data-testid="my-requests-link"]`).Length() != 0 || webtest.TextByTestID(linkPage, t, "my-requests-after-proof") == "" {
		t.Error("the link page offers the list of requests before any proof")
	}
	for _, c := range []*webtest.Client{visitor, b.Client(t)} {
		res := c.Get("/requests")
		if res.StatusCode != http.StatusUnauthorized || strings.Contains(res.Header.Get("Location"), "sign-in") {
			t.Errorf("/requests without proof: %d to %q, want 401 with the way to show it's you", res.StatusCode, res.Header.Get("Location"))
		}
		if res.Doc(t).Find(`[data-testid="requests-prove"]`).Length() != 1 || res.Doc(t).Find(`[data-testid="request-row"]`).Length() != 0 {
			t.Errorf("/requests without proof does not explain, or lists requests:\n%s", res.Text)
		}
	}

	// A code shows and decides the request it was sent for, and lists
	// only that one: the customer's other requests need their own proof.
	c := b.Client(t)
	page := c.Open(link)
	if res := c.Get("/requests/" + declined.ID); res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.Text, "Each request needs its own proof") {
		t.Errorf("another request of the customer with the refund's code: %d, want 401 asking for its own proof", res.StatusCode)
	}
	href, _ := page.Doc(t).Find(`[data-testid="my-requests-link"]`).Attr("href")
	if href != "/requests" {
		t.Fatalf("the request page links %q for all requests", href)
	}
	res := c.Get(href)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("My requests after a code: %d\n%s", res.StatusCode, res.Text)
	}
	var listed []string
	res.Doc(t).Find(`[data-testid="request-row"]`).Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("data-id")
		listed = append(listed, id)
	})
	if strings.Join(listed, ",") != refund.ID || webtest.TextByTestID(res, t, "only-proved") == "" {
		t.Errorf("My requests after the refund's code lists %v, want only %s and why", listed, refund.ID)
	}

	// The customer's own account spans their requests.
	acct := b.Client(t)
	acct.MustSignIn(b.CustomerAccount(t, webtest.Jordan))
	tok := acct.PageCSRF(acct.Get("/requests/" + declined.ID))
	if res := acct.Post("/requests/"+declined.ID+"/decline", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("decline: %d", res.StatusCode)
	}
	res = acct.Get("/requests")
	if res.StatusCode != http.StatusOK || webtest.TextByTestID(res, t, "only-proved") != "" {
		t.Fatalf("My requests of the account: %d\n%s", res.StatusCode, res.Text)
	}
	doc := res.Doc(t)
	ids := func(sel string) []string {
		var out []string
		doc.Find(sel + ` [data-testid="request-row"]`).Each(func(_ int, s *goquery.Selection) {
			id, _ := s.Attr("data-id")
			out = append(out, id)
		})
		return out
	}
	waiting, others := ids(`[data-testid="waiting"]`), ids(`[data-testid="done"]`)
	// The refund was prepared first, so its deadline comes first.
	if strings.Join(waiting, ",") != refund.ID+","+cancel.ID {
		t.Errorf("waiting for you: %v, want %v then %v", waiting, refund.ID, cancel.ID)
	}
	if strings.Join(others, ",") != declined.ID {
		t.Errorf("done: %v, want %v", others, declined.ID)
	}
	if first, _ := doc.Find(`[data-testid="request-row"]`).First().Attr("data-id"); first != refund.ID {
		t.Errorf("the first row is %s, want the request waiting for the customer", first)
	}
	if strings.Contains(res.Text, theirs.ID) || strings.Contains(res.Text, "Awaiting customer") {
		t.Error("the list shows another customer's request, or the console's word \"Awaiting customer\"")
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid="waiting"] [data-testid="row-badge"]`).First().Text()); got != "Waiting for you to confirm" {
		t.Errorf("badge of a waiting request: %q", got)
	}
	if got := webtest.TextByTestID(res, t, "waiting-count"); got != "(2)" {
		t.Errorf("waiting count %q", got)
	}
	if d := strings.TrimSpace(doc.Find(`[data-testid="row-deadline"]`).First().Text()); !inShopZone(d) {
		t.Errorf("deadline %q carries no time and zone", d)
	}
	if d := strings.TrimSpace(doc.Find(`[data-testid="row-when"]`).First().Text()); !inShopZone(d) {
		t.Errorf("date %q carries no time and zone", d)
	}
	if strings.Contains(doc.Find("main").Text(), refund.Quote.Target.ID) {
		t.Error("My requests shows the shop's order id")
	}
	if got := b.Invocation(t, theirs.ID).State; got != controlplane.AwaitingConfirmation {
		t.Errorf("their request is %s", got)
	}
}
