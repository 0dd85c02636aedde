package web

import (
	"strings"
	"testing"

	"countersign/internal/locale/pseudotest"
)

// TestTheHeadersPagesAreNamedFromTheCatalogue: every page of the header's
// navigation is named, and says what it is for, in console.* messages, so
// an installation's override shows; and the English reads as before.
func TestTheHeadersPagesAreNamedFromTheCatalogue(t *testing.T) {
	english := map[string]string{}
	for _, h := range header {
		english[h.href] = navItem(h.key, h.href, h.about).Label
	}
	if english["/queue"] != "Queue" || english["/handoffs"] != "Hand-offs" || english["/account/password"] != "Password" {
		t.Errorf("the header in English reads %v", english)
	}
	pseudotest.InstallMarkedConsole(t)
	for _, h := range header {
		item := navItem(h.key, h.href, h.about)
		for what, got := range map[string]string{"label": item.Label, "about": item.About} {
			if got == "" && what == "about" && !h.about {
				continue
			}
			if !strings.HasPrefix(got, "⟦") || !strings.HasSuffix(got, "⟧") {
				t.Errorf("%s's %s: %q is not the catalogue's", h.href, what, got)
			}
		}
	}
}
