package views

import (
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// TestTheHandoffPageComesFromTheCatalogue: one hand-off's page (text kept
// from a refused form, held by someone else and taken over, the customer
// with a task and requests or none, the assistant's draft to send on,
// sent, being sent, discarded or not sendable, the forms to finish)
// writes no text of its own: an installation's override of every console
// text shows, and nothing else. Where it stands, the target, who took it
// over and why a draft cannot be sent are made by web/console and are
// data here.
func TestTheHandoffPageComesFromTheCatalogue(t *testing.T) {
	installMarkedConsole(t)
	p := Page{Title: "Hand-off", User: &User{Name: "Ada", RoleLabel: "agent"}, CSRF: "tok"}
	full := HandoffPageView{ID: 1, ConversationID: "conv-7", Intent: "Refund the lamp", State: StateBadgeView{Label: "waiting"},
		StateWords: "Waiting since 09:00", Target: "10 min", Note: "Refunded by hand", Summary: "Wants a refund",
		Facts: []string{"Order 245695 delivered"}, Customer: "jordan@example.com", TaskID: "t1", TaskState: StateBadgeView{Label: "open"},
		TaskWords: "3 writes left", CustomerRequests: []WaitingItem{{Href: "/tasks/t1", Title: "Refund $42.10", Since: "1h ago"}},
		Entries: []ConversationEntryView{{At: "09:00", What: "handed off", Intent: "refund", Summary: "Asked for a person", Current: true}},
		Draft: &HandoffDraftView{HandoffID: 2, Digest: "d", Action: "refund_order", Args: []ArgField{{Label: "Amount", Value: "$42.10"}},
			CanSend: true, For: "For task t1, jordan@example.com"},
		CanTake: true, CanClose: true, HeldBy: "Grace Hopper", LatestID: 2, CanTakeOver: true, TakenOver: "Ann took it from Bob: away",
		Errors: FieldErrors{"kept-text": "Someone else was first", "resolve-note": "Say what you did"}, KeptText: "my note"}
	components := map[string]templ.Component{"full": HandoffPage(p, full)}
	for name, d := range map[string]HandoffDraftView{"sent": {SentURL: "/tasks/t1"}, "sending": {Sending: true},
		"discarded": {Discarded: true}, "not sendable": {Why: "The task is closed."}} {
		v := full
		v.Draft, v.TaskID, v.CustomerRequests = &d, "", nil
		components[name] = HandoffPage(p, v)
	}
	noRequests := full
	noRequests.CustomerRequests = nil
	components["no requests"] = HandoffPage(p, noRequests)
	data := []string{"Hand-off", "Ada", "agent", "conv-7", "Refund the lamp", "waiting", "Waiting since 09:00", "10 min",
		"Refunded by hand", "Wants a refund", "Order 245695 delivered", "jordan@example.com", "t1", "open", "3 writes left",
		"Refund $42.10", "1h ago", "handed off", "refund", "Asked for a person", "refund_order", "Amount", "$42.10",
		"For task t1, jordan@example.com", "Grace Hopper", "Ann took it from Bob: away", "Someone else was first",
		"Say what you did", "my note", "The task is closed."}
	for name, c := range components {
		_, html := renderDoc(t, c)
		if strays := consoleStrays(html, data...); len(strays) > 0 {
			t.Errorf("%s writes text of its own:\n%s", name, strings.Join(strays, "\n"))
		}
	}
}
