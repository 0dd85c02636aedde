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
	from, _ := e.Data["locale_from"].(string)
	if why, ok := localeSources[locale.Source(from)]; ok {
		return say("console.timeline.read_in_because", locale.Params{"Language": name, "Why": say(why, nil)})
	}
	return say("console.timeline.read_in", locale.Params{"Language": name})
}

// localeSources are the steps of internal/locale's order, each with its
// reason in the staff's words.
var localeSources = map[locale.Source]string{
	locale.FromBusiness: "console.timeline.locale_from.business",
	locale.FromSwitch:   "console.timeline.locale_from.switch",
	locale.FromHeader:   "console.timeline.locale_from.header",
	locale.FromDefault:  "console.timeline.locale_from.default",
	locale.FromFallback: "console.timeline.locale_from.fallback",
}
