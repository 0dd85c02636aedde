package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// pageCount reads the queue's count of waiting cards.
func pageCount(t *testing.T, doc *goquery.Document) int {
	t.Helper()
	raw, ok := doc.Find(`[data-testid="queue-waiting"]`).Attr("data-count")
	if !ok {
		t.Fatalf("the queue shows no count of waiting cards")
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		t.Fatalf("queue count %q: %v", raw, err)
	}
	return n
}

func navCount(doc *goquery.Document) string {
	s := doc.Find(`[data-testid="nav-count"]`).Clone()
	s.Find(".visually-hidden").Remove()
	return strings.TrimSpace(s.Text())
}

// TestQueueSoonestDeadlineFirstWithTheCount pages through 27 cards: every
// page runs soonest deadline first and continues where the last ended
// (keyset), each says how many wait in all, and a filter's count is the
// filtered one.
func TestQueueSoonestDeadlineFirstWithTheCount(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	var first controlplane.Invocation
	for i := 0; i < 27; i++ {
		inv := f.Refund(t, f.NewOrder(t), int64(100+i))
		if i == 0 {
			first = inv
		}
		b.Clock.Advance(time.Second) // distinct deadlines, later ones later
	}
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	var deadlines []time.Time
	path, pages := "/queue", 0
	for path != "" {
		res := c.Get(path)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, res.StatusCode)
		}
		doc := res.Doc(t)
		if n := pageCount(t, doc); n != 27 {
			t.Errorf("page %d says %d waiting, want 27", pages+1, n)
		}
		if got := navCount(doc); got != "27" {
			t.Errorf("header badge %q, want 27", got)
		}
		doc.Find(`[data-card] time[data-deadline]`).Each(func(_ int, s *goquery.Selection) {
			raw, _ := s.Attr("data-deadline")
			at, err := time.Parse(time.RFC3339, raw)
			if err != nil {
				t.Fatalf("deadline %q: %v", raw, err)
			}
			deadlines = append(deadlines, at)
		})
		if pages == 0 {
			if id, _ := doc.Find(`[data-card]`).First().Attr("id"); id != "card-"+first.ID {
				t.Errorf("the first card is %s, want the one with the soonest deadline %s", id, first.ID)
			}
		}
		path, _ = doc.Find(`[data-testid="next-page"]`).Attr("href")
		pages++
	}
	if pages != 2 || len(deadlines) != 27 {
		t.Fatalf("%d pages with %d cards, want 2 pages with 27", pages, len(deadlines))
	}
	for i := 1; i < len(deadlines); i++ {
		if deadlines[i].Before(deadlines[i-1]) {
			t.Fatalf("card %d's deadline %s comes after a later one %s", i, deadlines[i], deadlines[i-1])
		}
	}
	doc := c.Get("/queue?min=1.10&max=1.12").Doc(t)
	if n := pageCount(t, doc); n != 3 {
		t.Errorf("filtered count %d, want 3", n)
	}
	if txt := doc.Find(`[data-testid="queue-waiting"]`).Text(); !strings.Contains(txt, "with these filters") {
		t.Errorf("a filtered count does not say so: %q", txt)
	}
}

// TestQueueBadgeCountsOnlyWhatTheQueueShows puts one request in the queue
// and one unverified result elsewhere: the badge and the queue say 1, the
// unverified one is counted apart with a link to where it is, and the
// agent's and manager's home pages count both, each linking to its place.
func TestQueueBadgeCountsOnlyWhatTheQueueShows(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	pending := f.Refund(t, f.NewOrder(t), 500)
	lost := f.Refund(t, f.NewOrder(t), 600)
	webtest.MarkUnverified(t, b, lost.ID)

	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	doc := c.Get("/queue").Doc(t)
	if got := navCount(doc); got != "1" {
		t.Errorf("header badge %q over the queue, want 1", got)
	}
	if n := doc.Find(`[data-card]`).Length(); n != 1 || pageCount(t, doc) != 1 {
		t.Errorf("%d cards, count %d; want 1 and 1", n, pageCount(t, doc))
	}
	if doc.Find(`[data-testid="card-`+pending.ID+`"]`).Length() != 1 {
		t.Errorf("the pending card is missing")
	}
	link := doc.Find(`[data-testid="unverified-link"]`)
	if href, _ := link.Attr("href"); href != "/#unverified" || !strings.Contains(link.Text(), "1 unconfirmed result") {
		t.Errorf("the unverified result is not counted apart with a link: %q → %q", link.Text(), href)
	}

	for _, role := range []accounts.Role{accounts.Agent, accounts.Manager} {
		hc := b.Client(t)
		hc.MustSignIn(b.Users[role])
		home := hc.Get("/").Doc(t)
		for testid, want := range map[string]string{"waiting-approvals": "1", "waiting-unverified": "1", "waiting-handoffs": "0"} {
			if got, _ := home.Find(`[data-testid="` + testid + `"]`).Attr("data-count"); got != want {
				t.Errorf("%s home: %s = %q, want %s", role, testid, got, want)
			}
		}
		if href, _ := home.Find(`[data-testid="waiting-approvals"]`).Attr("href"); href != "/queue" {
			t.Errorf("%s home: the approvals count links to %q", role, href)
		}
		if href, _ := home.Find(`[data-testid="waiting-handoffs"]`).Attr("href"); href != "/handoffs" {
			t.Errorf("%s home: the hand-offs count links to %q", role, href)
		}
		item := home.Find(`[data-testid="unverified-list"] a`)
		if href, _ := item.Attr("href"); href != "/tasks/"+lost.TaskID+"?inspect="+lost.ID || !strings.Contains(item.Text(), lost.Quote.Title) {
			t.Errorf("%s home: the unverified result links to %q (%q)", role, href, item.Text())
		}
		reviews := home.Find(`[data-testid="waiting-reviews"]`).Length()
		if (role == accounts.Manager) != (reviews == 1) {
			t.Errorf("%s home: %d review counts", role, reviews)
		}
	}
	cust := b.Client(t)
	cust.MustSignIn(b.Users[accounts.Customer])
	if n := cust.Get("/").Doc(t).Find(`[data-testid="home-waiting"]`).Length(); n != 0 {
		t.Errorf("a customer's home shows the staff's waiting work")
	}
}

// TestQueueRejectReasonsFitTheActionAndNoneIsChosen: a refund and a
// description edit offer different presets, none chosen; a reject without
// a reason, Other without words, or another action's reason is a field
// error; the reason chosen is exactly what the request records.
func TestQueueRejectReasonsFitTheActionAndNoneIsChosen(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	refund := f.Refund(t, f.Order, 800)
	edit := f.Describe(t, "Now in oak.")
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])

	presets := func(doc *goquery.Document) []string {
		var out []string
		doc.Find(`[data-testid="reject-form"] input[type="radio"][name="reason"]`).Each(func(_ int, s *goquery.Selection) {
			v, _ := s.Attr("value")
			out = append(out, v)
			if _, checked := s.Attr("checked"); checked {
				t.Errorf("reason %q is chosen before the agent chose", v)
			}
		})
		return out
	}
	refundPage := c.Get("/queue/" + refund.ID).Doc(t)
	editPage := c.Get("/queue/" + edit.ID).Doc(t)
	rp, ep := strings.Join(presets(refundPage), "|"), strings.Join(presets(editPage), "|")
	if !strings.Contains(rp, "The amount is more than this order allows.") || strings.Contains(ep, "amount") {
		t.Errorf("presets do not fit the action:\nrefund: %s\nedit: %s", rp, ep)
	}
	if !strings.Contains(ep, "The new description is inaccurate or misleading.") || strings.Contains(rp, "description") {
		t.Errorf("presets do not fit the action:\nrefund: %s\nedit: %s", rp, ep)
	}
	if !strings.HasSuffix(ep, "other") || !strings.HasSuffix(rp, "other") {
		t.Errorf("no Other choice: %s / %s", rp, ep)
	}

	form := webtest.CardForm(t, c.Get("/queue/"+edit.ID), "reject-form")
	for _, tc := range []struct{ reason, other, want string }{
		{"", "", "Choose the reason"},
		{"other", "  ", "Write the reason"},
		{"The amount is more than this order allows.", "", "Choose one of the reasons shown"},
	} {
		form.Set("reason", tc.reason)
		form.Set("other", tc.other)
		res := c.Post("/queue/"+edit.ID+"/reject", form)
		msg := res.Doc(t).Find(`[data-testid="reason-error"]`).Text()
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(msg, tc.want) {
			t.Errorf("reject with reason %q: %d %q, want 422 saying %q", tc.reason, res.StatusCode, msg, tc.want)
		}
		if got := b.Invocation(t, edit.ID).State; got != controlplane.AwaitingApproval {
			t.Fatalf("a refused reject changed the request: %s", got)
		}
	}
	form.Set("reason", "other")
	form.Set("other", "This text is the product's legal notice and cannot change.")
	res := c.Post("/queue/"+edit.ID+"/reject", form)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reject with own words: %d", res.StatusCode)
	}
	if got := b.Invocation(t, edit.ID); got.DecisionReason != "This text is the product's legal notice and cannot change." {
		t.Fatalf("recorded reason %q", got.DecisionReason)
	}
	after := c.Get(res.Header.Get("Location")).Doc(t)
	if out := after.Find(`[data-testid="decided-outcome"]`).Text(); !strings.Contains(out, "legal notice") {
		t.Errorf("the queue does not say which reason went out: %q", out)
	}
	form = webtest.CardForm(t, c.Get("/queue/"+refund.ID), "reject-form")
	form.Set("reason", "The amount is more than this order allows.")
	if res := c.Post("/queue/"+refund.ID+"/reject", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reject with a preset: %d", res.StatusCode)
	}
	if got := b.Invocation(t, refund.ID); got.DecisionReason != "The amount is more than this order allows." {
		t.Fatalf("recorded reason %q", got.DecisionReason)
	}
}

// TestQueueApproveWithoutJavaScriptShowsOneTruth approves over plain HTTP
// (no htmx): the queue that follows shows the card in its new state only,
// with no hold, the count and badge one lower, and the next card marked to
// take the focus; after the last card, the "nothing is waiting" message
// takes it.
func TestQueueApproveWithoutJavaScriptShowsOneTruth(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	one := f.Refund(t, f.NewOrder(t), 700)
	b.Clock.Advance(time.Second)
	two := f.Refund(t, f.NewOrder(t), 800)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])

	approve := func(id string) *goquery.Document {
		t.Helper()
		if res := c.Post("/queue/"+id+"/claim", url.Values{"_csrf": {c.CSRF("/queue")}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("claim: %d", res.StatusCode)
		}
		res := c.Post("/queue/"+id+"/approve", webtest.CardForm(t, c.Get("/queue/"+id), "approve-form"))
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/queue?decided="+id {
			t.Fatalf("approve: %d → %q", res.StatusCode, res.Header.Get("Location"))
		}
		page := c.Get(res.Header.Get("Location"))
		if page.StatusCode != http.StatusOK {
			t.Fatalf("the queue after approving: %d", page.StatusCode)
		}
		return page.Doc(t)
	}
	doc := approve(one.ID)
	decided := doc.Find(`[data-testid="decided-card"]`)
	if state := decided.Find(`[data-testid="state"]`).Text(); !strings.HasPrefix(state, "Approved") {
		t.Errorf("the decided card's badge says %q, want Approved", state)
	}
	if strings.Contains(decided.Text(), "Pending") || strings.Contains(decided.Text(), "Awaiting") {
		t.Errorf("the decided card contradicts itself: %q", decided.Text())
	}
	if strings.Contains(doc.Find("main").Text(), "You hold this card") || doc.Find(`[data-testid="card-`+one.ID+`"]`).Length() != 0 {
		t.Errorf("the approved card still shows as held or waiting")
	}
	if got := navCount(doc); got != "1" || pageCount(t, doc) != 1 {
		t.Errorf("after one approval: badge %q, count %d; want 1 and 1", got, pageCount(t, doc))
	}
	next := doc.Find(`[data-testid="card-` + two.ID + `"]`)
	if _, ok := next.Attr("autofocus"); !ok {
		t.Errorf("the next card does not take the focus")
	}
	if strings.Contains(doc.Find(`[data-testid="flash"]`).Text(), "Approved") {
		t.Errorf("the approval is said twice (flash and card)")
	}

	doc = approve(two.ID)
	empty := doc.Find(`[data-testid="queue-empty"]`)
	if _, ok := empty.Attr("autofocus"); !ok || !strings.Contains(empty.Text(), "Nothing is waiting") {
		t.Errorf("with no card left the focus does not go to the message: %q", empty.Text())
	}
	if n := doc.Find(`[data-testid="nav-count"]`).Length(); n != 0 || pageCount(t, doc) != 0 {
		t.Errorf("an empty queue still has a badge (%d) or count %d", n, pageCount(t, doc))
	}
	var held int
	if err := b.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM approval_claims WHERE invocation_id IN ($1, $2)`,
		one.ID, two.ID).Scan(&held); err != nil || held != 0 {
		t.Errorf("%d decided cards are still held (%v)", held, err)
	}

	// With htmx the answer sends the browser to the same page.
	three := f.Refund(t, f.NewOrder(t), 900)
	form := webtest.CardForm(t, c.Get("/queue/"+three.ID), "approve-form")
	c.Header.Set("HX-Request", "true")
	res := c.Post("/queue/"+three.ID+"/approve", form)
	c.Header.Del("HX-Request")
	if res.StatusCode != http.StatusOK || res.Header.Get("HX-Redirect") != "/queue?decided="+three.ID {
		t.Fatalf("htmx approve: %d HX-Redirect %q", res.StatusCode, res.Header.Get("HX-Redirect"))
	}
}

// TestQueueCardSaysWhenQuotedAndFlagsAStaleQuote refunds $42.00 of an
// order while an $8.00 refund of it waits: the waiting card says when it
// was quoted, and now says the quote is out of date and why instead of
// showing "Already refunded −$0.00"; opened, it shows the quote now and
// can only be quoted again, after which it can be approved.
func TestQueueCardSaysWhenQuotedAndFlagsAStaleQuote(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	quotedAt := b.Clock.Now()
	small := f.Refund(t, f.Order, 800)
	twin := f.Refund(t, f.Order, 790)
	b.Clock.Advance(3 * time.Minute)

	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	card := c.Get("/queue").Doc(t).Find(`[data-testid="card-` + small.ID + `"]`)
	want := fmt.Sprintf("quoted %s, 3 min ago", quotedAt.UTC().Format("15:04 UTC"))
	if got := card.Find(`[data-testid="quoted-at"]`).Text(); got != want {
		t.Errorf("quoted-at %q, want %q", got, want)
	}
	if card.Find(`[data-testid="stale"]`).Length() != 0 {
		t.Errorf("a fresh quote is marked stale")
	}

	big := f.Refund(t, f.Order, 4200)
	colleague := b.CreateUser(t, accounts.Agent)
	if _, err := b.Control.StaffDecide(context.Background(), controlplane.StaffDecision{Actor: controlplane.UserActor(colleague.ID, "agent", "A"), InvocationID: big.ID, Verb: controlplane.StaffApprove, Version: big.Version, ArgsHash: big.ArgsHash}); err != nil {
		t.Fatal(err)
	}
	b.Clock.Advance(time.Minute)
	if ok, err := b.Control.Dispatch(context.Background(), big.ID); err != nil || !ok {
		t.Fatalf("dispatch: %v %v", ok, err)
	}
	if got := b.Invocation(t, big.ID).State; got != controlplane.Completed {
		t.Fatalf("the $42.00 refund is %s", got)
	}

	card = c.Get("/queue").Doc(t).Find(`[data-testid="card-` + small.ID + `"]`)
	stale := card.Find(`[data-testid="stale"]`)
	if !strings.Contains(stale.Text(), big.Quote.Title) || !strings.Contains(stale.Text(), "completed at") {
		t.Errorf("the stale card does not say what changed: %q", stale.Text())
	}
	if strings.Contains(card.Text(), "Already refunded") {
		t.Errorf("the stale card still shows its old lines:\n%s", card.Text())
	}

	page := c.Get("/queue/" + small.ID)
	doc := page.Doc(t)
	if check := doc.Find(`[data-testid="fresh-check"]`).Text(); !strings.Contains(check, "changed since this quote") {
		t.Errorf("the opened card does not say it was checked: %q", check)
	}
	if fresh := doc.Find(`[data-testid="fresh-quote"]`).Text(); !strings.Contains(fresh, "−$42.00") {
		t.Errorf("the quote now does not show the earlier refund: %q", fresh)
	}
	if doc.Find(`[data-testid="approve-form"]`).Length() != 0 {
		t.Errorf("an out-of-date quote can still be approved")
	}
	if res := c.Post("/queue/"+small.ID+"/requote", webtest.CardForm(t, page, "requote-form")); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("requote: %d\n%s", res.StatusCode, res.Text)
	}
	page = c.Get("/queue/" + small.ID)
	doc = page.Doc(t)
	if check := doc.Find(`[data-testid="fresh-check"]`).Text(); !strings.Contains(check, "still holds") {
		t.Errorf("after quoting again: %q", check)
	}
	if q := doc.Find(`[data-testid="quote"]`).First().Text(); !strings.Contains(q, "−$42.00") {
		t.Errorf("the card's quote after quoting again: %q", q)
	}
	if res := c.Post("/queue/"+small.ID+"/approve", webtest.CardForm(t, page, "approve-form")); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve the fresh quote: %d", res.StatusCode)
	}
	if got := b.Invocation(t, small.ID).State; got != controlplane.Approved {
		t.Fatalf("after approving the fresh quote: %s", got)
	}
	// Once nothing is left to refund, the twin card is refused by the
	// system: it says so and offers neither approval nor a new quote.
	if ok, err := b.Control.Dispatch(context.Background(), small.ID); err != nil || !ok {
		t.Fatalf("dispatch: %v %v", ok, err)
	}
	doc = c.Get("/queue/" + twin.ID).Doc(t)
	if doc.Find(`[data-testid="refused"]`).Length() != 1 || doc.Find(`[data-testid="approve-form"]`).Length() != 0 ||
		doc.Find(`[data-testid="requote-form"]`).Length() != 0 || doc.Find(`[data-testid="reject-form"]`).Length() != 1 {
		t.Errorf("a card the system now refuses still offers approval or a new quote:\n%s", doc.Find("main").Text())
	}
}

// TestQueueBulkRefusesConflictingEditsWithoutConfirmation offers two new
// descriptions of one product for bulk approval: the review warns, and
// approving without the explicit tick approves nothing.
func TestQueueBulkRefusesConflictingEditsWithoutConfirmation(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	p, err := b.Shop.CreateProduct(context.Background(), demoshop.ProductFixture{Name: "Desk lamp", Description: "A lamp.", PriceCents: 3900, Stock: 5})
	if err != nil {
		t.Fatal(err)
	}
	oak := f.DescribeProduct(t, p.ID, "Now in oak.")
	walnut := f.DescribeProduct(t, p.ID, "Now in walnut.")
	other := f.Describe(t, "A different lamp.")
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	form := url.Values{"_csrf": {c.CSRF("/queue")}, "id": {oak.ID, walnut.ID, other.ID}}
	review := c.Post("/queue/bulk", form)
	warn := review.Doc(t).Find(`[data-testid="bulk-conflicts"]`)
	if review.StatusCode != http.StatusOK || !strings.Contains(warn.Text(), "2 requests change") || strings.Contains(warn.Text(), other.Quote.Title) {
		t.Fatalf("the review does not warn about the two edits of one product (%d): %q", review.StatusCode, warn.Text())
	}
	final := url.Values{}
	review.Doc(t).Find(`[data-testid="bulk-confirm-form"] input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		n, _ := s.Attr("name")
		v, _ := s.Attr("value")
		final.Add(n, v)
	})
	res := c.Post("/queue/bulk/approve", final)
	if res.StatusCode != http.StatusUnprocessableEntity || res.Doc(t).Find(`[data-testid="confirm_conflicts-error"]`).Length() != 1 {
		t.Fatalf("bulk approve without the tick: %d", res.StatusCode)
	}
	for _, inv := range []controlplane.Invocation{oak, walnut, other} {
		if got := b.Invocation(t, inv.ID).State; got != controlplane.AwaitingApproval {
			t.Fatalf("%s is %s after a refused bulk approval", inv.ID, got)
		}
	}
	final.Set("confirm_conflicts", "1")
	if res := c.Post("/queue/bulk/approve", final); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("bulk approve with the tick: %d", res.StatusCode)
	}
	for _, inv := range []controlplane.Invocation{oak, walnut, other} {
		if got := b.Invocation(t, inv.ID).State; got != controlplane.Approved {
			t.Errorf("%s is %s after the confirmed bulk approval", inv.ID, got)
		}
	}
}
