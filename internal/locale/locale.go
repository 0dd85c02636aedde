// Package locale decides which language a customer reads, and holds the
// message catalogues every customer-facing text comes from.
//
// The choice follows the order: the business's word for this
// customer, then the visible switch's cookie, then the browser's
// Accept-Language, then the system's default, and English when even that
// names no supported language. Whatever is asked for is matched among the
// languages offered only (the shipped ones, and those an installation
// added complete), so a request never selects a catalogue that does not
// exist.
package locale

import (
	"strings"

	"golang.org/x/text/language"
)

// Supported are the languages offered to customers, English first: the
// installed catalogue's (Installed().Offered), which are the shipped ones
// until Install lays an installation's files over them.
func Supported() []language.Tag { return Installed().Offered() }

// CookieName is the cookie in which the visible language switch keeps the
// customer's choice (GOV.UK's pattern): a bare tag such as "fr".
const CookieName = "countersign_locale"

// maxInput bounds what is parsed from a header or cookie: a longer value is
// not a language preference anyone sends, and parsing it is work for nothing.
const maxInput = 256

// Source says which step of the order decided the language.
type Source string

// The steps of the order, in the order they are consulted.
const (
	// FromBusiness is the business's word: a locale in the customer's
	// assertion or read from the business system's customer record.
	FromBusiness Source = "business"
	// FromSwitch is the customer's own choice on the visible switch.
	FromSwitch Source = "switch"
	// FromHeader is the browser's Accept-Language.
	FromHeader Source = "header"
	// FromDefault is the system's default (customer_brand.locale).
	FromDefault Source = "default"
	// FromFallback is English, when no step named a supported language.
	FromFallback Source = "fallback"
)

// Dir is a text direction as HTML's dir attribute writes it.
type Dir string

// The two directions.
const (
	LTR Dir = "ltr"
	RTL Dir = "rtl"
)

// Choice is the language a customer reads, why, and its direction.
type Choice struct {
	// Tag is one of Supported() (the installed catalogue's languages).
	Tag language.Tag
	// Source is the step of the order that decided it.
	Source Source
	// Dir is the text direction pages in this language are laid out in.
	Dir Dir
	// Regional is the regional variant of Tag the deciding step asked for
	// ("en-IE" when the browser said en-IE and the catalogue has en), else
	// language.Und. Texts are Tag's, since catalogues are kept per
	// language; amounts are written as Regional writes them
	// (Localizer.FormattingAs: "US$42.10" in Irish English, "$42.10" in
	// American).
	Regional language.Tag
}

// String is the tag as a page's lang attribute and the audit write it.
func (c Choice) String() string { return c.Tag.String() }

// Inputs are what the order consults; any of them may be empty.
type Inputs struct {
	// Business is the business's word for this customer (a BCP 47 tag).
	Business string
	// Cookie is the value of the switch's cookie, CookieName.
	Cookie string
	// AcceptLanguage is the request's Accept-Language header.
	AcceptLanguage string
	// Default is the system's default, customer_brand.locale.
	Default string
}

// Decide returns the customer's language: the first step of the order that
// names a supported language wins. A malformed or unsupported value at one
// step passes the decision to the next, never to an error: the customer
// must always be able to read the page.
func Decide(in Inputs) Choice {
	if t, ok := one(in.Business); ok {
		return choice(t, FromBusiness).asked(in.Business)
	}
	if t, ok := one(in.Cookie); ok {
		return choice(t, FromSwitch).asked(in.Cookie)
	}
	if t, ok := header(in.AcceptLanguage); ok {
		ch := choice(t, FromHeader)
		tags, _, _ := language.ParseAcceptLanguage(in.AcceptLanguage)
		return ch.regional(tags...)
	}
	if t, ok := one(in.Default); ok {
		return choice(t, FromDefault).asked(in.Default)
	}
	return choice(language.English, FromFallback)
}

// asked is c with Regional from the single tag s its step gave.
func (c Choice) asked(s string) Choice {
	t, err := language.Parse(strings.TrimSpace(s))
	if err != nil {
		return c
	}
	return c.regional(t)
}

// regional is c with Regional the first of tags (in the order the step
// prefers them) that is a regional variant of c.Tag's language: en-IE
// for en, never fr-CA for en.
func (c Choice) regional(tags ...language.Tag) Choice {
	base, _ := c.Tag.Base()
	for _, t := range tags {
		if b, _ := t.Base(); b != base {
			continue
		}
		if _, conf := t.Region(); conf == language.Exact && t != c.Tag {
			c.Regional = t
		}
		return c
	}
	return c
}

// Match returns the supported language a single tag asks for ("fr-CA" is
// French), and false when it is malformed or asks for none of them.
func Match(tag string) (language.Tag, bool) { return one(tag) }

func one(s string) (language.Tag, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxInput {
		return language.Und, false
	}
	t, err := language.Parse(s)
	if err != nil {
		return language.Und, false
	}
	return best(t)
}

func header(s string) (language.Tag, bool) {
	if strings.TrimSpace(s) == "" || len(s) > maxInput {
		return language.Und, false
	}
	tags, _, err := language.ParseAcceptLanguage(s)
	if err != nil || len(tags) == 0 {
		return language.Und, false
	}
	return best(tags...)
}

// best matches among the installed catalogue's languages. The matcher
// answers English with confidence No when nothing fits; that is "not
// decided here", so the order goes on to its next step instead of settling
// on English.
func best(tags ...language.Tag) (language.Tag, bool) {
	c := Installed()
	_, i, conf := c.matcher.Match(tags...)
	if conf == language.No {
		return language.Und, false
	}
	return c.offered[i], true
}

func choice(t language.Tag, s Source) Choice {
	return Choice{Tag: t, Source: s, Dir: Direction(t)}
}

// Direction is the text direction of a language: right to left when the
// script it is written in (CLDR's likely script for the tag: Hebrew for
// he, Arabic for fa and ur, Thaana for dv) is one Unicode writes right to
// left, left to right otherwise. A language an installation adds gets its
// direction this way too.
func Direction(t language.Tag) Dir {
	script, _ := t.Script()
	if rtlScripts[script.String()] {
		return RTL
	}
	return LTR
}

// rtlScripts are the ISO 15924 codes of the scripts whose letters are
// right to left (Unicode's bidirectional class R or AL), living and
// historic.
var rtlScripts = map[string]bool{
	"Adlm": true, "Arab": true, "Aran": true, "Armi": true, "Avst": true, "Chrs": true, "Cprt": true,
	"Elym": true, "Hatr": true, "Hebr": true, "Hung": true, "Khar": true, "Lydi": true, "Mand": true,
	"Mani": true, "Mend": true, "Merc": true, "Mero": true, "Narb": true, "Nbat": true, "Nkoo": true,
	"Orkh": true, "Ougr": true, "Palm": true, "Phli": true, "Phlp": true, "Phnx": true, "Prti": true,
	"Rohg": true, "Samr": true, "Sarb": true, "Sogd": true, "Sogo": true, "Syrc": true, "Thaa": true,
	"Yezi": true,
}
