package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// consoleFixture is a customer of the demo shop with a delivered order
// ($42.00 lamp, $8.00 bulb, $6.50 shipping) and a task allowing refunds.
type consoleFixture struct {
	b     *testBundle
	cust  demoshop.Customer
	order demoshop.Order
	task  controlplane.Task
}

func newConsoleFixture(t *testing.T, b *testBundle) *consoleFixture {
	t.Helper()
	ctx := context.Background()
	cust, err := b.shop.CreateCustomer(ctx, demoshop.CustomerFixture{Name: "Ada Buyer", Email: fmt.Sprintf("ada-%d@example.test", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	f := &consoleFixture{b: b, cust: cust}
	f.order = f.newOrder(t)
	f.task, err = b.cp.CreateTask(ctx, controlplane.AssistantActor("asst_test", "Test assistant"), controlplane.NewTask{
		CustomerRef: cust.Email, ConversationID: fmt.Sprintf("conv-%d", time.Now().UnixNano()),
		AllowedActions: []string{"issue_refund", "cancel_subscription", "update_product_description"}, WriteBudget: 50, InflightLimit: 2, RatePerMinute: 600,
		ExpiresAt: b.clock.Now().Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *consoleFixture) newOrder(t *testing.T) demoshop.Order {
	t.Helper()
	at := f.b.clock.Now().AddDate(0, 0, -4)
	o, err := f.b.shop.CreateOrder(context.Background(), demoshop.OrderFixture{CustomerID: f.cust.ID, DeliveredAt: &at, ShippingCents: 650,
		Items: []demoshop.ItemFixture{{Name: "Walnut lamp", UnitPriceCents: 4200, Quantity: 1}, {Name: "Bulb", UnitPriceCents: 800, Quantity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// refund proposes a refund of the order as the assistant; it lands in the
// approval queue.
func (f *consoleFixture) refund(t *testing.T, order demoshop.Order, cents int64) controlplane.Invocation {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"order_id": order.ID, "amount_cents": cents, "reason_code": "damaged"})
	inv, err := f.b.cp.Propose(context.Background(), controlplane.Proposal{TaskID: f.task.ID, Action: "issue_refund", Args: raw,
		Summary: fmt.Sprintf("Refund $%d.%02d for the damaged lamp", cents/100, cents%100), Actor: controlplane.AssistantActor("asst_test", "Test assistant")})
	if err != nil {
		t.Fatal(err)
	}
	if inv.State != controlplane.AwaitingApproval {
		t.Fatalf("proposal is %s, want awaiting approval", inv.State)
	}
	return inv
}

// describe proposes a new product description (reversible, no amount:
// low-risk).
func (f *consoleFixture) describe(t *testing.T, text string) controlplane.Invocation {
	t.Helper()
	ctx := context.Background()
	p, err := f.b.shop.CreateProduct(ctx, demoshop.ProductFixture{Name: "Desk lamp", Description: "A lamp.", PriceCents: 3900, Stock: 5})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"product_id": p.ID, "description": text})
	inv, err := f.b.cp.Propose(ctx, controlplane.Proposal{TaskID: f.task.ID, Action: "update_product_description", Args: raw,
		Actor: controlplane.AssistantActor("asst_test", "Test assistant")})
	if err != nil {
		t.Fatal(err)
	}
	if inv.State != controlplane.AwaitingApproval {
		t.Fatalf("proposal is %s, want awaiting approval", inv.State)
	}
	return inv
}

func (b *testBundle) invocation(t *testing.T, id string) controlplane.Invocation {
	t.Helper()
	inv, err := b.cp.Invocation(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// cardForm reads a form of the card page: its action's hidden fields.
func cardForm(t *testing.T, res response, testid string) url.Values {
	t.Helper()
	form := res.doc(t).Find(`[data-testid="` + testid + `"]`)
	if form.Length() == 0 {
		t.Fatalf("no form %s on the page (status %d)", testid, res.StatusCode)
	}
	v := url.Values{}
	form.Find(`input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		n, _ := s.Attr("name")
		val, _ := s.Attr("value")
		v.Set(n, val)
	})
	return v
}

func TestQueueShowsCardsAndDecisionsWorkOverHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop())
	f := newConsoleFixture(t, b)
	approveMe := f.refund(t, f.order, 4200)
	rejectMe := f.refund(t, f.newOrder(t), 800)
	askMe := f.refund(t, f.newOrder(t), 650)

	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	res := c.get("/queue")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /queue: %d", res.StatusCode)
	}
	doc := res.doc(t)
	card := doc.Find(`[data-testid="card-` + approveMe.ID + `"]`)
	if card.Length() != 1 {
		t.Fatalf("the queue does not show %s:\n%s", approveMe.ID, res.body)
	}
	for _, want := range []string{approveMe.Quote.Title, f.cust.Email, "writes left", "Decide within"} {
		if !strings.Contains(card.Text(), want) {
			t.Errorf("card lacks %q", want)
		}
	}
	if n := doc.Find(`[data-testid="nav-count"]`).Text(); !strings.HasPrefix(n, "3") {
		t.Errorf("header badge = %q, want 3 pending", n)
	}

	// Opening a card claims it; a decision without the CSRF token is refused.
	open := c.post("/queue/"+approveMe.ID+"/claim", url.Values{"_csrf": {c.csrf("/queue")}})
	if open.StatusCode != http.StatusSeeOther || open.Header.Get("Location") != "/queue/"+approveMe.ID {
		t.Fatalf("claim: %d → %s", open.StatusCode, open.Header.Get("Location"))
	}
	page := c.get("/queue/" + approveMe.ID)
	form := cardForm(t, page, "approve-form")
	noCSRF := url.Values{"expected_version": {form.Get("expected_version")}, "args_hash": {form.Get("args_hash")}}
	if res := c.post("/queue/"+approveMe.ID+"/approve", noCSRF); res.StatusCode != http.StatusForbidden {
		t.Fatalf("approve without CSRF: %d, want 403", res.StatusCode)
	}
	if res := c.post("/queue/"+approveMe.ID+"/approve", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d\n%s", res.StatusCode, res.body)
	}
	if got := b.invocation(t, approveMe.ID).State; got != controlplane.Approved {
		t.Fatalf("after approve: %s", got)
	}

	// Reject with a preset reason; "Other" with no words is a 422 that keeps the page.
	form = cardForm(t, c.get("/queue/"+rejectMe.ID), "reject-form")
	form.Set("reason", "other")
	if res := c.post("/queue/"+rejectMe.ID+"/reject", form); res.StatusCode != http.StatusUnprocessableEntity ||
		res.doc(t).Find(`[data-testid="reason-error"]`).Length() != 1 {
		t.Fatalf("reject with no words: %d", res.StatusCode)
	}
	form.Set("reason", "This order does not qualify for a refund under our policy.")
	if res := c.post("/queue/"+rejectMe.ID+"/reject", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reject: %d\n%s", res.StatusCode, res.body)
	}
	if got := b.invocation(t, rejectMe.ID); got.State != controlplane.Rejected || got.DecisionReason != "This order does not qualify for a refund under our policy." {
		t.Fatalf("after reject: %s %q", got.State, got.DecisionReason)
	}

	// Send back with a question.
	form = cardForm(t, c.get("/queue/"+askMe.ID), "send-back-form")
	form.Set("question", "Which item arrived damaged?")
	if res := c.post("/queue/"+askMe.ID+"/send-back", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("send back: %d\n%s", res.StatusCode, res.body)
	}
	if got := b.invocation(t, askMe.ID); got.State != controlplane.Rejected || got.DecisionReason != "question: Which item arrived damaged?" {
		t.Fatalf("after send back: %s %q", got.State, got.DecisionReason)
	}

	// With htmx, a refused decision comes back as the panel with the refusal
	// in words (htmx swaps no error response).
	stale := cardForm(t, page, "approve-form")
	c.header.Set("HX-Request", "true")
	refused := c.post("/queue/"+approveMe.ID+"/approve", stale)
	c.header.Del("HX-Request")
	if out := refused.doc(t).Find(`[data-testid="outcome"].bad`); refused.StatusCode != http.StatusOK || !strings.Contains(out.Text(), "changed since you read it") {
		t.Fatalf("htmx approve of a decided card: %d %q", refused.StatusCode, out.Text())
	}

	// A decided card says so and offers no decision.
	if res := c.get("/queue/" + askMe.ID); res.doc(t).Find(`[data-testid="decided"]`).Length() != 1 {
		t.Errorf("a decided card still offers decisions")
	}
	// Customers may not open the queue.
	cust := b.client(t)
	cust.mustSignIn(b.users[accounts.Customer])
	if res := cust.get("/queue"); res.StatusCode != http.StatusForbidden {
		t.Errorf("customer GET /queue: %d, want 403", res.StatusCode)
	}
	if res := cust.post("/queue/"+rejectMe.ID+"/approve", url.Values{"_csrf": {cust.csrf("/")}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("customer approve: %d, want 403", res.StatusCode)
	}
}

func TestQueueEditRequotesShowsDiffAndApprovalBindsTheEditedHash(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop())
	f := newConsoleFixture(t, b)
	inv := f.refund(t, f.order, 4200)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])

	page := c.get("/queue/" + inv.ID)
	stale := cardForm(t, page, "approve-form")
	edit := cardForm(t, page, "edit-form")
	if sel := page.doc(t).Find(`select[name="arg.reason_code"]`); sel.Length() != 1 {
		t.Fatalf("the edit form has no select for the enum reason_code")
	}
	// Agents work in money: the amount field takes "42.00" in the task's
	// currency, labelled in words, never "Amount cents".
	amount := page.doc(t).Find(`input[inputmode="decimal"][name="arg.amount_cents"]`)
	if amount.Length() != 1 || amount.AttrOr("value", "") != "42.00" {
		t.Fatalf("the edit form has no money input holding 42.00 for the amount (found %d, value %q)", amount.Length(), amount.AttrOr("value", ""))
	}
	if label := page.doc(t).Find(`label[for="` + amount.AttrOr("id", "") + `"]`).Text(); label != "Amount (USD)" {
		t.Errorf("amount label %q, want \"Amount (USD)\"", label)
	}
	if text := page.doc(t).Find("main").Text(); strings.Contains(text, "Amount cents") || strings.Contains(text, "amount_cents") ||
		strings.Contains(text, "in cents") {
		t.Error("the card speaks of cents or shows the field's code name")
	}
	edit.Set("arg.order_id", f.order.ID)
	edit.Set("arg.reason_code", "damaged")
	for _, bad := range []string{"abc", "8.001", "800 cents"} {
		edit.Set("arg.amount_cents", bad)
		res := c.post("/queue/"+inv.ID+"/edit", edit)
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "write an amount like 34.50") {
			t.Fatalf("edit with amount %q: %d, want 422 naming the format", bad, res.StatusCode)
		}
	}
	edit.Set("arg.amount_cents", "$8.00")
	if res := c.post("/queue/"+inv.ID+"/edit", edit); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit: %d\n%s", res.StatusCode, res.body)
	}
	page = c.get("/queue/" + inv.ID)
	doc := page.doc(t)
	diff := doc.Find(`[data-testid="diff"]`)
	if diff.Length() != 1 || !strings.Contains(diff.Text(), "Amount") || !strings.Contains(diff.Find(`[data-testid="new-quote"]`).Text(), "$8.00") {
		t.Fatalf("no diff with the new quote after an edit:\n%s", diff.Text())
	}
	// The approval the page showed before the edit names the old hash: refused.
	if res := c.post("/queue/"+inv.ID+"/approve", stale); res.StatusCode != http.StatusConflict {
		t.Fatalf("approving the pre-edit arguments: %d, want 409", res.StatusCode)
	}
	fresh := cardForm(t, page, "approve-form")
	if res := c.post("/queue/"+inv.ID+"/approve", fresh); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve the edit: %d\n%s", res.StatusCode, res.body)
	}
	got := b.invocation(t, inv.ID)
	var approved, proposed map[string]any
	_ = json.Unmarshal(got.Args.Approved, &approved)
	_ = json.Unmarshal(got.Args.Proposed, &proposed)
	if got.State != controlplane.Approved || approved["amount_cents"] != float64(800) || proposed["amount_cents"] != float64(4200) {
		t.Fatalf("approved %s with %s (proposed %s)", got.State, got.Args.Approved, got.Args.Proposed)
	}
}

func TestQueueTwoAgentsOneCardOneDecision(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop())
	f := newConsoleFixture(t, b)
	inv := f.refund(t, f.order, 1200)
	second := b.createUser(t, accounts.Agent)
	c1, c2 := b.client(t), b.client(t)
	c1.mustSignIn(b.users[accounts.Agent])
	c2.mustSignIn(second)

	if res := c1.post("/queue/"+inv.ID+"/claim", url.Values{"_csrf": {c1.csrf("/queue")}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("claim: %d", res.StatusCode)
	}
	c2.post("/queue/"+inv.ID+"/claim", url.Values{"_csrf": {c2.csrf("/queue")}})
	page2 := c2.get("/queue/" + inv.ID)
	if holder := page2.doc(t).Find(`[data-testid="holder"]`).Text(); !strings.Contains(holder, b.users[accounts.Agent].Name) {
		t.Fatalf("the second agent is not told who holds the card: %q", holder)
	}
	form1 := cardForm(t, c1.get("/queue/"+inv.ID), "approve-form")
	form2 := cardForm(t, page2, "reject-form")
	form2.Set("reason", "It repeats an earlier request.")

	results := make(chan response, 2)
	go func() { results <- c1.post("/queue/"+inv.ID+"/approve", form1) }()
	go func() { results <- c2.post("/queue/"+inv.ID+"/reject", form2) }()
	a, z := <-results, <-results
	ok, conflict := 0, 0
	for _, r := range []response{a, z} {
		switch r.StatusCode {
		case http.StatusSeeOther:
			ok++
		case http.StatusConflict:
			conflict++
			if !strings.Contains(r.body, "changed since you read it") && !strings.Contains(r.body, "Cannot") {
				t.Errorf("the loser is not told what happened:\n%s", r.body)
			}
		}
	}
	if ok != 1 || conflict != 1 {
		t.Fatalf("two decisions: %d succeeded, %d conflicted (want 1 and 1)", ok, conflict)
	}
	n, err := b.store.CountEvents(context.Background(), "invocation.approved", &f.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := b.store.CountEvents(context.Background(), "invocation.rejected", &f.task.ID)
	if n+m != 1 {
		t.Fatalf("%d approvals and %d rejections recorded, want one decision", n, m)
	}
}

func TestQueueKeysetPagesAndFilters(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop())
	f := newConsoleFixture(t, b)
	ids := map[string]bool{}
	for i := 0; i < 27; i++ {
		inv := f.refund(t, f.newOrder(t), int64(100+i))
		ids[inv.ID] = true
		b.clock.Advance(time.Second) // distinct deadlines
	}
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Manager])
	seen := map[string]bool{}
	path, pages := "/queue", 0
	for path != "" {
		res := c.get(path)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, res.StatusCode)
		}
		doc := res.doc(t)
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
	res := c.get("/queue?min=1.10&max=1.12")
	if n := res.doc(t).Find(`[data-card]`).Length(); n != 3 {
		t.Fatalf("amount filter $1.10–$1.12: %d cards, want 3", n)
	}
	if res := c.get("/queue?min=lots"); res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a bad amount: %d, want 422", res.StatusCode)
	}
	if n := c.get("/queue?mine=1").doc(t).Find(`[data-card]`).Length(); n != 0 {
		t.Fatalf("held by me before opening any: %d cards", n)
	}
}
