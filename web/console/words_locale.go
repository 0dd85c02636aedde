package console

import (
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"countersign/internal/controlplane"
	"countersign/internal/locale"
)

// readIn says, of a customer's decision, which language the customer read
// its page in and why that one (the event's locale and locale_from, which
// the customer's pages record): ", reading the page in French (their
// browser's language)". An event without them (a staff decision, or one
// recorded before languages) says nothing.
func readIn(e controlplane.Event) string {
	tag, _ := e.Data["locale"].(string)
	if tag == "" {
		return ""
	}
	name := tag
	if t, err := language.Parse(tag); err == nil {
		if n := display.English.Tags().Name(t); n != "" {
			name = n
		}
	}
	s := ", reading the page in " + name
	from, _ := e.Data["locale_from"].(string)
	if why, ok := localeSources[locale.Source(from)]; ok {
		s += " (" + why + ")"
	}
	return s
}

// localeSources are the steps of internal/locale's order, as a reason in
// the staff's words, keyed by the names the pages record.
var localeSources = map[locale.Source]string{
	locale.FromBusiness: "as the business set it for this customer",
	locale.FromSwitch:   "chosen on the page's language switch",
	locale.FromHeader:   "their browser's language",
	locale.FromDefault:  "the system's default language",
	locale.FromFallback: "no language named: English",
}
