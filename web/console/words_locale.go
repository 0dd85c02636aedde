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
	if localeSources[from] {
		why := say("console.timeline.locale_from."+from, nil)
		return say("console.timeline.read_in_because", locale.Params{"Language": name, "Why": why})
	}
	return say("console.timeline.read_in", locale.Params{"Language": name})
}

// localeSources are the steps of internal/locale's order that have a
// reason in the staff's words (console.timeline.locale_from.*).
var localeSources = map[string]bool{"business": true, "switch": true, "header": true, "default": true, "fallback": true}
