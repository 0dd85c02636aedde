package httpadapter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"golang.org/x/text/language"

	"countersign/internal/adapter"
	"countersign/internal/money"
)

// DefaultLocale is a file's default locale when its customer_brand names
// none: the language a plain-string quote text is written in.
const DefaultLocale = "en"

// LocalText is a quote text the customer reads: a template in the file's
// default locale (a plain JSON string, Default), or one template per locale
// (a JSON object {"en": "...", "fr": "..."}, ByLocale), whose entry for the
// default locale is required and whose placeholders are the same in every
// locale.
type LocalText struct {
	Default  string
	ByLocale map[string]string
}

// UnmarshalJSON reads a plain string or an object of locale → template.
func (t *LocalText) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		t.Default = ""
		return json.Unmarshal(b, &t.ByLocale)
	}
	t.ByLocale = nil
	return json.Unmarshal(b, &t.Default)
}

// MarshalJSON writes the form the text was read in.
func (t LocalText) MarshalJSON() ([]byte, error) {
	if t.ByLocale != nil {
		return json.Marshal(t.ByLocale)
	}
	return json.Marshal(t.Default)
}

// in is the text as written for locale: its entry, or the plain string.
func (t LocalText) in(locale string) string {
	if t.ByLocale != nil {
		return t.ByLocale[locale]
	}
	return t.Default
}

// IsZero says no text was given.
func (t LocalText) IsZero() bool { return t.Default == "" && len(t.ByLocale) == 0 }

// Locales lists the locales of every per-locale quote text and the
// default locale, sorted: the languages the file writes its quotes in.
func (a *Adapter) Locales() []string { return slices.Clone(a.locales) }

// DefaultLocale is the locale a plain-string quote text is written in.
func (a *Adapter) DefaultLocale() string { return a.defaultLocale }

// fileLocale reads customer_brand.locale, the file's default locale.
func (c *compiler) fileLocale(d *Description) string {
	if d.CustomerBrand == nil || d.CustomerBrand.Locale == "" {
		return DefaultLocale
	}
	tag, err := language.Parse(d.CustomerBrand.Locale)
	if err != nil {
		c.fail("/customer_brand/locale", fmt.Sprintf("%q is not a BCP 47 language tag", d.CustomerBrand.Locale),
			fmt.Sprintf(`write the system's default language, one of %s (customers' pages ship in these), or leave locale out for "en"`, supportedList()))
		return DefaultLocale
	}
	return tag.String()
}

// localText compiles a quote text written at ptr: the template shown in
// the default locale, with the other locales' templates beside it. A
// per-locale text must have the default locale, valid tags, and the same
// placeholders in every locale: a customer reading French must be shown
// what one reading English is.
func (c *compiler) localText(ptr string, lt LocalText) *template {
	if lt.ByLocale == nil {
		return c.template(ptr, lt.Default)
	}
	def := c.defaultLocale
	src, ok := lt.ByLocale[def]
	if !ok {
		c.fail(ptr, fmt.Sprintf("the per-locale text has no %q entry, the file's default locale (it has %s)", def, strings.Join(slices.Sorted(maps.Keys(lt.ByLocale)), ", ")),
			fmt.Sprintf(`add "%s": the text in the default locale, which customers in any other language are shown when theirs is missing`, def))
		return &template{ptr: ptr}
	}
	t := c.template(ptr+"/"+def, src)
	want := placeholders(src)
	for _, loc := range slices.Sorted(maps.Keys(lt.ByLocale)) {
		if loc == def {
			continue
		}
		lp := ptr + "/" + escapePointer(loc)
		tag, err := language.Parse(loc)
		if err != nil || tag.String() != loc {
			fix := "use a BCP 47 language tag such as \"fr\" or \"pt-BR\""
			if err == nil {
				fix = fmt.Sprintf("write it %q", tag.String())
			}
			c.fail(lp, fmt.Sprintf("%q is not a language tag in its canonical form", loc), fix)
			continue
		}
		src := lt.ByLocale[loc]
		if got := placeholders(src); !slices.Equal(got, want) {
			c.fail(lp, fmt.Sprintf("the %s text has the placeholders %s but the %s text has %s", loc, listOf(got), def, listOf(want)),
				fmt.Sprintf("use exactly the placeholders of the %s text, in the order the language needs", def))
			continue
		}
		if t.byLocale == nil {
			t.byLocale = map[string]*template{}
		}
		t.byLocale[loc] = c.template(lp, src)
		c.locales[loc] = true
	}
	return t
}

// in is the template written for locale, or t (the default locale's)
// when the text has none for it.
func (t *template) in(locale string) *template {
	if lt, ok := t.byLocale[locale]; ok {
		return lt
	}
	return t
}

// placeholders lists a template's {expression}s, without spaces, sorted
// and each once; nil for a template that does not split.
func placeholders(src string) []string {
	parts, isExpr, err := splitTemplate(src)
	if err != nil {
		return nil
	}
	var out []string
	for i, p := range parts {
		if isExpr[i] {
			out = append(out, strings.Join(strings.Fields(p), ""))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func listOf(ps []string) string {
	if len(ps) == 0 {
		return "none"
	}
	return "{" + strings.Join(ps, "}, {") + "}"
}

// quoteWords renders the quote's texts in locale, a text without it in
// the default locale; qt is the template as buildQuote shows it
// (quoteTemplate.shown), so the lines are the written quote's. money(...)
// writes amounts as locale does, in every text, translated or not.
func quoteWords(qt quoteTemplate, vars map[string]any, locale string) (adapter.QuoteWords, error) {
	vars = withLocale(vars, locale)
	var err error
	render := func(t *template) string {
		if err != nil || t == nil {
			return ""
		}
		var s string
		s, err = t.in(locale).render(vars, false)
		return s
	}
	w := adapter.QuoteWords{Title: render(qt.title), ConfirmLabel: render(qt.confirm), DeclineLabel: render(qt.decline),
		DoneWords: render(qt.done), Lines: []adapter.QuoteLineWords{}, Consequences: []string{}}
	for _, l := range qt.lines {
		w.Lines = append(w.Lines, adapter.QuoteLineWords{Label: render(l.label), From: render(l.from), To: render(l.to)})
	}
	for _, c := range qt.consequences {
		w.Consequences = append(w.Consequences, render(c))
	}
	for _, c := range qt.constraints {
		w.Constraints = append(w.Constraints, render(c))
	}
	if ct := qt.customer; ct != nil {
		cw := &adapter.CustomerWords{Title: render(ct.title), Reference: render(ct.reference), DateLabel: render(ct.dateLabel),
			MoneyArrives: render(ct.arrives)}
		for _, y := range ct.why {
			cw.Why = append(cw.Why, render(y.text))
		}
		w.Customer = cw
	}
	return w, err
}

// localeVar is the key of vars under which a quote's text rendered for a
// locale carries it (withLocale). It is not a CEL identifier, so no
// expression of a file can read or shadow it.
const localeVar = "\x00locale"

// withLocale is vars for rendering a quote's texts in locale: money(...)
// then writes amounts as the locale does. vars itself is not changed.
func withLocale(vars map[string]any, locale string) map[string]any {
	out := make(map[string]any, len(vars)+1)
	for k, v := range vars {
		out[k] = v
	}
	out[localeVar] = locale
	return out
}

// moneyIn is money(cents, currency) for one evaluation: in the locale
// vars carry (a quote's texts, money.InLocale: "42,10 €" in French,
// "¥4,210" for yen, CLDR's places and marks with a typographic minus),
// and outside one (bodies, summaries, messages to the assistant) the
// system's one form, money.Format. Both read the amount in the
// currency's own minor units.
func moneyIn(vars map[string]any) map[string]cel.LateBoundFunction {
	locale, _ := vars[localeVar].(string)
	return map[string]cel.LateBoundFunction{"money": func(_ string, args ...ref.Val) ref.Val {
		minor, _ := args[0].Value().(int64)
		cur, _ := args[1].Value().(string)
		if locale == "" {
			return types.String(money.Format(minor, cur))
		}
		return types.String(money.InLocale(minor, cur, locale))
	}}
}
