package locale_test

import (
	"strings"
	"testing"

	"countersign/internal/locale"
)

// TestDecideFollowsTheOrder: the business's word beats the switch, the
// switch beats the header, the header beats the system's default, and
// English is the last resort; a step that names nothing usable passes the
// decision on.
func TestDecideFollowsTheOrder(t *testing.T) {
	cases := []struct {
		name string
		in   locale.Inputs
		tag  string
		src  locale.Source
		dir  locale.Dir
	}{
		{"assertion beats switch, header and default",
			locale.Inputs{Business: "de", Cookie: "fr", AcceptLanguage: "es", Default: "ar"}, "de", locale.FromBusiness, locale.LTR},
		{"switch beats header and default",
			locale.Inputs{Cookie: "fr", AcceptLanguage: "es", Default: "ar"}, "fr", locale.FromSwitch, locale.LTR},
		{"header beats default",
			locale.Inputs{AcceptLanguage: "es-MX,es;q=0.9,en;q=0.5", Default: "ar"}, "es", locale.FromHeader, locale.LTR},
		{"default when nothing else",
			locale.Inputs{Default: "ar"}, "ar", locale.FromDefault, locale.RTL},
		{"English when nothing at all", locale.Inputs{}, "en", locale.FromFallback, locale.LTR},
		{"a regional business locale is its language",
			locale.Inputs{Business: "fr-CA", Cookie: "de"}, "fr", locale.FromBusiness, locale.LTR},
		{"the header's later choice when its first is not shipped",
			locale.Inputs{AcceptLanguage: "pt-BR, de;q=0.8", Default: "fr"}, "de", locale.FromHeader, locale.LTR},
		{"the header's weights, not its order",
			locale.Inputs{AcceptLanguage: "fr;q=0.2, de;q=0.9"}, "de", locale.FromHeader, locale.LTR},
		{"Arabic of a region reads right to left",
			locale.Inputs{AcceptLanguage: "ar-EG"}, "ar", locale.FromHeader, locale.RTL},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := locale.Decide(c.in)
			if got.String() != c.tag || got.Source != c.src || got.Dir != c.dir {
				t.Fatalf("Decide(%+v) = %s from %s %s; want %s from %s %s", c.in, got, got.Source, got.Dir, c.tag, c.src, c.dir)
			}
		})
	}
}

// TestDecidePassesOverWhatItCannotUse: unsupported or malformed values at
// one step never win and never fail; the next step decides.
func TestDecidePassesOverWhatItCannotUse(t *testing.T) {
	cases := []struct {
		name string
		in   locale.Inputs
		tag  string
		src  locale.Source
	}{
		{"unsupported business locale", locale.Inputs{Business: "pt", Cookie: "de"}, "de", locale.FromSwitch},
		{"malformed business locale", locale.Inputs{Business: "fr_FR!!", Cookie: "de"}, "de", locale.FromSwitch},
		{"malformed cookie", locale.Inputs{Cookie: "<script>", AcceptLanguage: "es"}, "es", locale.FromHeader},
		{"unsupported cookie", locale.Inputs{Cookie: "ja", AcceptLanguage: "es"}, "es", locale.FromHeader},
		{"overlong cookie", locale.Inputs{Cookie: strings.Repeat("a", 300), AcceptLanguage: "es"}, "es", locale.FromHeader},
		{"malformed header", locale.Inputs{AcceptLanguage: "fr;q=abc,,;;", Default: "de"}, "de", locale.FromDefault},
		{"unsupported header", locale.Inputs{AcceptLanguage: "ja, zh;q=0.8", Default: "de"}, "de", locale.FromDefault},
		{"wildcard header", locale.Inputs{AcceptLanguage: "*", Default: "de"}, "de", locale.FromDefault},
		{"overlong header", locale.Inputs{AcceptLanguage: strings.Repeat("fr,", 200), Default: "de"}, "de", locale.FromDefault},
		{"unsupported default", locale.Inputs{Default: "pt"}, "en", locale.FromFallback},
		{"malformed default", locale.Inputs{Default: "???"}, "en", locale.FromFallback},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := locale.Decide(c.in)
			if got.String() != c.tag || got.Source != c.src {
				t.Fatalf("Decide(%+v) = %s from %s; want %s from %s", c.in, got, got.Source, c.tag, c.src)
			}
		})
	}
}
