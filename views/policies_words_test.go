package views

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"countersign/internal/locale/pseudotest"
)

// TestThePoliciesComeFromTheCatalogue: the policies list (a policy
// switched off with its review overdue, one without limits) with the
// stage legend, and the policy form (with errors; a draft's what-if, the
// policy's own, none) write no text of their own, the small screen's
// column names (data-label) included: an installation's override of
// every console text shows, and nothing else.
func TestThePoliciesComeFromTheCatalogue(t *testing.T) {
	installMarkedConsole(t)
	p := Page{Title: "Policies", User: &User{Name: "Ada", RoleLabel: "agent"}, CSRF: "tok"}
	off := PolicyRow{System: "shop", Action: "refund_order", Stage: "3 · propose", Limits: []string{"Up to $500 a day"},
		Deadlines: "approve within 4h", Owner: "Grace Hopper", ReviewOn: "May 1", ReviewOverdue: true, Version: "3"}
	on := PolicyRow{System: "shop", Action: "change_address", Stage: "4 · assisted", Enabled: true, Approval: []string{"Above $100: an agent"}, Version: "1"}
	rows := []WhatIfRow{{Key: "queue", Route: "To the queue", TodayCount: "1", TodayMoney: "$1.00", DraftCount: "2", DraftMoney: "$2.00", Change: "+1", MoneyChange: "+$1.00"}}
	edit := PolicyEditView{System: "shop", Action: "refund_order", Current: off,
		Form:   PolicyForm{Version: "3", Stage: "3", Approvers: []string{"agent"}, Errors: FieldErrors{"stage": "Choose a stage", "approvers": "Tick at least one", "reason": "Say why"}},
		Stages: []Option{{Value: "3", Label: "3 · propose"}}, Owners: []Option{{Value: "7", Label: "Grace Hopper"}},
		Deciders: []Option{{Value: "agent", Label: "Support agents"}},
		WhatIf:   &WhatIfView{Draft: true, Since: "May 1", Proposals: "12", Summary: "Two more go to the queue.", TodayVersion: "3", Rows: rows}}
	today := edit
	today.WhatIf = &WhatIfView{Since: "May 1", Proposals: "12", TodayVersion: "3", Rows: rows}
	none := edit
	none.WhatIf = nil
	data := []string{"Policies", "Ada", "agent", "shop", "refund_order", "change_address", "3 · propose", "4 · assisted",
		"Up to $500 a day", "approve within 4h", "Grace Hopper", "May 1", "Above $100: an agent", "To the queue",
		"Choose a stage", "Tick at least one", "Say why", "Support agents", "Two more go to the queue."}
	for name, c := range map[string]templ.Component{
		"list":            Policies(p, PoliciesView{Policies: []PolicyRow{off, on}}),
		"draft":           PolicyEdit(p, edit),
		"today's":         PolicyEdit(p, today),
		"without what-if": PolicyEdit(p, none),
	} {
		doc, html := renderDoc(t, c)
		strays := consoleStrays(html, data...)
		doc.Find("[data-label]").Each(func(_ int, s *goquery.Selection) {
			if label := s.AttrOr("data-label", ""); pseudotest.Stray(label, data...) != "" {
				strays = append(strays, "<"+goquery.NodeName(s)+" data-label>: "+label)
			}
		})
		if len(strays) > 0 {
			t.Errorf("%s writes text of its own:\n%s", name, strings.Join(strays, "\n"))
		}
	}
}
