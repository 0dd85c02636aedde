package customer_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
)

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
		{"cancel", webtest.Jordan, "cancel_subscription", map[string]any{"subscription_id": "Pro plan for acme.example", "reason_code": "too_expensive", "effective": "end_of_period"}},
		{"reinstate", "hannah.weiss@example.de", "reinstate_subscription", map[string]any{"subscription_id": "my Pro plan"}},
		{"refund", webtest.Jordan, "issue_refund", map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}},
		{"resend receipt", webtest.Jordan, "resend_receipt", map[string]any{"invoice_id": "paid Pro invoice"}},
		{"product description", webtest.Jordan, "update_product_description", map[string]any{"product_id": "LAMP-WAL-01", "description": "Solid walnut base, linen shade."}},
		{"shipping address", webtest.Jordan, "change_shipping_address", map[string]any{"order_id": "standing desk mat", "address": webtest.JordanAddress}},
	}
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const summary = "I will refund $999 to your card right away."
			inv := b.ProposeFor(t, b.CustomerTask(t, tc.customer), tc.action, tc.args, summary)
			res := b.Client(t).Open(b.Link(t, inv, tc.customer))
			if res.StatusCode != http.StatusOK {
				t.Fatalf("request page: %d\n%s", res.StatusCode, res.Text)
			}
			q, doc := inv.Quote, res.Doc(t)
			want := q.Title
			if q.Customer != nil && q.Customer.Title != "" {
				want = q.Customer.Title
			}
			if got, want := webtest.TextByTestID(res, t, "request-title"), strings.TrimSuffix(want, ".")+"?"; got != want {
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
			if got := webtest.TextByTestID(res, t, "confirm"); got != q.ConfirmLabel {
				t.Errorf("confirm button %q, want %q", got, q.ConfirmLabel)
			}
			if got := webtest.TextByTestID(res, t, "decline"); got != q.DeclineLabel {
				t.Errorf("decline button %q, want %q", got, q.DeclineLabel)
			}
			if webtest.TextByTestID(res, t, "deadline") == "" {
				t.Error("no deadline shown")
			}
			if q.EffectiveAt != nil && webtest.TextByTestID(res, t, "effective") == "" {
				t.Error("no effective date shown")
			}
			if q.AmountCents != nil && webtest.TextByTestID(res, t, "amount") == "" && !strings.Contains(doc.Find(`.quote-lines .emphasis`).Text(), "$") {
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
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	// The subtests leave their refunds of one order pending; exposure would
	// send the fifth to an agent. Links, not thresholds, are tested here.
	if _, err := b.Store.Pool().Exec(context.Background(), `UPDATE policies SET approval_above_cents = NULL WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	problem := func(t *testing.T, res webtest.Response, want string, status int) {
		t.Helper()
		got, _ := res.Doc(t).Find(`[data-testid="link-problem"]`).Attr("data-problem")
		if got != want || res.StatusCode != status {
			t.Errorf("got problem %q (status %d), want %q (%d)\n%s", got, res.StatusCode, want, status, res.Text)
		}
		if res.Doc(t).Find(`[data-testid="request"]`).Length() != 0 {
			t.Error("a bad link showed a request")
		}
	}

	t.Run("expired", func(t *testing.T) {
		b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
		_, link := b.PendingRefund(t)
		b.Clock.Advance(31 * time.Minute)
		problem(t, b.Client(t).Get(link), "expired", http.StatusGone)
	})
	t.Run("tampered", func(t *testing.T) {
		_, link := b.PendingRefund(t)
		last := link[len(link)-1]
		flipped := byte('A')
		if last == 'A' {
			flipped = 'B'
		}
		problem(t, b.Client(t).Get(link[:len(link)-1]+string(flipped)), "tampered", http.StatusBadRequest)
		problem(t, b.Client(t).Get(link[:len(link)-10]), "tampered", http.StatusBadRequest)
		// Neither attempt used it.
		b.Client(t).Open(link)
	})
	t.Run("unknown", func(t *testing.T) {
		_, link := b.PendingRefund(t)
		sel, ver, _ := strings.Cut(strings.TrimPrefix(link, "/c/"), ".")
		other := "/c/" + strings.Repeat("x", len(sel)) + "." + ver
		problem(t, b.Client(t).Get(other), "unknown", http.StatusNotFound)
	})
	t.Run("replaced", func(t *testing.T) {
		inv, link := b.PendingRefund(t)
		fresh, err := b.Links.Rotate(context.Background(), inv, webtest.Jordan)
		if err != nil {
			t.Fatal(err)
		}
		problem(t, b.Client(t).Get(link), "replaced", http.StatusGone)
		b.Client(t).Open(fresh)
	})
	t.Run("staff account", func(t *testing.T) {
		_, link := b.PendingRefund(t)
		c := b.Client(t)
		c.MustSignIn(b.Users[accounts.Agent])
		problem(t, c.Get(link), "foreign", http.StatusForbidden)
		// Refusing it did not use it: Jordan can still open it.
		b.Client(t).Open(link)
	})
	t.Run("another invocation's", func(t *testing.T) {
		_, link := b.PendingRefund(t)
		theirs := b.ProposeFor(t, b.CustomerTask(t, "hannah.weiss@example.de"), "reinstate_subscription",
			map[string]any{"subscription_id": "my Pro plan"}, "")
		c := b.Client(t)
		res := c.Open(link)
		tok := c.PageCSRF(res)
		for _, path := range []string{"/requests/" + theirs.ID, "/requests/" + theirs.ID + "/status"} {
			if res := c.Get(path); res.StatusCode != http.StatusNotFound || strings.Contains(res.Text, theirs.Quote.Title) {
				t.Errorf("GET %s with Jordan's session: %d, want 404 without their data", path, res.StatusCode)
			}
		}
		for _, path := range []string{"/requests/" + theirs.ID + "/confirm", "/requests/" + theirs.ID + "/decline"} {
			if res := c.Post(path, url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusNotFound {
				t.Errorf("POST %s with Jordan's session: %d, want 404", path, res.StatusCode)
			}
		}
		if got := b.Invocation(t, theirs.ID).State; got != controlplane.AwaitingConfirmation {
			t.Errorf("their request is %s, want still awaiting confirmation", got)
		}
	})
	t.Run("no session", func(t *testing.T) {
		inv, _ := b.PendingRefund(t)
		if res := b.Client(t).Get("/requests/" + inv.ID); res.StatusCode != http.StatusUnauthorized || strings.Contains(res.Text, inv.Quote.Title) {
			t.Errorf("GET without a customer session: %d, want 401 without the request", res.StatusCode)
		}
	})
}

// TestMyRequestsListsOnlyTheCustomersOwn signs in a customer account whose
// e-mail is the customer reference and lists their requests.
func TestMyRequestsListsOnlyTheCustomersOwn(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	mine, _ := b.PendingRefund(t)
	theirs := b.ProposeFor(t, b.CustomerTask(t, "hannah.weiss@example.de"), "reinstate_subscription",
		map[string]any{"subscription_id": "my Pro plan"}, "")
	u, err := b.Accounts.Create(context.Background(), accounts.NewUser{Email: webtest.Jordan, Name: "Jordan Lee", Role: accounts.Customer, Password: "correct horse jordan"})
	if err != nil {
		t.Fatal(err)
	}
	c := b.Client(t)
	c.MustSignIn(webtest.User{User: u, Password: "correct horse jordan"})
	if href, _ := c.Get("/").Doc(t).Find(`nav a[href="/requests"]`).Attr("href"); href != "/requests" {
		t.Error("the customer's navigation has no link to My requests")
	}
	res := c.Get("/requests")
	var ids []string
	res.Doc(t).Find(`[data-testid="request-link"]`).Each(func(_ int, s *goquery.Selection) {
		href, _ := s.Attr("href")
		ids = append(ids, strings.TrimPrefix(href, "/requests/"))
	})
	if len(ids) != 1 || ids[0] != mine.ID {
		t.Errorf("My requests lists %v, want only %s (not %s)", ids, mine.ID, theirs.ID)
	}
	if res := c.Get("/requests/" + mine.ID); res.StatusCode != http.StatusOK || c.PageCSRF(res) == "" {
		t.Errorf("own request as a signed-in customer: %d", res.StatusCode)
	}
	if res := c.Get("/requests/" + theirs.ID); res.StatusCode != http.StatusNotFound {
		t.Errorf("another customer's request: %d, want 404", res.StatusCode)
	}
}
