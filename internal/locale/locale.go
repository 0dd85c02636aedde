// Package locale decides which language a customer reads, and holds the
// message catalogues every customer-facing text comes from.
//
// The choice follows the order: the business's word for this
// customer, then the visible switch's cookie, then the browser's
// Accept-Language, then the system's default, and English when even that
// names no supported language. Whatever is asked for is matched among the
// shipped languages only, so a request never selects a catalogue that does
// not exist.
package locale

import (
	"strings"

	"golang.org/x/text/language"
)

// Supported are the languages shipped complete, English first: English is
// the fallback every catalogue is checked against.
var Supported = []language.Tag{
	language.English,
	language.French,
	language.German,
	language.Spanish,
	language.Arabic,
}

var matcher = language.NewMatcher(Supported)

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
	// Tag is one of Supported.
	Tag language.Tag
	// Source is the step of the order that decided it.
	Source Source
	// Dir is the text direction pages in this language are laid out in.
	Dir Dir
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
		return choice(t, FromBusiness)
	}
	if t, ok := one(in.Cookie); ok {
		return choice(t, FromSwitch)
	}
	if t, ok := header(in.AcceptLanguage); ok {
		return choice(t, FromHeader)
	}
	if t, ok := one(in.Default); ok {
		return choice(t, FromDefault)
	}
	return choice(language.English, FromFallback)
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

// best matches among Supported. The matcher answers English with
// confidence No when nothing fits; that is "not decided here", so the
// order goes on to its next step instead of settling on English.
func best(tags ...language.Tag) (language.Tag, bool) {
	_, i, conf := matcher.Match(tags...)
	if conf == language.No {
		return language.Und, false
	}
	return Supported[i], true
}

func choice(t language.Tag, s Source) Choice {
	return Choice{Tag: t, Source: s, Dir: Direction(t)}
}

// Direction is the text direction of a language: right to left for
// Arabic, Hebrew, Persian and Urdu scripts, left to right otherwise.
func Direction(t language.Tag) Dir {
	script, _ := t.Script()
	switch script.String() {
	case "Arab", "Hebr", "Thaa", "Syrc", "Nkoo", "Adlm", "Rohg":
		return RTL
	}
	return LTR
}
