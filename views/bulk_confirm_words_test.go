package views

import (
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// TestTheBulkConfirmationComesFromTheCatalogue: the confirmation of a
// bulk approval (its cards, conflicts of one and of three titles, a card
// left out for a passkey) and the page with nothing to approve write no
// text of their own: an installation's override of every console text
// shows, and nothing else.
func TestTheBulkConfirmationComesFromTheCatalogue(t *testing.T) {
	installMarkedConsole(t)
	p := Page{Title: "Bulk", User: &User{Name: "Ada", RoleLabel: "agent"}, CSRF: "tok"}
	card := queueCardForWords("c1")
	card.Quote.Lines = []QuoteLineView{{Label: "Amount", To: "$42.10"}}
	v := BulkConfirmView{Cards: []QueueCard{card, card}, StepUp: []QueueCard{card},
		Conflicts: []BulkConflict{{TargetDisplay: "order 245695", Titles: []string{"Refund A", "Refund B", "Refund C"}},
			{TargetDisplay: "order 9", Titles: []string{"Refund D"}}},
		Errors: FieldErrors{"confirm_conflicts": "Tick it to approve them all."}}
	data := append([]string{"Bulk", "Amount", "order 245695", "order 9", "Refund A", "Refund B", "Refund C", "Refund D",
		"Tick it to approve them all."}, queueData...)
	for name, c := range map[string]templ.Component{
		"confirm": BulkConfirm(p, v),
		"nothing": BulkConfirm(p, BulkConfirmView{StepUp: []QueueCard{card, card}}),
	} {
		_, html := renderDoc(t, c)
		if strays := consoleStrays(html, data...); len(strays) > 0 {
			t.Errorf("%s writes text of its own:\n%s", name, strings.Join(strays, "\n"))
		}
	}
}
