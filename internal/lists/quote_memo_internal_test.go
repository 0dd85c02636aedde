package lists

import (
	"encoding/json"
	"strings"
	"testing"

	"countersign/internal/adapter"
)

// TestQuoteMemoKeepsAQuoteInEveryLanguage: a quote that carries its texts
// in the five shipped languages (the shop's refund with four translations
// is about 9 KB) is kept by the queue's memo, not decoded on every page.
func TestQuoteMemoKeepsAQuoteInEveryLanguage(t *testing.T) {
	q := adapter.Quote{Title: "Refund $42.10", Locale: "en", Translations: map[string]adapter.QuoteWords{}}
	for _, tag := range []string{"fr", "de", "es", "ar"} {
		q.Translations[tag] = adapter.QuoteWords{Title: strings.Repeat("mot ", 600)}
	}
	raw, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) < 9<<10 {
		t.Fatalf("the quote is %d bytes, want one of at least 9 KB", len(raw))
	}
	quotes.put(raw, q)
	if _, ok := quotes.get(raw); !ok {
		t.Errorf("a quote of %d bytes is not kept", len(raw))
	}
}
