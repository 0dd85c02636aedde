package money

import "testing"

// TestInLocale compares amounts with CLDR's (v49) expected strings: one
// order of 42.10 (4,210 yen: JPY has no minor units) in EUR, USD and JPY
// in each shipped language, and Irish English. The spaces are CLDR's: a
// no-break space (U+00A0) before a trailing symbol, a narrow one (U+202F)
// grouping French thousands; Arabic's direction marks are left out.
func TestInLocale(t *testing.T) {
	cases := []struct {
		minor         int64
		currency, loc string
		want          string
	}{
		{4210, "EUR", "en", "€42.10"},
		{4210, "USD", "en", "$42.10"},
		{4210, "JPY", "en", "¥4,210"},
		{4210, "EUR", "en-IE", "€42.10"},
		{4210, "USD", "en-IE", "US$42.10"},
		{4210, "EUR", "fr", "42,10\u00a0€"},
		{4210, "USD", "fr", "42,10\u00a0$US"},
		{4210, "JPY", "fr", "4\u202f210\u00a0¥"},
		{1993410, "EUR", "fr", "19\u202f934,10\u00a0€"},
		{4210, "EUR", "de", "42,10\u00a0€"},
		{4210, "USD", "de", "42,10\u00a0$"},
		{4210, "JPY", "de", "4.210\u00a0¥"},
		{1993410, "EUR", "de", "19.934,10\u00a0€"},
		{4210, "EUR", "es", "42,10\u00a0€"},
		{4210, "USD", "es", "42,10\u00a0US$"},
		// Spanish groups thousands only from five digits on.
		{4210, "JPY", "es", "4210\u00a0¥"},
		{1993410, "EUR", "es", "19.934,10\u00a0€"},
		{4210, "EUR", "ar", "42.10\u00a0€"},
		{4210, "USD", "ar", "42.10\u00a0US$"},
		{4210, "JPY", "ar", "4,210\u00a0JP¥"},
		// Negatives take the typographic minus in CLDR's place.
		{-1260, "USD", "en", "−$12.60"},
		{-1260, "EUR", "fr", "−12,60\u00a0€"},
		{-1260, "EUR", "ar", "−12.60\u00a0€"},
		// Three minor digits: 1.234 dinars.
		{1234, "KWD", "en", "KWD\u00a01.234"},
		{1234, "BHD", "fr", "1,234\u00a0BHD"},
		// A lower-case code, an empty one (US dollars, as Format), one
		// CLDR does not know (Format's way) and a locale it does not know
		// (its English).
		{4210, "eur", "fr", "42,10\u00a0€"},
		{4210, "", "en", "$42.10"},
		{4210, "XYZ", "fr", "42.10 XYZ"},
		{4210, "EUR", "zz", "€42.10"},
	}
	for _, tc := range cases {
		if got := InLocale(tc.minor, tc.currency, tc.loc); got != tc.want {
			t.Errorf("InLocale(%d, %q, %q) = %q, want %q", tc.minor, tc.currency, tc.loc, got, tc.want)
		}
	}
}
