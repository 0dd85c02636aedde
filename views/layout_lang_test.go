package views

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/text/language"

	"countersign/internal/locale"
)

// TestAnErrorPageOnACustomersRouteSaysItsLanguage: an error page on a
// customer's route (a language decided, no customer frame) is written in
// the customer's language, and the document says so: <html lang dir> are
// that language's, as on the customer's other pages, so a screen reader
// reads Arabic as Arabic and the page runs right to left; its title is
// the customers' catalogue's pattern, not the console's. The console's
// pages stay lang="en" without dir.
func TestAnErrorPageOnACustomersRouteSaysItsLanguage(t *testing.T) {
	ar := language.Arabic
	ctx := locale.WithLocalizer(context.Background(), locale.Shipped().For(ar), locale.Choice{Tag: ar, Source: locale.FromSwitch, Dir: locale.RTL})
	pseudo, err := locale.Load(locale.WithPseudo())
	if err != nil {
		t.Fatal(err)
	}
	pctx := locale.WithLocalizer(context.Background(), pseudo.For(locale.Pseudo), locale.Choice{Tag: locale.Pseudo, Dir: locale.LTR})
	for _, tc := range []struct {
		name             string
		ctx              context.Context
		lang, dir, title string
	}{
		{"a customer's route", ctx, "ar", "rtl", "T · Countersign"},
		{"the pseudo-locale", pctx, locale.Pseudo.String(), "ltr", "⟦T · Countersign··⟧"},
		{"the console", context.Background(), "en", "", "T · Countersign"},
	} {
		var buf bytes.Buffer
		if err := Layout(Page{Title: "T", Narrow: true}).Render(tc.ctx, &buf); err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(buf.String()))
		if err != nil {
			t.Fatal(err)
		}
		html := doc.Find("html")
		if lang, _ := html.Attr("lang"); lang != tc.lang {
			t.Errorf("%s: <html lang=%q>, want %q", tc.name, lang, tc.lang)
		}
		if dir, _ := html.Attr("dir"); dir != tc.dir {
			t.Errorf("%s: <html dir=%q>, want %q", tc.name, dir, tc.dir)
		}
		if title := doc.Find("title").Text(); title != tc.title {
			t.Errorf("%s: <title>%s</title>, want %q", tc.name, title, tc.title)
		}
	}
}
