package locale_test

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"

	"github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"

	"countersign/internal/locale"
)

func load(t *testing.T, opts ...locale.Option) *locale.Catalogue {
	t.Helper()
	c, err := locale.Load(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var action = regexp.MustCompile(`\{\{[^}]*\}\}`)
var field = regexp.MustCompile(`\.([A-Za-z_][A-Za-z0-9_]*)`)

// placeholders are the named parameters a message uses in any of its
// forms: Arabic's "one" may say "عنصر واحد" without the count, but the
// language as a whole must use the parameters English does, and no other.
func placeholders(m *i18n.Message) string {
	set := map[string]bool{}
	for _, form := range []string{m.Zero, m.One, m.Two, m.Few, m.Many, m.Other} {
		for _, a := range action.FindAllString(form, -1) {
			for _, f := range field.FindAllStringSubmatch(a, -1) {
				set[f[1]] = true
			}
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// TestEveryShippedLanguageHasEveryEnglishMessage: each supported language
// ships a catalogue holding every English message id a customer may read,
// with the same named parameters, and no id English lacks (a stale one).
// The console's texts are English only (locale.EnglishOnly).
func TestEveryShippedLanguageHasEveryEnglishMessage(t *testing.T) {
	c := load(t)
	english := map[string]string{}
	for _, m := range c.Messages(language.English) {
		if !locale.EnglishOnly(m.ID) {
			english[m.ID] = placeholders(m)
		}
	}
	if len(english) == 0 {
		t.Fatal("the English catalogue is empty")
	}
	for _, tag := range locale.Supported() {
		got := map[string]string{}
		for _, m := range c.Messages(tag) {
			switch {
			case !locale.EnglishOnly(m.ID):
				got[m.ID] = placeholders(m)
			case tag != language.English:
				t.Errorf("%s: message %q is a console text, shown in English only; remove it", tag, m.ID)
			}
		}
		for id, want := range english {
			have, ok := got[id]
			switch {
			case !ok:
				t.Errorf("%s: message %q is missing; add it to catalog/%s.json", tag, id, tag)
			case have != want:
				t.Errorf("%s: message %q uses parameters [%s]; English uses [%s]", tag, id, have, want)
			}
		}
		for id := range got {
			if _, ok := english[id]; !ok {
				t.Errorf("%s: message %q is not in the English catalogue; remove it or add it to catalog/en.json", tag, id)
			}
		}
	}
}

// TestPluralFormsInEveryShippedLanguage: the counted messages take the
// form CLDR's rule gives each count in each language.
func TestPluralFormsInEveryShippedLanguage(t *testing.T) {
	c := load(t)
	counts := []int{0, 1, 2, 5, 11, 100}
	want := map[string][]string{
		"en": {"0 items", "1 item", "2 items", "5 items", "11 items", "100 items"},
		"fr": {"0 article", "1 article", "2 articles", "5 articles", "11 articles", "100 articles"},
		"de": {"0 Artikel", "1 Artikel", "2 Artikel", "5 Artikel", "11 Artikel", "100 Artikel"},
		"es": {"0 artículos", "1 artículo", "2 artículos", "5 artículos", "11 artículos", "100 artículos"},
		"ar": {"لا توجد عناصر", "عنصر واحد", "عنصران", "5 عناصر", "11 عنصرًا", "100 عنصر"},
	}
	for _, tag := range locale.Supported() {
		l := c.For(tag)
		for i, n := range counts {
			got, err := l.Localize("order.items", n, nil)
			if err != nil {
				t.Errorf("%s, %d: %v", tag, n, err)
				continue
			}
			if w := want[tag.String()][i]; got != w {
				t.Errorf("%s, %d: %q; want %q", tag, n, got, w)
			}
		}
	}
	// French and Spanish have a "many" form for round millions.
	for tag, w := range map[language.Tag]string{language.French: "1000000 d’articles", language.Spanish: "1000000 de artículos"} {
		if got := c.For(tag).N("order.items", 1000000, nil); got != w {
			t.Errorf("%s, 1000000: %q; want %q", tag, got, w)
		}
	}
}

// TestEveryPluralMessageHasItsLanguagesForms: a counted message in each
// language has every form that language's rule can ask for, so no count
// on a page ever fails to find its form.
func TestEveryPluralMessageHasItsLanguagesForms(t *testing.T) {
	c := load(t)
	for _, m := range c.Messages(language.English) {
		if m.One == "" {
			continue
		}
		tags := locale.Supported()
		if locale.EnglishOnly(m.ID) {
			// The console's texts are English only, read through
			// locale.ConsoleN whatever the request's language.
			tags = []language.Tag{language.English}
		}
		for _, tag := range tags {
			l := c.For(tag)
			for n := 0; n <= 200; n++ {
				if _, err := l.Localize(m.ID, n, nil); err != nil {
					t.Fatalf("%s %q count %d: %v", tag, m.ID, n, err)
				}
			}
			if _, err := l.Localize(m.ID, 1000000, nil); err != nil {
				t.Fatalf("%s %q count 1000000: %v", tag, m.ID, err)
			}
		}
	}
}

// TestPluralRulesTellSixForms: the rule machinery distinguishes Welsh's
// six forms, so a business adding Welsh gets them right.
func TestPluralRulesTellSixForms(t *testing.T) {
	fsys := fstest.MapFS{
		"c/en.json": {Data: []byte(`{"cakes": {"one": "{{.Count}} cake", "other": "{{.Count}} cakes"}}`)},
		"c/cy.json": {Data: []byte(`{"cakes": {"zero": "zero {{.Count}}", "one": "one {{.Count}}", "two": "two {{.Count}}",
			"few": "few {{.Count}}", "many": "many {{.Count}}", "other": "other {{.Count}}"}}`)},
	}
	c, err := locale.LoadFS(fsys, "c")
	if err != nil {
		t.Fatal(err)
	}
	l := c.For(language.MustParse("cy"))
	for n, want := range map[int]string{0: "zero 0", 1: "one 1", 2: "two 2", 3: "few 3", 6: "many 6", 4: "other 4", 100: "other 100"} {
		if got := l.N("cakes", n, nil); got != want {
			t.Errorf("cy %d: %q; want %q", n, got, want)
		}
	}
}

// TestMissingMessageFallsBackToEnglish: a language's file without a
// message shows English's, and an id no catalogue holds shows the id.
func TestMissingMessageFallsBackToEnglish(t *testing.T) {
	fsys := fstest.MapFS{
		"c/en.json": {Data: []byte(`{"greet": "Hello {{.Name}}", "bye": "Goodbye"}`)},
		"c/fr.json": {Data: []byte(`{"greet": "Bonjour {{.Name}}"}`)},
	}
	c, err := locale.LoadFS(fsys, "c")
	if err != nil {
		t.Fatal(err)
	}
	fr := c.For(language.French)
	if got := fr.T("greet", locale.Params{"Name": "Ada"}); got != "Bonjour Ada" {
		t.Errorf("greet: %q", got)
	}
	if got := fr.T("bye", nil); got != "Goodbye" {
		t.Errorf("bye: %q; want English's", got)
	}
	if got := fr.T("nowhere", nil); got != "nowhere" {
		t.Errorf("unknown id: %q; want the id", got)
	}
	if _, err := locale.LoadFS(fstest.MapFS{"c/fr.json": fsys["c/fr.json"]}, "c"); err == nil {
		t.Error("a catalogue without English loaded")
	}
}

// TestPseudoLocaleAccentsAndLengthens: the pseudo-locale is generated from
// English, with no plain ASCII letters left outside parameters, longer
// text, and parameters and plural forms intact.
func TestPseudoLocaleAccentsAndLengthens(t *testing.T) {
	c := load(t, locale.WithPseudo())
	l := c.For(locale.Pseudo)
	for _, m := range c.Messages(language.English) {
		if locale.EnglishOnly(m.ID) {
			continue // the console's, English only
		}
		// Parameter values without vowels, so only the message's own
		// words are looked at.
		params := locale.Params{"Time": "12:00", "Day": "2", "Month": "Dc", "Year": "2026", "Zone": "CT"}
		for _, name := range strings.Split(placeholders(m), ",") {
			if _, ok := params[name]; !ok && name != "" && name != "Count" {
				params[name] = "X"
			}
		}
		en := c.For(language.English).N(m.ID, 5, params)
		got := l.N(m.ID, 5, params)
		// A parameter this loop does not give renders as "<no value>":
		// not the message's words.
		en, got = strings.ReplaceAll(en, "<no value>", ""), strings.ReplaceAll(got, "<no value>", "")
		if !strings.HasPrefix(got, "⟦") || !strings.HasSuffix(got, "⟧") {
			t.Errorf("%q: %q is not bracketed", m.ID, got)
		}
		// A message that is all parameters and punctuation (a date's
		// pattern) has no words to lengthen.
		words := strings.IndexFunc(action.ReplaceAllString(m.Other, ""), unicode.IsLetter) >= 0
		if words && len([]rune(got)) < len([]rune(en))*13/10 {
			t.Errorf("%q: %q is not lengthened from %q", m.ID, got, en)
		}
		// A parameter the list above does not give prints "<no value>".
		if strings.ContainsAny(strings.ReplaceAll(action.ReplaceAllString(got, ""), "<no value>", ""), "aeiouAEIOU") {
			t.Errorf("%q: %q keeps unaccented vowels", m.ID, got)
		}
	}
	if got := l.N("order.items", 1, nil); got != "⟦1 ítém··⟧" {
		t.Errorf("one: %q", got)
	}
	if got := l.N("order.items", 5, nil); !strings.HasPrefix(got, "⟦5 ítéms") {
		t.Errorf("other: %q", got)
	}
	if got := load(t).For(locale.Pseudo).T("language.switch.label", nil); got != "Language" {
		t.Errorf("the pseudo-locale is in the shipped catalogue: %q", got)
	}
}

// TestTemplatesReadTheRequestsLanguage: the template helpers use the
// Localizer the request carries, and English without one.
func TestTemplatesReadTheRequestsLanguage(t *testing.T) {
	c := load(t)
	ch := locale.Decide(locale.Inputs{Cookie: "ar"})
	ctx := locale.WithLocalizer(context.Background(), c.For(ch.Tag), ch)
	if got := locale.T(ctx, "language.switch.label", nil); got != "اللغة" {
		t.Errorf("T: %q", got)
	}
	if got := locale.N(ctx, "order.items", 2, nil); got != "عنصران" {
		t.Errorf("N: %q", got)
	}
	if _, got := locale.From(ctx); got != ch {
		t.Errorf("From: %+v; want %+v", got, ch)
	}
	if got := locale.T(context.Background(), "decision.recorded", locale.Params{"Time": "09:30"}); got != "Answer recorded: 09:30" {
		t.Errorf("without a request: %q", got)
	}
}

// TestALanguagesTextsAreReadyOnceLoaded: a request, and every console
// text (locale.Console), reads its language's localizer as the catalogue
// built it, rather than parsing its tags again each time (17 allocations
// a text before, 1 now).
func TestALanguagesTextsAreReadyOnceLoaded(t *testing.T) {
	c := load(t, locale.WithPseudo())
	for _, tag := range append(c.Offered(), locale.Pseudo) {
		if first, again := c.For(tag), c.For(tag); first != again {
			t.Errorf("%s: each For builds a new localizer", tag)
		}
	}
	if got := testing.AllocsPerRun(100, func() { locale.Console("console.frame.sign_out", nil) }); got > 2 {
		t.Errorf("a console text costs %v allocations; want at most 2", got)
	}
	if regional := language.MustParse("fr-CA"); c.For(regional).Tag() != regional {
		t.Errorf("a tag the catalogue does not hold keeps its own: %s", c.For(regional).Tag())
	}
}
