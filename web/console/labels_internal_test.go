package console

import (
	"strconv"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/assistants"
	"countersign/internal/locale/pseudotest"
	"countersign/internal/metrics"
	"countersign/web/layout"
)

// consoleLabelsInCode are the labels Go code gives console pages: roles,
// what each role does, metrics' names, a consent choice's explanation, a
// bulk approval's outcome, in each case that counts.
func consoleLabelsInCode() map[string]string {
	out := map[string]string{
		"title tasks":                title("tasks", nil),
		"title step-up":              title("step_up", map[string]any{"Title": "Refund $5.00"}),
		"consent about, one write":   configuredAbout(assistants.Grants{MaxWriteBudget: 1, MaxInflightLimit: 1, MaxRatePerMinute: 6}),
		"consent about, any":         configuredAbout(assistants.Grants{MaxWriteBudget: 20, MaxInflightLimit: 2, MaxRatePerMinute: 60, AnyCustomer: true}),
		"bulk one of each":           bulkApprovedWords(1, 1, 1),
		"bulk several":               bulkApprovedWords(3, 2, 2),
		"bulk none":                  bulkApprovedWords(0, 2, 0),
		"roles' factor not required": say("console.labels.roles.factor_not_required", map[string]any{"Roles": layout.RolesLabel(accounts.Agent)}),
	}
	for _, r := range accounts.Roles {
		out["role "+string(r)] = layout.RoleLabel(r)
		out["roles "+string(r)] = layout.RolesLabel(r)
		out["intro "+string(r)] = roleIntro(r)
	}
	for _, d := range metrics.Definitions {
		out["metric "+d.ID] = metricName(d)
		out["metric "+d.ID+" text"] = metricWords(d, "text", d.Text)
		out["metric "+d.ID+" warning"] = metricWords(d, "warning", d.WarningText)
		out["metric "+d.ID+" alert"] = metricWords(d, "alert", d.Alert)
		for i, l := range d.Lines {
			out["metric "+d.ID+" line "+strconv.Itoa(i)] = metricWords(d, "line_"+strconv.Itoa(i), l.Label)
		}
	}
	return out
}

// TestTheConsolesLabelsInCodeComeFromTheCatalogue: every label above is
// one console.* message, so an installation's override of each shows,
// whole.
func TestTheConsolesLabelsInCodeComeFromTheCatalogue(t *testing.T) {
	pseudotest.InstallMarkedConsole(t)
	for name, got := range consoleLabelsInCode() {
		if !strings.HasPrefix(got, "⟦") || !strings.HasSuffix(got, "⟧") {
			t.Errorf("%s: %q is not one catalogue message", name, got)
		}
	}
}

// TestTheConsolesLabelsReadAsBeforeAndAgreeWithTheirCounts: from the
// catalogue the labels read as they did when written in code (a role as
// Role.Label, a metric as its definition's name), and a count of one
// reads as one: "1 request", "at most 1 write".
func TestTheConsolesLabelsReadAsBeforeAndAgreeWithTheirCounts(t *testing.T) {
	got := consoleLabelsInCode()
	want := map[string]string{
		"title tasks":   "Tasks",
		"title step-up": "Approve with your passkey: Refund $5.00",
		"consent about, one write": "An admin configured it: its actions, its grants and its maxima apply (at most 1 write, 1 in flight " +
			"and 6 a minute per task; only for customers the business vouches for).",
		"consent about, any": "An admin configured it: its actions, its grants and its maxima apply (at most 20 writes, 2 in flight " +
			"and 60 a minute per task; for any customer).",
		"bulk one of each": "Approved 1 request. 1 changed or was decided meanwhile and was left as it is. 1 now needs your passkey " +
			"and was left out: approve it from the queue with your passkey.",
		"bulk several": "Approved 3 requests. 2 changed or were decided meanwhile and were left as they are. 2 now need your passkey " +
			"and were left out: approve each from the queue with your passkey.",
		"bulk none":                  "Approved 0 requests. 2 changed or were decided meanwhile and were left as they are.",
		"roles' factor not required": "Support agents no longer need a second factor.",
		"intro manager":              "Here you read how actions turn out and set each action's stage, limits, who decides its cards, owner and review date.",
	}
	for _, r := range accounts.Roles {
		want["role "+string(r)] = r.Label()
		want["roles "+string(r)] = r.Label() + "s"
	}
	for _, d := range metrics.Definitions {
		want["metric "+d.ID] = d.Name
		want["metric "+d.ID+" text"] = d.Text
		want["metric "+d.ID+" warning"] = d.WarningText
		want["metric "+d.ID+" alert"] = d.Alert
		for i, l := range d.Lines {
			want["metric "+d.ID+" line "+strconv.Itoa(i)] = l.Label
		}
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %q, want %q", name, got[name], w)
		}
	}
}
