package views

import (
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// TestTheStepUpPageComesFromTheCatalogue: the page that approves a card
// with a passkey, in each of its states (ready, decided, not the viewer's
// to decide, passkeys off, no passkey yet), writes no text of its own: an
// installation's override of every console text shows, and nothing else.
func TestTheStepUpPageComesFromTheCatalogue(t *testing.T) {
	installMarkedConsole(t)
	p := Page{Title: "Approve", User: &User{Name: "Ada", RoleLabel: "agent"}, CSRF: "tok"}
	card := queueCardForWords("c1")
	card.ArgsHash = "h-abc"
	ready := StepUpView{Card: card, Decidable: true}
	decided, notMine, off, none := ready, ready, ready, ready
	decided.Decidable = false
	notMine.Card.MayDecide = false
	off.PasskeysOff = true
	none.NoPasskey = true
	data := append([]string{"Approve", "c1", "h-abc", "-public-url"}, queueData...)
	for name, c := range map[string]templ.Component{
		"ready":        StepUp(p, ready),
		"decided":      StepUp(p, decided),
		"not mine":     StepUp(p, notMine),
		"passkeys off": StepUp(p, off),
		"no passkey":   StepUp(p, none),
	} {
		_, html := renderDoc(t, c)
		if strays := consoleStrays(html, data...); len(strays) > 0 {
			t.Errorf("%s writes text of its own:\n%s", name, strings.Join(strays, "\n"))
		}
	}
}
