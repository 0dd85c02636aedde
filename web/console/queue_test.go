package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/store/dbtest"
	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
)

func TestQueueShowsCardsAndDecisionsWorkOverHTTP(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	approveMe := f.Refund(t, f.Order, 4200)
	rejectMe := f.Refund(t, f.NewOrder(t), 800)
	askMe := f.Refund(t, f.NewOrder(t), 650)

	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	res := c.Get("/queue")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /queue: %d", res.StatusCode)
	}
	doc := res.Doc(t)
	card := doc.Find(`[data-testid="card-` + approveMe.ID + `"]`)
	if card.Length() != 1 {
		t.Fatalf("the queue does not show %s:\n%s", approveMe.ID, res.Text)
	}
	for _, want := range []string{approveMe.Quote.Title, f.Customer.Email, "writes left", "Decide within"} {
		if !strings.Contains(card.Text(), want) {
			t.Errorf("card lacks %q", want)
		}
	}
	if n := doc.Find(`[data-testid="nav-count"]`).Text(); !strings.HasPrefix(n, "3") {
		t.Errorf("header badge = %q, want 3 pending", n)
	}

	// Opening a card claims it; a decision without the CSRF token is refused.
	open := c.Post("/queue/"+approveMe.ID+"/claim", url.Values{"_csrf": {c.CSRF("/queue")}})
	if open.StatusCode != http.StatusSeeOther || open.Header.Get("Location") != "/queue/"+approveMe.ID {
		t.Fatalf("claim: %d → %s", open.StatusCode, open.Header.Get("Location"))
	}
	page := c.Get("/queue/" + approveMe.ID)
	form := webtest.CardForm(t, page, "approve-form")
	noCSRF := url.Values{"expected_version": {form.Get("expected_version")}, "args_hash": {form.Get("args_hash")}}
	if res := c.Post("/queue/"+approveMe.ID+"/approve", noCSRF); res.StatusCode != http.StatusForbidden {
		t.Fatalf("approve without CSRF: %d, want 403", res.StatusCode)
	}
	if res := c.Post("/queue/"+approveMe.ID+"/approve", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d\n%s", res.StatusCode, res.Text)
	}
	if got := b.Invocation(t, approveMe.ID).State; got != controlplane.Approved {
		t.Fatalf("after approve: %s", got)
	}

	// Reject with a preset reason; "Other" with no words is a 422 that keeps the page.
	form = webtest.CardForm(t, c.Get("/queue/"+rejectMe.ID), "reject-form")
	form.Set("reason", "other")
	if res := c.Post("/queue/"+rejectMe.ID+"/reject", form); res.StatusCode != http.StatusUnprocessableEntity ||
		res.Doc(t).Find(`[data-testid="reason-error"]`).Length() != 1 {
		t.Fatalf("reject with no words: %d", res.StatusCode)
	}
	form.Set("reason", "This order does not qualify for a refund under our policy.")
	if res := c.Post("/queue/"+rejectMe.ID+"/reject", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reject: %d\n%s", res.StatusCode, res.Text)
	}
	if got := b.Invocation(t, rejectMe.ID); got.State != controlplane.Rejected || got.DecisionReason != "This order does not qualify for a refund under our policy." {
		t.Fatalf("after reject: %s %q", got.State, got.DecisionReason)
	}

	// Send back with a question.
	form = webtest.CardForm(t, c.Get("/queue/"+askMe.ID), "send-back-form")
	form.Set("question", "Which item arrived damaged?")
	if res := c.Post("/queue/"+askMe.ID+"/send-back", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("send back: %d\n%s", res.StatusCode, res.Text)
	}
	if got := b.Invocation(t, askMe.ID); got.State != controlplane.Rejected || got.DecisionReason != "question: Which item arrived damaged?" {
		t.Fatalf("after send back: %s %q", got.State, got.DecisionReason)
	}

	// With htmx, a refused decision comes back as the panel with the refusal
	// in words (htmx swaps no error response).
	stale := webtest.CardForm(t, page, "approve-form")
	c.Header.Set("HX-Request", "true")
	refused := c.Post("/queue/"+approveMe.ID+"/approve", stale)
	c.Header.Del("HX-Request")
	if out := refused.Doc(t).Find(`[data-testid="outcome"].bad`); refused.StatusCode != http.StatusOK || !strings.Contains(out.Text(), "changed since you read it") {
		t.Fatalf("htmx approve of a decided card: %d %q", refused.StatusCode, out.Text())
	}

	// A decided card says so and offers no decision.
	if res := c.Get("/queue/" + askMe.ID); res.Doc(t).Find(`[data-testid="decided"]`).Length() != 1 {
		t.Errorf("a decided card still offers decisions")
	}
	// Customers may not open the queue.
	cust := b.Client(t)
	cust.MustSignIn(b.Users[accounts.Customer])
	if res := cust.Get("/queue"); res.StatusCode != http.StatusForbidden {
		t.Errorf("customer GET /queue: %d, want 403", res.StatusCode)
	}
	if res := cust.Post("/queue/"+rejectMe.ID+"/approve", url.Values{"_csrf": {cust.CSRF("/")}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("customer approve: %d, want 403", res.StatusCode)
	}
}

func TestQueueEditRequotesShowsDiffAndApprovalBindsTheEditedHash(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	inv := f.Refund(t, f.Order, 4200)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])

	page := c.Get("/queue/" + inv.ID)
	stale := webtest.CardForm(t, page, "approve-form")
	edit := webtest.CardForm(t, page, "edit-form")
	if sel := page.Doc(t).Find(`select[name="arg.reason_code"]`); sel.Length() != 1 {
		t.Fatalf("the edit form has no select for the enum reason_code")
	}
	// Agents work in money: the amount field takes "42.00" in the task's
	// currency, labelled in words, never "Amount cents".
	amount := page.Doc(t).Find(`input[inputmode="decimal"][name="arg.amount_cents"]`)
	if amount.Length() != 1 || amount.AttrOr("value", "") != "42.00" {
		t.Fatalf("the edit form has no money input holding 42.00 for the amount (found %d, value %q)", amount.Length(), amount.AttrOr("value", ""))
	}
	if label := page.Doc(t).Find(`label[for="` + amount.AttrOr("id", "") + `"]`).Text(); label != "Amount (USD)" {
		t.Errorf("amount label %q, want \"Amount (USD)\"", label)
	}
	if text := page.Doc(t).Find("main").Text(); strings.Contains(text, "Amount cents") || strings.Contains(text, "amount_cents") ||
		strings.Contains(text, "in cents") {
		t.Error("the card speaks of cents or shows the field's code name")
	}
	edit.Set("arg.order_id", f.Order.ID)
	edit.Set("arg.reason_code", "damaged")
	for _, bad := range []string{"abc", "8.001", "800 cents"} {
		edit.Set("arg.amount_cents", bad)
		res := c.Post("/queue/"+inv.ID+"/edit", edit)
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.Text, "write an amount like 34.50") {
			t.Fatalf("edit with amount %q: %d, want 422 naming the format", bad, res.StatusCode)
		}
	}
	edit.Set("arg.amount_cents", "$8.00")
	if res := c.Post("/queue/"+inv.ID+"/edit", edit); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit: %d\n%s", res.StatusCode, res.Text)
	}
	page = c.Get("/queue/" + inv.ID)
	doc := page.Doc(t)
	diff := doc.Find(`[data-testid="diff"]`)
	if diff.Length() != 1 || !strings.Contains(diff.Text(), "Amount") || !strings.Contains(diff.Find(`[data-testid="new-quote"]`).Text(), "$8.00") {
		t.Fatalf("no diff with the new quote after an edit:\n%s", diff.Text())
	}
	// The approval the page showed before the edit names the old hash: refused.
	if res := c.Post("/queue/"+inv.ID+"/approve", stale); res.StatusCode != http.StatusConflict {
		t.Fatalf("approving the pre-edit arguments: %d, want 409", res.StatusCode)
	}
	fresh := webtest.CardForm(t, page, "approve-form")
	if res := c.Post("/queue/"+inv.ID+"/approve", fresh); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve the edit: %d\n%s", res.StatusCode, res.Text)
	}
	got := b.Invocation(t, inv.ID)
	var approved, proposed map[string]any
	_ = json.Unmarshal(got.Args.Approved, &approved)
	_ = json.Unmarshal(got.Args.Proposed, &proposed)
	if got.State != controlplane.Approved || approved["amount_cents"] != float64(800) || proposed["amount_cents"] != float64(4200) {
		t.Fatalf("approved %s with %s (proposed %s)", got.State, got.Args.Approved, got.Args.Proposed)
	}
}

func TestQueueTwoAgentsOneCardOneDecision(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	inv := f.Refund(t, f.Order, 1200)
	second := b.CreateUser(t, accounts.Agent)
	c1, c2 := b.Client(t), b.Client(t)
	c1.MustSignIn(b.Users[accounts.Agent])
	c2.MustSignIn(second)

	if res := c1.Post("/queue/"+inv.ID+"/claim", url.Values{"_csrf": {c1.CSRF("/queue")}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("claim: %d", res.StatusCode)
	}
	c2.Post("/queue/"+inv.ID+"/claim", url.Values{"_csrf": {c2.CSRF("/queue")}})
	page2 := c2.Get("/queue/" + inv.ID)
	if holder := page2.Doc(t).Find(`[data-testid="holder"]`).Text(); !strings.Contains(holder, b.Users[accounts.Agent].Name) {
		t.Fatalf("the second agent is not told who holds the card: %q", holder)
	}
	form1 := webtest.CardForm(t, c1.Get("/queue/"+inv.ID), "approve-form")
	form2 := webtest.CardForm(t, page2, "reject-form")
	form2.Set("reason", "It repeats an earlier request.")

	results := make(chan webtest.Response, 2)
	go func() { results <- c1.Post("/queue/"+inv.ID+"/approve", form1) }()
	go func() { results <- c2.Post("/queue/"+inv.ID+"/reject", form2) }()
	a, z := <-results, <-results
	ok, conflict := 0, 0
	for _, r := range []webtest.Response{a, z} {
		switch r.StatusCode {
		case http.StatusSeeOther:
			ok++
		case http.StatusConflict:
			conflict++
			if !strings.Contains(r.Text, "changed since you read it") && !strings.Contains(r.Text, "Cannot") {
				t.Errorf("the loser is not told what happened:\n%s", r.Text)
			}
		}
	}
	if ok != 1 || conflict != 1 {
		t.Fatalf("two decisions: %d succeeded, %d conflicted (want 1 and 1)", ok, conflict)
	}
	n, err := dbtest.CountEvents(context.Background(), b.Store.Pool(), "invocation.approved", &f.Task.ID)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := dbtest.CountEvents(context.Background(), b.Store.Pool(), "invocation.rejected", &f.Task.ID)
	if n+m != 1 {
		t.Fatalf("%d approvals and %d rejections recorded, want one decision", n, m)
	}
}

func TestQueueKeysetPagesAndFilters(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	ids := map[string]bool{}
	for i := 0; i < 27; i++ {
		inv := f.Refund(t, f.NewOrder(t), int64(100+i))
		ids[inv.ID] = true
		b.Clock.Advance(time.Second) // distinct deadlines
	}
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])
	seen := map[string]bool{}
	path, pages := "/queue", 0
	for path != "" {
		res := c.Get(path)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, res.StatusCode)
		}
		doc := res.Doc(t)
		doc.Find(`[data-card]`).Each(func(_ int, s *goquery.Selection) {
			id, _ := s.Attr("id")
			id = strings.TrimPrefix(id, "card-")
			if seen[id] {
				t.Errorf("%s shown twice", id)
			}
			seen[id] = true
		})
		path, _ = doc.Find(`[data-testid="next-page"]`).Attr("href")
		pages++
	}
	if pages != 2 || len(seen) != len(ids) {
		t.Fatalf("%d pages with %d cards, want 2 pages with %d", pages, len(seen), len(ids))
	}
	res := c.Get("/queue?min=1.10&max=1.12")
	if n := res.Doc(t).Find(`[data-card]`).Length(); n != 3 {
		t.Fatalf("amount filter $1.10–$1.12: %d cards, want 3", n)
	}
	if res := c.Get("/queue?min=lots"); res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a bad amount: %d, want 422", res.StatusCode)
	}
	if n := c.Get("/queue?mine=1").Doc(t).Find(`[data-card]`).Length(); n != 0 {
		t.Fatalf("held by me before opening any: %d cards", n)
	}
}
