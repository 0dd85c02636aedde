package console_test

import (
	"regexp"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
)

// TestStageReadinessCountsWhatActionSuccessCounts: on the same history —
// where some actions' requests were proposed at another stage than their
// policy's today — stage readiness rests on the same requests as the action
// success table, action by action, and says how many were at today's
// stage, with the rates of those requests as the figures and the
// all-stage rates beside them; the stages are explained in words where
// they are shown.
func TestStageReadinessCountsWhatActionSuccessCounts(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	webtest.LoadHistory(t, b, 600, 50)
	// The manager moved refunds to stage 4 after they were proposed at 3.
	if _, err := b.Store.Pool().Exec(t.Context(), `UPDATE policies SET stage = 4 WHERE system = 'shop' AND action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])

	of := regexp.MustCompile(`\(([\d,]+) of ([\d,]+)\)`)
	ended := map[string]string{}
	for _, tr := range c.Get("/metrics/table/success-by-action").Doc(t).Find(`[data-testid="success-by-action-table"] tbody tr`).EachIter() {
		if m := of.FindStringSubmatch(tr.Find("td").Text()); m != nil {
			ended[strings.TrimSpace(tr.Find("th").Text())] = m[2]
		}
	}
	if len(ended) < 6 {
		t.Fatalf("success by action lists %d actions: %v", len(ended), ended)
	}
	rows := c.Get("/metrics/table/readiness").Doc(t).Find(`[data-testid="readiness-table"] tbody tr`)
	differentStage := 0
	for _, tr := range rows.EachIter() {
		title := strings.TrimSpace(tr.Find("th").Text())
		sample := tr.Find(`[data-testid="sample"]`).Clone()
		atStage := strings.Trim(sample.Find(`[data-testid="at-stage"]`).Text(), "()")
		sample.Find(`[data-testid="at-stage"]`).Remove()
		got := strings.TrimSpace(sample.Text())
		if want, ok := ended[title]; ok && got != want {
			t.Errorf("%s: stage readiness rests on %s requests, action success on %s", title, got, want)
		}
		if !strings.HasSuffix(atStage, " at this stage") {
			t.Errorf("%s: no count at the current stage: %q", title, atStage)
		}
		if strings.HasPrefix(atStage, "0 ") && got != "0" {
			differentStage++
		}
		// The figure is the rate at the current stage, over the requests
		// counted "at this stage"; the all-stage rate, over the sample, is
		// beside it.
		n := strings.TrimSuffix(atStage, " at this stage")
		figure, all := tr.Find(`[data-testid="error-rate"]`).Text(), tr.Find(`[data-testid="all-error-rate"]`).Text()
		if m := of.FindStringSubmatch(figure); n == "0" && figure != "no data" || n != "0" && (m == nil || m[2] != n) {
			t.Errorf("%s: error rate %q, want it over the %s requests at this stage", title, figure, n)
		}
		if m := of.FindStringSubmatch(all); got != "0" && (m == nil || m[2] != got) {
			t.Errorf("%s: all-stage error rate %q, want it over all %s", title, all, got)
		}
		if stage := tr.Find("td").First().Text(); !regexp.MustCompile(`^[345] · \w`).MatchString(stage) {
			t.Errorf("%s: stage shown as %q, want its number and name", title, stage)
		}
	}
	if differentStage == 0 {
		t.Errorf("the history has no action proposed at another stage than today's; the test proves nothing")
	}

	for _, page := range []string{"/policies", "/metrics"} {
		legend := c.Get(page).Doc(t).Find(`[data-testid="stage-legend"]`)
		text := strings.Join(strings.Fields(legend.Text()), " ")
		for _, want := range []string{"Stage 3 · propose", "a support agent approves", "Stage 4 · assisted", "the customer confirms",
			"Stage 5 · bounded autonomy", "automatically within the policy's limits"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: the stage legend %q does not say %q", page, text, want)
			}
		}
	}
}
