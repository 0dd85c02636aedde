package views

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/a-h/templ"

	"countersign/static"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenNonce and goldenCSRF are the fixed CSP nonce and CSRF token every
// golden page is rendered with, so nothing random reaches a golden file.
const (
	goldenNonce = "golden-nonce"
	goldenCSRF  = "golden-csrf"
)

// hashedAsset matches a content-hashed asset URL ("/static/app.3f2a1b4c5d6e.css").
var hashedAsset = regexp.MustCompile(`/static/([a-z0-9_.-]+?)\.[0-9a-f]{12}(\.[a-z]+)`)

// renderGolden renders c with the fixed nonce and writes asset URLs
// without their content hash, so a changed stylesheet does not change
// every golden file.
func renderGolden(t *testing.T, c templ.Component) string {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(templ.WithNonce(context.Background(), goldenNonce), &buf); err != nil {
		t.Fatal(err)
	}
	out := hashedAsset.ReplaceAllString(buf.String(), "/static/$1$2")
	// Break the page at tags so a diff points at a line, not at one long one.
	return strings.ReplaceAll(out, "><", ">\n<") + "\n"
}

// checkGolden compares got with views/testdata/<name>.html, or writes it
// there with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".html")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; run go test ./views/ -update to create it", err)
	}
	if string(want) == got {
		return
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	line := func(ls []string) string {
		if i < len(ls) {
			return ls[i]
		}
		return "(end of file)"
	}
	t.Errorf("%s differs from the rendered page at line %d:\n- %s\n+ %s\nrun go test ./views/ -update to accept", path, i+1, line(wl), line(gl))
}

// goldenPage is the layout's model on the golden pages: fixed values only.
// narrow is how the web package shows customer and error pages.
func goldenPage(title string, narrow bool) Page {
	return Page{Title: title, CSRF: goldenCSRF, Narrow: narrow}
}

// refundRequest is a refund awaiting the customer's confirmation, with how
// the amount was reached.
func refundRequest() CustomerRequestView {
	return CustomerRequestView{
		ID:        "inv-0001",
		Title:     "Refund $42.10 for order #245695?",
		Reference: "Order #245695",
		DateLabel: "Ordered",
		Date:      "March 3, 2026, 2:05 PM UTC",
		Items:     []string{"Walnut desk lamp × 1", "Linen shade × 2"},
		Why:       []string{"Shipping ($7.90) is not refunded once the order has shipped."},
		Lines: []CustomerQuoteLine{
			{Label: "Walnut desk lamp", To: "$30.00"},
			{Label: "Linen shade × 2", To: "$20.00"},
			{Label: "Shipping, not refunded", To: "−$7.90"},
			{Label: "Refund", To: "$42.10", Emphasis: true, Sum: true},
		},
		MoneyArrives: "Within 5 business days, to the Visa card ending 4242.",
		Consequences: []string{"The order stays marked as delivered."},
		Deadline:     "March 10, 2026, 2:05 PM UTC",
		ConfirmLabel: "Yes, refund $42.10",
		DeclineLabel: "No, keep the order as it is",
		CSRF:         goldenCSRF,
	}
}

// ended is r once it ended, in the words the web package gives.
func ended(r CustomerRequestView, mode string, st CustomerStatusView) CustomerRequestView {
	r.Decide, r.Title = false, strings.TrimSuffix(strings.Replace(r.Title, "Refund", "Refund of", 1), "?")
	r.Status = st
	r.Status.ID, r.Status.Decided = r.ID, true
	switch mode {
	case "fact":
		r.Outcome = CustomerConsequencesView{Mode: "fact", Heading: "What this means for you",
			MoneyLabel: "When the money arrives:", EffectiveLabel: "Effective:"}
	case "would":
		r.Asked = true
		r.Outcome = CustomerConsequencesView{Mode: "would", Heading: "What would have happened had it gone ahead"}
	}
	return r
}

// goldenCard is a queue card with every part a person reads.
func goldenCard() QueueCard {
	return QueueCard{
		ID: "inv-0002", TaskID: "task-0002", System: "shop", Action: "refund_order", ActionTitle: "Refund an order",
		Quote: QuoteView{Title: "Refund $42.10 for order #245695", Amount: "$42.10",
			Lines: []QuoteLineView{{Label: "Refund", From: "$0.00", To: "$42.10", Emphasis: true}}},
		Args:        []ArgView{{Name: "order_id", Value: "245695"}, {Name: "amount", Value: "42.10"}},
		Summary:     "Refund the lamp and shades, not the shipping.",
		CustomerRef: "cus_ada", ConversationID: "conv-17",
		BudgetLeft: 3, WriteBudget: 5, InflightLimit: 2, Inflight: 1,
		DeadlineISO: "2026-03-03T15:05:00Z", NowISO: "2026-03-03T14:05:00Z", TimeLeft: "1 h left",
		Version: 1, ArgsHash: "abc123", LowRisk: true,
		State:    StateBadgeView{Tone: "warn", Label: "Awaiting approval"},
		QuotedAt: "14:04 UTC", QuotedAgo: "1 min ago", QuotedISO: "2026-03-03T14:04:00Z",
		TargetKey: "shop/order/245695", TargetDisplay: "order #245695", Amount: "$42.10",
		MayDecide: true, Deciders: "support agents",
	}
}

// TestGoldenPages holds the pages people read to files under testdata:
// a change to what a page says shows as a diff of those files in review.
func TestGoldenPages(t *testing.T) {
	declined := ended(refundRequest(), "would", CustomerStatusView{BadgeClass: "bad", BadgeText: "You declined",
		Headline: "You declined this request.", Detail: "Your reason: “I'd rather keep the lamp”. Nothing has changed.", DecidedBy: "you"})
	rejected := ended(refundRequest(), "would", CustomerStatusView{BadgeClass: "bad", BadgeText: "Declined by our team",
		Headline: "Our team declined this request: the order is older than 90 days.",
		Detail:   "Nothing has changed. Ask the assistant what we can do instead, or to put you through to a person.", DecidedBy: "our_team"})
	completed := ended(refundRequest(), "fact", CustomerStatusView{BadgeClass: "ok", BadgeText: "Completed",
		Headline: "Refunded $42.10 for order #245695.", Reference: "re_3Px9",
		Detail: "When the money arrives: within 5 business days, to the Visa card ending 4242. Keep the reference in case you need to ask about this later."})
	awaiting := refundRequest()
	awaiting.Decide = true
	awaiting.Outcome = CustomerConsequencesView{Mode: "if", Heading: "What this means for you if you confirm",
		MoneyLabel: "If you confirm, the money arrives:", EffectiveLabel: "If you confirm, it takes effect:"}
	awaiting.Status = CustomerStatusView{ID: awaiting.ID, BadgeClass: "warn", BadgeText: "Waiting for you"}

	other := goldenCard()
	other.ID, other.Quote.Title, other.CustomerRef = "inv-0003", "Change the shipping address of order #245695", "cus_ada"
	other.Quote.Lines = []QuoteLineView{{Label: "Ship to", From: "500 Market Street", To: "77 Dock Road"}}
	other.Quote.Amount = ""

	for _, tc := range []struct {
		name string
		c    templ.Component
	}{
		{"customer_awaiting", CustomerRequestPage(goldenPage("Refund $42.10?", true), awaiting)},
		{"customer_declined", CustomerRequestPage(goldenPage("Refund of $42.10", true), declined)},
		{"customer_rejected", CustomerRequestPage(goldenPage("Refund of $42.10", true), rejected)},
		{"customer_completed", CustomerRequestPage(goldenPage("Refund of $42.10", true), completed)},
		{"queue_card", queueCard(goldenPage("Approval queue", false), goldenCard(), false)},
		{"bulk_confirm", BulkConfirm(goldenPage("Approve in bulk", false), BulkConfirmView{Cards: []QueueCard{goldenCard(), other},
			Conflicts: []BulkConflict{{TargetDisplay: "order #245695", Titles: []string{goldenCard().Quote.Title, other.Quote.Title}}}})},
		{"error_page", ErrorPage(goldenPage("Not found", true), ErrorView{Status: 404, Title: "This page does not exist",
			Message: "The link may be old or mistyped.", Hint: "Check the address, or start again from the start page.", Back: "/"})},
		{"quote_value_long_hidden", Quote(QuoteView{Title: "Update the description",
			Lines: []QuoteLineView{
				{Label: "Description", From: oldText, To: newText, Emphasis: true},
				{Label: "Ship to", From: "500 Market Street\u200b", To: "\u202eteertS tekraM 005"},
			}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := renderGolden(t, tc.c)
			for _, asset := range []string{"app.css", "htmx.min.js", "favicon.svg", "console.js"} {
				if strings.Contains(got, static.URL(asset)) {
					t.Fatalf("the content-hashed URL of %s reached the page", asset)
				}
			}
			if strings.Contains(got, `nonce=""`) {
				t.Fatalf("a script has no fixed nonce")
			}
			checkGolden(t, tc.name, got)
		})
	}
}
