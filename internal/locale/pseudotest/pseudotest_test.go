package pseudotest_test

import (
	"reflect"
	"testing"

	"countersign/internal/locale/pseudotest"
)

// TestStraysFindsTextNotFromACatalogue: catalogue texts (nested too),
// the business's data and letterless words pass; a plain English word in
// text or in an attribute a person reads is reported.
func TestStraysFindsTextNotFromACatalogue(t *testing.T) {
	page := `<html><head><title>⟦Réqüést···⟧</title><style>p{color:red}</style></head><body>
<p>⟦Ñórthwíñd··⟧ Northwind Home</p>
<p>⟦⟦Déç··⟧ 2, 10:04 CET···⟧ $42.10</p>
<p>Refund ⟦Ámóüñt···⟧</p>
<img alt="Logo" src="x.png">
<button aria-label="⟦Çlósé··⟧">×</button>
<input type="submit" value="Confirm">
<script>var english = "not shown";</script>
</body></html>`
	got := pseudotest.Strays(page, "Northwind Home")
	want := []string{"<p>: Refund ⟦Ámóüñt···⟧", "<img alt>: Logo", "<input value>: Confirm"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("strays:\n got %q\nwant %q", got, want)
	}
	if got := pseudotest.Strays(`<p>⟦Ók··⟧ 42 · 10:04</p>`); len(got) != 0 {
		t.Errorf("a clean page: %q", got)
	}
}

// TestSentenceStraysReadsASentenceWithTheElementsItHolds: a catalogue sentence
// holding inline elements (a parameter's <bdi>, a <time>, a link, words
// for screen readers) is one text, so no caller need unwrap them first;
// an English word inside or beside one is still reported, and so is an
// attribute a person reads on an inline element.
func TestSentenceStraysReadsASentenceWithTheElementsItHolds(t *testing.T) {
	clean := `<p>⟦Décídé wíthíñ <time datetime="PT1H">1h 0m</time>···⟧</p>
<p>⟦Ñó ñééd tó <a href="/r"><strong>ópéñ</strong> ít</a>·····⟧ <bdi>Northwind Home</bdi></p>
<li>⟦Rémóvé <span class="visually-hidden">⟦Sáfárí···⟧</span>···⟧</li>`
	if got := pseudotest.SentenceStrays(clean, "Northwind Home"); len(got) != 0 {
		t.Errorf("sentences holding elements: %q", got)
	}
	page := `<p>See <a href="/r">⟦ýóür réqüésts···⟧</a></p>
<p>Refund <bdi>$42.10</bdi></p>
<p>⟦Ók··⟧ <span aria-label="Close">×</span></p>
<div>⟦Óñé··⟧<p>Two</p>⟦Thréé··⟧</div>`
	want := []string{"<p>: See ⟦ýóür réqüésts···⟧", "<p>: Refund $42.10", "<span aria-label>: Close", "<p>: Two"}
	if got := pseudotest.SentenceStrays(page); !reflect.DeepEqual(got, want) {
		t.Errorf("strays:\n got %q\nwant %q", got, want)
	}
}
