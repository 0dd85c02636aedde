package views

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestButtonsReadWholeToAScreenReader: a button short on screen ("Enable")
// whose visually hidden rest names what it acts on reads as one phrase with
// a space between the two ("Enable Alan Turing"), not "EnableAlan Turing":
// the hidden part of each message carries its own leading space.
func TestButtonsReadWholeToAScreenReader(t *testing.T) {
	views := adminViews()
	keys := []PasskeyRow{{ID: 1, Name: "Work laptop", Added: "May 1"}}
	views["passkeys"] = AccountFactors(adminPage, AccountFactorsView{PasskeysOn: true, Passkeys: keys})
	names := map[string]bool{}
	for _, c := range views {
		doc, _ := renderDoc(t, c)
		doc.Find("button, a.button").Each(func(_ int, s *goquery.Selection) {
			names[strings.Join(strings.Fields(s.Text()), " ")] = true
		})
	}
	for _, want := range []string{
		"Change role of Grace Hopper", "Enable Alan Turing", "Disable… Grace Hopper",
		"Reset second factor… of Grace Hopper", "Stop requiring a second factor of admins",
		"Require a second factor of agents", "Save limits of support-bot",
		"Send test event to support-bot's endpoint", "Remove endpoint of support-bot",
		"Replace endpoint and secret of support-bot", "Resend delivery d5",
		"Revoke… key ak_12ab", "Issue a key for support-bot", "Disable… support-bot", "Enable support-bot",
		"Save actions of support-bot", "Remove Work laptop",
	} {
		if !names[want] {
			t.Errorf("no button reads %q", want)
		}
	}
	if t.Failed() {
		t.Logf("the buttons read: %v", names)
	}
}
