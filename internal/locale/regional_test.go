package locale_test

import (
	"testing"

	"golang.org/x/text/language"

	"countersign/internal/locale"
)

// TestTheRegionTheCustomerGaveWritesTheAmounts: catalogues are kept per
// language, so Decide settles on en for a browser saying en-IE; it keeps
// en-IE as Regional, and the localizer formatting as it writes US
// dollars as CLDR's Irish English does ("US$42.10"), American English
// "$42.10". A region of another language than the one chosen is not
// kept.
func TestTheRegionTheCustomerGaveWritesTheAmounts(t *testing.T) {
	cases := []struct {
		in       locale.Inputs
		tag      language.Tag
		regional string
		usd      string
	}{
		{locale.Inputs{AcceptLanguage: "en-IE,en;q=0.8"}, language.English, "en-IE", "US$42.10"},
		{locale.Inputs{AcceptLanguage: "en-US"}, language.English, "en-US", "$42.10"},
		{locale.Inputs{AcceptLanguage: "en"}, language.English, "und", "$42.10"},
		{locale.Inputs{Business: "fr-CA"}, language.French, "fr-CA", "42,10\u00a0$\u00a0US"},
		{locale.Inputs{Cookie: "fr", AcceptLanguage: "en-IE"}, language.French, "und", "42,10\u00a0$US"},
		{locale.Inputs{AcceptLanguage: "pt-BR, en-IE;q=0.5"}, language.English, "en-IE", "US$42.10"},
	}
	for _, tc := range cases {
		ch := locale.Decide(tc.in)
		if ch.Tag != tc.tag || ch.Regional.String() != tc.regional {
			t.Errorf("%+v: decided %s, regional %s; want %s, %s", tc.in, ch.Tag, ch.Regional, tc.tag, tc.regional)
		}
		if got := locale.Installed().For(ch.Tag).FormattingAs(ch.Regional).Money(4210, "USD"); got != tc.usd {
			t.Errorf("%+v: %q; want %q", tc.in, got, tc.usd)
		}
	}
}
