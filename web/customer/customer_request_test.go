package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// jordan is the seeded shop's demo customer.
const jordan = "customer@demo.countersign.test"

var jordanAddress = map[string]any{"name": "Jordan Lee", "line1": "1 Harbour Way", "city": "Oakland", "postal_code": "94607", "country": "US"}

// customerActions are the actions put on stage 4 in these tests.
var customerActions = []string{"cancel_subscription", "reinstate_subscription", "issue_refund", "resend_receipt",
	"update_product_description", "change_shipping_address"}

// stageForCustomer has the bundle's manager put actions of the shop on
// stage 4 (the customer confirms) with a 30-minute confirmation window, as
// on the policies page; an action there already is left alone.
func (b *testBundle) stageForCustomer(t *testing.T, actions ...string) {
	t.Helper()
	ctx := context.Background()
	m := b.users[accounts.Manager]
	manager := controlplane.UserActor(m.ID, string(accounts.Manager), m.Name)
	for _, a := range actions {
		p, err := b.cp.Policy(ctx, "shop", a)
		if err != nil {
			t.Fatal(err)
		}
		if p.Stage == controlplane.StageAssisted && p.ConfirmationWindow == 30*time.Minute {
			continue
		}
		p.Stage, p.ConfirmationWindow = controlplane.StageAssisted, 30*time.Minute
		if _, err := b.cp.ChangePolicy(ctx, manager, p, p.Version, "customers confirm in this test"); err != nil {
			t.Fatal(err)
		}
	}
}

func (b *testBundle) customerTask(t *testing.T, customerRef string) controlplane.Task {
	t.Helper()
	task, err := b.cp.CreateTask(context.Background(), controlplane.AssistantActor("asst_test", "Test assistant"), controlplane.NewTask{
		CustomerRef: customerRef, ConversationID: fmt.Sprintf("conv-%d", time.Now().UnixNano()), AllowedActions: customerActions,
		WriteBudget: 10, InflightLimit: 2, RatePerMinute: 100, ExpiresAt: b.clock.Now().Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func (b *testBundle) proposeFor(t *testing.T, task controlplane.Task, action string, args map[string]any, summary string) controlplane.Invocation {
	t.Helper()
	raw, _ := json.Marshal(args)
	inv, err := b.cp.Propose(context.Background(), controlplane.Proposal{TaskID: task.ID, System: "shop", Action: action, Args: raw,
		Summary: summary, Actor: controlplane.AssistantActor("asst_test", "Test assistant")})
	if err != nil {
		t.Fatalf("propose %s: %v", action, err)
	}
	if inv.State != controlplane.AwaitingConfirmation {
		t.Fatalf("propose %s: %s, want awaiting confirmation", action, inv.State)
	}
	return inv
}

func (b *testBundle) link(t *testing.T, inv controlplane.Invocation, customerRef string) string {
	t.Helper()
	path, err := b.links.Link(context.Background(), inv, customerRef)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// pendingRefund proposes a $42.10 refund of Jordan's damaged walnut lamp
// and returns it with its link.
func (b *testBundle) pendingRefund(t *testing.T) (controlplane.Invocation, string) {
	t.Helper()
	inv := b.proposeFor(t, b.customerTask(t, jordan), "issue_refund",
		map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}, "Refund $42.10 for the lamp.")
	return inv, b.link(t, inv, jordan)
}

func (b *testBundle) inv(t *testing.T, id string) controlplane.Invocation {
	t.Helper()
	inv, err := b.cp.Invocation(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// shopEffects returns the shop's ledger, optionally for one request id.
func (b *testBundle) shopEffects(t *testing.T, requestID string) []demoshop.LedgerEntry {
	t.Helper()
	u := b.shopURL + "/_ledger"
	if requestID != "" {
		u += "?request_id=" + url.QueryEscape(requestID)
	}
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer "+b.shop.Token())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out []demoshop.LedgerEntry
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// open follows a confirmation link, proves the customer with the code
// e-mailed to the contact on file, and returns the request page it leads to.
func (c *client) open(link string) response {
	c.t.Helper()
	res := c.get(link)
	if res.StatusCode != http.StatusOK || res.doc(c.t).Find(`[data-testid="send-code-form"]`).Length() != 1 {
		c.t.Fatalf("open %s: %d without the form to send a code\n%s", link, res.StatusCode, res.body)
	}
	return c.prove(link, c.sendCode(link, res))
}

// sendCode asks the link page for a code and returns it, read from the mail
// sent to the customer's contact on file.
func (c *client) sendCode(link string, page response) string {
	c.t.Helper()
	tok, _ := page.doc(c.t).Find(`[data-testid="send-code-form"] input[name="_csrf"]`).Attr("value")
	before := len(c.b.mail.Sent())
	if res := c.post(link+"/code", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("send code: %d, want 303\n%s", res.StatusCode, res.body)
	}
	sent := c.b.mail.Sent()
	if len(sent) != before+1 {
		c.t.Fatalf("%d mails sent, want 1", len(sent)-before)
	}
	code := codeIn.FindString(sent[len(sent)-1].Body)
	if code == "" {
		c.t.Fatalf("no code in the mail:\n%s", sent[len(sent)-1].Body)
	}
	return code
}

var codeIn = regexp.MustCompile(`\b\d{6}\b`)

// prove enters code on the link page and follows it to the request page.
func (c *client) prove(link, code string) response {
	c.t.Helper()
	res := c.tryCode(link, code)
	to := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(to, "/requests/") {
		c.t.Fatalf("verify code: %d to %q, want 303 to the request\n%s", res.StatusCode, to, res.body)
	}
	return c.get(to)
}

// tryCode posts code on the link page's code form.
func (c *client) tryCode(link, code string) response {
	c.t.Helper()
	page := c.get(link)
	tok, _ := page.doc(c.t).Find(`[data-testid="code-form"] input[name="_csrf"]`).Attr("value")
	if tok == "" {
		c.t.Fatalf("no code form on %s (status %d)\n%s", link, page.StatusCode, page.body)
	}
	return c.post(link+"/verify", url.Values{"_csrf": {tok}, "code": {code}})
}

func (c *client) pageCSRF(res response) string {
	c.t.Helper()
	tok, _ := res.doc(c.t).Find(`[data-testid="request"] input[name="_csrf"]`).Attr("value")
	if tok == "" {
		c.t.Fatalf("no CSRF token on the request page (status %d)", res.StatusCode)
	}
	return tok
}

func text(res response, t *testing.T, testid string) string {
	t.Helper()
	return strings.TrimSpace(res.doc(t).Find(`[data-testid="` + testid + `"]`).First().Text())
}

// TestCustomerPageShowsTheQuoteOfEveryAction opens a link for each action
// type and checks the page shows the stored quote, exactly: title as a
// question, from→to lines, consequences, buttons named by what they do,
// the deadline, and nothing of the model's summary or the shop's ids.
func TestCustomerPageShowsTheQuoteOfEveryAction(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		customer string
		action   string
		args     map[string]any
	}{
		{"cancel", jordan, "cancel_subscription", map[string]any{"subscription_id": "Pro plan for acme.example", "reason_code": "too_expensive", "effective": "end_of_period"}},
		{"reinstate", "hannah.weiss@example.de", "reinstate_subscription", map[string]any{"subscription_id": "my Pro plan"}},
		{"refund", jordan, "issue_refund", map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}},
		{"resend receipt", jordan, "resend_receipt", map[string]any{"invoice_id": "paid Pro invoice"}},
		{"product description", jordan, "update_product_description", map[string]any{"product_id": "LAMP-WAL-01", "description": "Solid walnut base, linen shade."}},
		{"shipping address", jordan, "change_shipping_address", map[string]any{"order_id": "standing desk mat", "address": jordanAddress}},
	}
	b := setup(t, withShop(), withCustomerStage())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const summary = "I will refund $999 to your card right away."
			inv := b.proposeFor(t, b.customerTask(t, tc.customer), tc.action, tc.args, summary)
			res := b.client(t).open(b.link(t, inv, tc.customer))
			if res.StatusCode != http.StatusOK {
				t.Fatalf("request page: %d\n%s", res.StatusCode, res.body)
			}
			q, doc := inv.Quote, res.doc(t)
			want := q.Title
			if q.Customer != nil && q.Customer.Title != "" {
				want = q.Customer.Title
			}
			if got, want := text(res, t, "request-title"), strings.TrimSuffix(want, ".")+"?"; got != want {
				t.Errorf("title %q, want %q", got, want)
			}
			lines := doc.Find(`[data-testid="quote-line"]`)
			if lines.Length() != len(q.Lines) {
				t.Fatalf("%d quote lines, want %d", lines.Length(), len(q.Lines))
			}
			for i, l := range q.Lines {
				line := lines.Eq(i)
				// A line the adapter words for customers reads as its sentence
				// first, with the values it stands for (what is sent) under it.
				if l.Customer != "" {
					if got, to := strings.TrimSpace(line.Find(`[data-testid="line-sentence"]`).Text()), strings.TrimSpace(line.Find(`[data-testid="line-values"] [data-testid="line-to"]`).Text()); got != l.Customer || to != l.To {
						t.Errorf("line %d: %q with the value %q, want the sentence %q and the value %q", i, got, to, l.Customer, l.To)
					}
					continue
				}
				from := strings.TrimSpace(line.Find(`[data-testid="line-from"]`).Text())
				if label, to := strings.TrimSpace(line.Find(`[data-testid="line-label"]`).Text()), strings.TrimSpace(line.Find(`[data-testid="line-to"]`).Text()); label != l.Label || to != l.To || from != l.From {
					t.Errorf("line %d: %q %q→%q, want %q %q→%q", i, label, from, to, l.Label, l.From, l.To)
				}
			}
			cons := doc.Find(`[data-testid="consequence"]`)
			if cons.Length() != len(q.Consequences) || len(q.Consequences) == 0 {
				t.Fatalf("%d consequences, want %d", cons.Length(), len(q.Consequences))
			}
			for i, c := range q.Consequences {
				if got := strings.TrimSpace(cons.Eq(i).Text()); got != c {
					t.Errorf("consequence %d: %q, want %q", i, got, c)
				}
			}
			if got := text(res, t, "confirm"); got != q.ConfirmLabel {
				t.Errorf("confirm button %q, want %q", got, q.ConfirmLabel)
			}
			if got := text(res, t, "decline"); got != q.DeclineLabel {
				t.Errorf("decline button %q, want %q", got, q.DeclineLabel)
			}
			if text(res, t, "deadline") == "" {
				t.Error("no deadline shown")
			}
			if q.EffectiveAt != nil && text(res, t, "effective") == "" {
				t.Error("no effective date shown")
			}
			if q.AmountCents != nil && text(res, t, "amount") == "" && !strings.Contains(doc.Find(`.quote-lines .emphasis`).Text(), "$") {
				t.Error("no amount shown")
			}
			page := doc.Find("main").Text()
			// The shop's ids never show: a customer knows an order by its
			// number, date and items.
			leaks := []string{summary, "risk", "margin", "internal", "processor", inv.IdempotencyKey, inv.TaskID, q.Target.ID}
			for _, leak := range leaks {
				if strings.Contains(page, leak) {
					t.Errorf("the page shows %q", leak)
				}
			}
		})
	}
}

// TestConfirmationLinkMisuse checks each way a link can be wrong gets its
// own page and opens nothing, and that a customer's session reaches only
// its own customer's requests.
func TestConfirmationLinkMisuse(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withCustomerStage())
	// The subtests leave their refunds of one order pending; exposure would
	// send the fifth to an agent. Links, not thresholds, are tested here.
	if _, err := b.store.Pool().Exec(context.Background(), `UPDATE policies SET approval_above_cents = NULL WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	problem := func(t *testing.T, res response, want string, status int) {
		t.Helper()
		got, _ := res.doc(t).Find(`[data-testid="link-problem"]`).Attr("data-problem")
		if got != want || res.StatusCode != status {
			t.Errorf("got problem %q (status %d), want %q (%d)\n%s", got, res.StatusCode, want, status, res.body)
		}
		if res.doc(t).Find(`[data-testid="request"]`).Length() != 0 {
			t.Error("a bad link showed a request")
		}
	}

	t.Run("expired", func(t *testing.T) {
		b := setup(t, withShop(), withCustomerStage())
		_, link := b.pendingRefund(t)
		b.clock.Advance(31 * time.Minute)
		problem(t, b.client(t).get(link), "expired", http.StatusGone)
	})
	t.Run("tampered", func(t *testing.T) {
		_, link := b.pendingRefund(t)
		last := link[len(link)-1]
		flipped := byte('A')
		if last == 'A' {
			flipped = 'B'
		}
		problem(t, b.client(t).get(link[:len(link)-1]+string(flipped)), "tampered", http.StatusBadRequest)
		problem(t, b.client(t).get(link[:len(link)-10]), "tampered", http.StatusBadRequest)
		// Neither attempt used it.
		b.client(t).open(link)
	})
	t.Run("unknown", func(t *testing.T) {
		_, link := b.pendingRefund(t)
		sel, ver, _ := strings.Cut(strings.TrimPrefix(link, "/c/"), ".")
		other := "/c/" + strings.Repeat("x", len(sel)) + "." + ver
		problem(t, b.client(t).get(other), "unknown", http.StatusNotFound)
	})
	t.Run("replaced", func(t *testing.T) {
		inv, link := b.pendingRefund(t)
		fresh, err := b.links.Rotate(context.Background(), inv, jordan)
		if err != nil {
			t.Fatal(err)
		}
		problem(t, b.client(t).get(link), "replaced", http.StatusGone)
		b.client(t).open(fresh)
	})
	t.Run("staff account", func(t *testing.T) {
		_, link := b.pendingRefund(t)
		c := b.client(t)
		c.mustSignIn(b.users[accounts.Agent])
		problem(t, c.get(link), "foreign", http.StatusForbidden)
		// Refusing it did not use it: Jordan can still open it.
		b.client(t).open(link)
	})
	t.Run("another invocation's", func(t *testing.T) {
		_, link := b.pendingRefund(t)
		theirs := b.proposeFor(t, b.customerTask(t, "hannah.weiss@example.de"), "reinstate_subscription",
			map[string]any{"subscription_id": "my Pro plan"}, "")
		c := b.client(t)
		res := c.open(link)
		tok := c.pageCSRF(res)
		for _, path := range []string{"/requests/" + theirs.ID, "/requests/" + theirs.ID + "/status"} {
			if res := c.get(path); res.StatusCode != http.StatusNotFound || strings.Contains(res.body, theirs.Quote.Title) {
				t.Errorf("GET %s with Jordan's session: %d, want 404 without their data", path, res.StatusCode)
			}
		}
		for _, path := range []string{"/requests/" + theirs.ID + "/confirm", "/requests/" + theirs.ID + "/decline"} {
			if res := c.post(path, url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusNotFound {
				t.Errorf("POST %s with Jordan's session: %d, want 404", path, res.StatusCode)
			}
		}
		if got := b.inv(t, theirs.ID).State; got != controlplane.AwaitingConfirmation {
			t.Errorf("their request is %s, want still awaiting confirmation", got)
		}
	})
	t.Run("no session", func(t *testing.T) {
		inv, _ := b.pendingRefund(t)
		if res := b.client(t).get("/requests/" + inv.ID); res.StatusCode != http.StatusUnauthorized || strings.Contains(res.body, inv.Quote.Title) {
			t.Errorf("GET without a customer session: %d, want 401 without the request", res.StatusCode)
		}
	})
}

// TestMyRequestsListsOnlyTheCustomersOwn signs in a customer account whose
// e-mail is the customer reference and lists their requests.
func TestMyRequestsListsOnlyTheCustomersOwn(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withCustomerStage())
	mine, _ := b.pendingRefund(t)
	theirs := b.proposeFor(t, b.customerTask(t, "hannah.weiss@example.de"), "reinstate_subscription",
		map[string]any{"subscription_id": "my Pro plan"}, "")
	u, err := b.accounts.Create(context.Background(), accounts.NewUser{Email: jordan, Name: "Jordan Lee", Role: accounts.Customer, Password: "correct horse jordan"})
	if err != nil {
		t.Fatal(err)
	}
	c := b.client(t)
	c.mustSignIn(testUser{User: u, Password: "correct horse jordan"})
	if href, _ := c.get("/").doc(t).Find(`nav a[href="/requests"]`).Attr("href"); href != "/requests" {
		t.Error("the customer's navigation has no link to My requests")
	}
	res := c.get("/requests")
	var ids []string
	res.doc(t).Find(`[data-testid="request-link"]`).Each(func(_ int, s *goquery.Selection) {
		href, _ := s.Attr("href")
		ids = append(ids, strings.TrimPrefix(href, "/requests/"))
	})
	if len(ids) != 1 || ids[0] != mine.ID {
		t.Errorf("My requests lists %v, want only %s (not %s)", ids, mine.ID, theirs.ID)
	}
	if res := c.get("/requests/" + mine.ID); res.StatusCode != http.StatusOK || c.pageCSRF(res) == "" {
		t.Errorf("own request as a signed-in customer: %d", res.StatusCode)
	}
	if res := c.get("/requests/" + theirs.ID); res.StatusCode != http.StatusNotFound {
		t.Errorf("another customer's request: %d, want 404", res.StatusCode)
	}
}
