package console

import (
	"countersign/internal/accounts"
	"countersign/internal/assistants"
	"countersign/internal/locale"
	"countersign/internal/metrics"
)

// title is a console page's title (console.labels.title.*), from the
// catalogue like every console text, so an installation can change it.
func title(id string, p locale.Params) string { return say("console.labels.title."+id, p) }

// roleIntro says in one sentence what a role does in the console
// (console.labels.role.intro.*).
func roleIntro(r accounts.Role) string {
	if !r.Valid() {
		return ""
	}
	return say("console.labels.role.intro."+string(r), nil)
}

// metricName is a metric's name as the metrics pages show it
// (console.labels.metric.<id>); a metric the catalogue does not name keeps
// its definition's.
func metricName(m metrics.Definition) string {
	if !catalogued(m) {
		return m.Name
	}
	return say("console.labels.metric."+m.ID, nil)
}

// metricWords is a part of a metric's definition as the metrics page shows
// it (console.labels.metric.<id>.<part>: its text, its warning rule, its
// alert, a line of its chart); a metric the catalogue does not name keeps
// its definition's words.
func metricWords(m metrics.Definition, part, words string) string {
	if words == "" || !catalogued(m) {
		return words
	}
	return say("console.labels.metric."+m.ID+"."+part, nil)
}

// catalogued says whether the catalogue names metric m: every one of
// metrics.Definitions.
func catalogued(m metrics.Definition) bool {
	for _, d := range metrics.Definitions {
		if d.ID == m.ID {
			return true
		}
	}
	return false
}

// configuredAbout says what an assistant an admin configured may do, for
// the OAuth consent page's choice of it: "at most 1 write" agrees with
// its count.
func configuredAbout(g assistants.Grants) string {
	customers := "console.labels.consent.vouched_customers"
	if g.AnyCustomer {
		customers = "console.labels.consent.any_customer"
	}
	return say("console.labels.consent.assistant_about", locale.Params{
		"Writes":    sayN("console.labels.consent.writes", int64(g.MaxWriteBudget), nil),
		"Inflight":  thousands(int64(g.MaxInflightLimit)),
		"Rate":      thousands(int64(g.MaxRatePerMinute)),
		"Customers": say(customers, nil),
	})
}

// bulkApprovedWords says what a bulk approval did: how many it approved,
// how many changed meanwhile and how many now need a passkey, each count
// with its own plural ("1 request", not "1 request(s)").
func bulkApprovedWords(approved, skipped, stepUp int) string {
	msg := sayN("console.labels.bulk.approved", int64(approved), nil)
	if skipped > 0 {
		msg += " " + sayN("console.labels.bulk.skipped", int64(skipped), nil)
	}
	if stepUp > 0 {
		msg += " " + sayN("console.labels.bulk.step_up", int64(stepUp), nil)
	}
	return msg
}
