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
