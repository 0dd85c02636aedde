package views

import (
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// queueCardForWords is a card with every part the queue can show: why,
// a stale quote, a disagreeing summary, two approvers, a step-up, a
// holder, limits and edited arguments.
func queueCardForWords(id string) QueueCard {
	return QueueCard{
		ID: id, TaskID: "t1", System: "shop", Action: "refund_order", ActionTitle: "Refund an order",
		Quote:   QuoteView{Title: "Refund $42.10 on order 245695", Amount: "$42.10"},
		Args:    []ArgView{{Name: "order_id", Value: "245695"}},
		Summary: "Refund the lamp", SummaryDisagrees: true, CustomerRef: "jordan@example.com",
		ConversationID: "conv-7", BudgetLeft: 3, WriteBudget: 5, InflightLimit: 2, Inflight: 1,
		Limits: []string{"Refunds above $500 need two approvers"}, DeadlineISO: "2026-05-01T10:00:00Z",
		NowISO: "2026-05-01T09:00:00Z", TimeLeft: "1h 0m", Urgent: true, HolderName: "Ada Lovelace",
		HoldUntil: "10:05", FirstApprovers: []string{"Grace Hopper"}, NeedsSecond: true, Irreversible: true,
		NeedsStepUp: true, Edited: true, State: StateBadgeView{Label: "awaiting approval", Tone: "warn"},
		QuotedAt: "09:01 UTC", QuotedAgo: "3 min ago", QuotedISO: "2026-05-01T09:01:00Z",
		Stale: []string{"The order was refunded in part since.", "The address changed since."},
		Why:   "Refunds above $25 are decided by a person", PolicyVersion: "policy v3",
		MayDecide: true, Deciders: "support agents",
	}
}

// queueData are the data of queueCardForWords and the page: the
// business's and the people's words, not the console's.
var queueData = []string{"Refund $42.10 on order 245695", "$42.10", "order_id", "245695", "Refund the lamp",
	"jordan@example.com", "conv-7", "Refunds above $500 need two approvers", "1h 0m", "Ada Lovelace", "10:05",
	"Grace Hopper", "awaiting approval", "09:01 UTC", "3 min ago", "The order was refunded in part since.",
	"The address changed since.", "Refunds above $25 are decided by a person", "policy v3", "support agents",
	"Refund an order", "shop", "refund_order", "shop/refund_order", "Queue", "Ada", "agent", "The amount is not a number",
	"Approved and sent.", "Enter", "Esc"}

// TestTheQueueComesFromTheCatalogue: the approval queue (every state of
// its count, the filters with their errors, the card just decided, cards
// held by someone else and by the viewer, a card the viewer only views,
// bulk approval and the cards it leaves out for a passkey, the pages)
// and a card's own body write no text of their own: an installation's
// override of every console text shows, and nothing else.
func TestTheQueueComesFromTheCatalogue(t *testing.T) {
	installMarkedConsole(t)
	p := Page{Title: "Queue", User: &User{Name: "Ada", RoleLabel: "agent"}, CSRF: "tok"}
	mine, viewed, single := queueCardForWords("c2"), queueCardForWords("c3"), queueCardForWords("c4")
	mine.HolderName, mine.HeldByMe = "", true
	viewed.MayDecide = false
	single.Stale = single.Stale[:1]
	single.FirstApprovers = nil
	full := QueueView{
		Filter: QueueFilterView{Age: "1h", Mine: true}, Systems: []string{"shop"}, Actions: []string{"refund_order"},
		Errors:  FieldErrors{"min": "The amount is not a number", "max": "The amount is not a number"},
		Cards:   []QueueCard{queueCardForWords("c1"), mine, viewed, single},
		Waiting: 4, Filtered: true, Unverified: 2, FocusID: "c1",
		Decided: &DecidedView{ID: "c0", TaskID: "t0", Title: "Refund $42.10 on order 245695", State: StateBadgeView{Label: "awaiting approval"}, Outcome: "Approved and sent."},
		NextURL: "/queue?after=x", FirstURL: "/queue", BulkIDs: []string{"c1", "c2"},
		BulkStepUp: []QueueCard{mine},
	}
	one := full
	one.Waiting, one.Filtered, one.Unverified, one.BulkIDs, one.BulkStepUp = 1, false, 1, []string{"c1"}, []QueueCard{mine, viewed}
	capped := full
	capped.Waiting, capped.Capped = 1000, true
	cappedPlain := capped
	cappedPlain.Filtered = false
	empty := QueueView{FocusEmpty: true}
	emptyFiltered := QueueView{Filtered: true}
	for name, c := range map[string]templ.Component{
		"queue":                 Queue(p, full),
		"one waiting":           Queue(p, one),
		"more than the cap":     Queue(p, capped),
		"more than, unfiltered": Queue(p, cappedPlain),
		"nothing waiting":       Queue(p, empty),
		"nothing, filtered":     Queue(p, emptyFiltered),
		"a card's body":         cardBody(queueCardForWords("c5")),
		"a card's single stale": cardBody(single),
	} {
		_, html := renderDoc(t, c)
		html = strings.NewReplacer("<kbd>j</kbd>", "", "<kbd>k</kbd>", "", "<kbd>a</kbd>", "", "<kbd>r</kbd>", "", "<kbd>e</kbd>", "").Replace(html)
		if strays := consoleStrays(html, queueData...); len(strays) > 0 {
			t.Errorf("%s writes text of its own:\n%s", name, strings.Join(strays, "\n"))
		}
		if !strings.Contains(html, "⟦") {
			t.Errorf("%s shows no console text", name)
		}
	}
}
