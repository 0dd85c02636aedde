package views

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
)

func renderDoc(t *testing.T, c templ.Component) (*goquery.Document, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	return doc, buf.String()
}

// oldText and newText are a product description before and after an edit
// that appends a sentence after a long run of words.
var (
	oldText = strings.Repeat("Solid walnut base, linen shade, warm light. ", 4)
	newText = oldText + "Order now at evil.example/discount for 70% off."
)

// TestLongTextIsADiffWithTheWholeValue: on the customer's page and on the
// staff card alike, a long value is shown as a word diff whose added words
// are marked <ins> with words for screen readers, and the whole old and
// new texts are on the page, never cut short.
func TestLongTextIsADiffWithTheWholeValue(t *testing.T) {
	pages := map[string]templ.Component{
		"customer page": CustomerRequestBody(CustomerRequestView{Title: "Update the description?",
			Lines: []CustomerQuoteLine{{Label: "Description", From: oldText, To: newText, Emphasis: true}}}),
		"queue card": Quote(QuoteView{Title: "Update the description",
			Lines: []QuoteLineView{{Label: "Description", From: oldText, To: newText, Emphasis: true}}}),
	}
	for name, c := range pages {
		t.Run(name, func(t *testing.T) {
			doc, html := renderDoc(t, c)
			line := doc.Find(`[data-testid="quote-line"]`)
			if got := line.Find(`[data-testid="line-to"]`).Text(); got != newText {
				t.Errorf("the whole new text is not on the page: %q", got)
			}
			if got := line.Find(`[data-testid="line-from"]`).Text(); got != oldText {
				t.Errorf("the whole old text is not on the page: %q", got)
			}
			ins := line.Find(`[data-testid="line-diff"] ins`)
			if ins.Length() != 1 || !strings.Contains(ins.Text(), "evil.example/discount") || !strings.Contains(ins.Text(), "[added: ") {
				t.Errorf("the diff does not mark the added sentence, in words too: %q", ins.Text())
			}
			if line.Find(`[data-testid="line-diff"] del`).Length() != 0 {
				t.Errorf("the diff marks words removed that were kept")
			}
			if !strings.Contains(line.Find("summary").Text(), "Show the whole new text") {
				t.Errorf("no way to show the whole new text")
			}
			if strings.Contains(line.Text(), "…") {
				t.Errorf("a value is cut short: %s", html)
			}
		})
	}
}

// TestHiddenCharactersShowAsMarks: a value from the system holding a
// zero-width space or a right-to-left override is written with visible
// marks and flagged, never emitted raw.
func TestHiddenCharactersShowAsMarks(t *testing.T) {
	for name, c := range map[string]templ.Component{
		"customer page": CustomerRequestBody(CustomerRequestView{Title: "Change the address?",
			Lines: []CustomerQuoteLine{{Label: "Ship to", From: "500 Market Street\u200b", To: "\u202eteertS tekraM 005"}}}),
		"queue card": Quote(QuoteView{Title: "Change the address",
			Lines: []QuoteLineView{{Label: "Ship to", From: "500 Market Street\u200b", To: "\u202eteertS tekraM 005"}}}),
	} {
		t.Run(name, func(t *testing.T) {
			doc, html := renderDoc(t, c)
			if strings.ContainsAny(html, "\u200b\u202e") {
				t.Errorf("the page emits a hidden character raw")
			}
			line := doc.Find(`[data-testid="quote-line"]`)
			if line.Find(`[data-testid="line-from"]`).Text() != "500 Market Street⟨U+200B⟩" ||
				line.Find(`[data-testid="line-to"]`).Text() != "⟨U+202E⟩teertS tekraM 005" {
				t.Errorf("values not marked: %q", line.Text())
			}
			if line.Find(`[data-testid="hidden-characters"]`).Length() != 1 {
				t.Errorf("the line does not say it holds hidden characters")
			}
		})
	}
}

// TestWordDiff: kept, removed and added runs, in order, a changed phrase
// as one run.
func TestWordDiff(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"Ship to 500 Market Street", "Ship to 77 Dock Road", "=[Ship to ]-[500 Market Street]+[77 Dock Road]"},
		{"Oak and linen.", "Oak and walnut and linen.", "=[Oak and ]+[walnut and ]=[linen.]"},
		{"Oak, walnut and linen.", "Oak and linen.", "-[Oak, walnut]+[Oak]=[ and linen.]"},
	} {
		var b strings.Builder
		for _, p := range wordDiff(tc.from, tc.to) {
			b.WriteString(p.Op + "[" + p.Text + "]")
		}
		if b.String() != tc.want {
			t.Errorf("wordDiff(%q, %q) = %s, want %s", tc.from, tc.to, b.String(), tc.want)
		}
	}
}

// TestCustomerSentenceIsMarkedAndKeepsItsValues: a line the adapter words
// for customers shows its sentence with hidden characters marked, and the
// values it stands for (what is sent) under it; the receipt says the values.
func TestCustomerSentenceIsMarkedAndKeepsItsValues(t *testing.T) {
	l := CustomerQuoteLine{Label: "Status", From: "active", To: "cancelled", Sentence: "Your subscription will be \u202edellecnac."}
	doc, html := renderDoc(t, CustomerRequestBody(CustomerRequestView{Title: "Cancel?", Lines: []CustomerQuoteLine{l},
		Receipt: &CustomerReceiptView{Changed: []CustomerQuoteLine{l}, Download: "/r"}}))
	if strings.ContainsAny(html, "\u202e") {
		t.Errorf("the page emits a hidden character raw")
	}
	line := doc.Find(`[data-testid="quote-line"]`)
	if got := line.Find(`[data-testid="line-sentence"]`).Text(); got != "Your subscription will be ⟨U+202E⟩dellecnac." {
		t.Errorf("sentence %q, want it marked", got)
	}
	if line.Find(`[data-testid="hidden-characters"]`).Length() != 1 {
		t.Errorf("the line does not say it holds hidden characters")
	}
	if from, to := line.Find(`[data-testid="line-from"]`).Text(), line.Find(`[data-testid="line-to"]`).Text(); from != "active" || to != "cancelled" {
		t.Errorf("values under the sentence: now %q after %q, want active / cancelled", from, to)
	}
	if got := strings.Join(strings.Fields(doc.Find(`[data-testid="receipt-line"]`).Text()), " "); got != "Status: cancelled (was active)" {
		t.Errorf("receipt line %q, want the values", got)
	}
}
