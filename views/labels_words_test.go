package views

import (
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// TestConsoleCountsAgreeWithTheirNouns: a count on a console page reads
// with the noun's form for it, by English's plural rule from the
// catalogue: "1 unused recovery code", "Approve 1 low-risk request?",
// never "1 unused recovery codes" or "request(s)".
func TestConsoleCountsAgreeWithTheirNouns(t *testing.T) {
	p := Page{Title: "Second factor", User: &User{Name: "Ada", RoleLabel: "Support agent"}, CSRF: "tok"}
	card := queueCardForWords("c1")
	home := func(listed, of int) templ.Component {
		items := make([]WaitingItem, listed)
		for i := range items {
			items[i] = WaitingItem{Title: "Refund $42.10", Href: "/tasks/t1", Since: "09:00"}
		}
		return Home(p, HomeView{Name: "Ada", Waiting: &WaitingView{Unverified: of, UnverifiedItems: items}})
	}
	for _, c := range []struct {
		name, selector, want string
		page                 templ.Component
	}{
		{"one code left", `[data-testid="recovery-left"]`, "1 unused recovery code.", AccountFactors(p, AccountFactorsView{TOTP: true, Recovery: true, RecoveryLeft: 1})},
		{"codes left", `[data-testid="recovery-left"]`, "2 unused recovery codes.", AccountFactors(p, AccountFactorsView{TOTP: true, Recovery: true, RecoveryLeft: 2})},
		{"one new code", "main p", "Keep this code somewhere safe", RecoveryCodes(p, RecoveryCodesView{Codes: []string{"aaaa-bbbb"}, Next: "/"})},
		{"new codes", "main p", "Keep these 2 codes somewhere safe", RecoveryCodes(p, RecoveryCodesView{Codes: []string{"aaaa-bbbb", "cccc-dddd"}, Next: "/"})},
		{"bulk one", "h1", "Approve 1 low-risk request?", BulkConfirm(p, BulkConfirmView{Cards: []QueueCard{card}})},
		{"bulk two", "h1", "Approve 2 low-risk requests?", BulkConfirm(p, BulkConfirmView{Cards: []QueueCard{card, card}})},
		{"bulk one's button", `[data-testid="bulk-approve"]`, "Approve 1", BulkConfirm(p, BulkConfirmView{Cards: []QueueCard{card}})},
		{"bulk two's button", `[data-testid="bulk-approve"]`, "Approve all 2", BulkConfirm(p, BulkConfirmView{Cards: []QueueCard{card, card}})},
		{"home lists one", "main p.muted", "The oldest 1 of 3 is listed.", home(1, 3)},
		{"home lists two", "main p.muted", "The oldest 2 of 3 are listed.", home(2, 3)},
	} {
		doc, _ := renderDoc(t, c.page)
		got := strings.Join(strings.Fields(doc.Find(c.selector).Text()), " ")
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
