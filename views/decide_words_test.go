package views

import (
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// TestTheDecidePageComesFromTheCatalogue: a card's page to decide (held
// by another, with a fresh quote, an edit's diff, the confirmation of an
// approval that cannot be undone, the reject and send-back forms with
// errors, the edit form), and its other states (held by the viewer,
// refused, to be quoted again, a passkey needed, decided, not the
// viewer's to decide) write no text of their own: an installation's
// override of every console text shows, and nothing else.
func TestTheDecidePageComesFromTheCatalogue(t *testing.T) {
	installMarkedConsole(t)
	p := Page{Title: "Decide", User: &User{Name: "Ada", RoleLabel: "agent"}, CSRF: "tok"}
	card := queueCardForWords("c1")
	card.ConfirmApprove = true
	edit := []FormField{
		{Name: "amount", ID: "f-amount", Label: "Amount", Kind: "money", Value: "42.10", Description: "In dollars"},
		{Name: "address", ID: "f-address", Label: "Address", Kind: "fieldset", Children: []FormField{
			{Name: "city", ID: "f-city", Label: "City", Kind: "text", Value: "Springfield"},
			{Name: "zone", ID: "f-zone", Label: "Zone", Kind: "select", Options: []string{"north", "south"}, Value: "north"}}},
		{Name: "count", ID: "f-count", Label: "Count", Kind: "number", Value: "2", Min: "1", Max: "9"},
	}
	full := DecideView{Card: card, Decidable: true, Outcome: "Approved by Grace Hopper.", OutcomeStepUp: true, Edit: edit,
		Diff:    &DiffView{Args: []ArgChange{{Name: "amount", From: "42.10", To: "40.00"}}, Before: card.Quote, After: card.Quote},
		Reasons: []string{"Out of policy"}, Reason: "other", Other: "too soon", Question: "why?",
		Errors: FieldErrors{"reason": "Choose a reason.", "question": "Ask a question.", "city": "Name a city."},
		Fresh:  &card.Quote, Checked: "Checked just now: the order is unchanged.", CheckBad: true}
	full.Card.NeedsStepUp = false
	mine := full
	mine.Card.HolderName, mine.Card.HeldByMe, mine.Diff, mine.Card.Irreversible = "", true, nil, false
	refused, requote, stepUp, decided, notMine := full, full, full, full, full
	refused.Refused = true
	requote.NeedsRequote = true
	stepUp.Card.NeedsStepUp = true
	decided.Decidable = false
	notMine.Card.MayDecide = false
	data := append([]string{"Decide", "Approved by Grace Hopper.", "42.10", "40.00", "amount", "Amount", "In dollars",
		"Address", "City", "Zone", "north", "south", "Count", "Out of policy", "too soon", "why?", "Choose a reason.",
		"Ask a question.", "Name a city.", "Checked just now: the order is unchanged.", "c1"}, queueData...)
	for name, c := range map[string]templ.Component{
		"to decide":  Decide(p, full),
		"held by me": Decide(p, mine),
		"refused":    Decide(p, refused),
		"requote":    Decide(p, requote),
		"step-up":    Decide(p, stepUp),
		"decided":    Decide(p, decided),
		"not mine":   Decide(p, notMine),
	} {
		_, html := renderDoc(t, c)
		html = strings.NewReplacer("<kbd>j</kbd>", "", "<kbd>k</kbd>", "", "<kbd>a</kbd>", "", "<kbd>r</kbd>", "", "<kbd>e</kbd>", "").Replace(html)
		if strays := consoleStrays(html, data...); len(strays) > 0 {
			t.Errorf("%s writes text of its own:\n%s", name, strings.Join(strays, "\n"))
		}
	}
}
