package console_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
)

// TestMetricsPageSupportsADecision reads the metrics page over generated
// history as a manager would: what warns is listed first and links to its
// card; counts carry thousands separators; the count of results nobody
// could confirm links to those tasks; definitions, reasons, intents and
// actions are in plain words, not event, column or code names; and the success chart's scale
// starts near the data, with the 95% target drawn and labelled.
func TestMetricsPageSupportsADecision(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	webtest.LoadHistory(t, b, 3000, 700)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])
	doc := c.Get("/metrics?from=2026-03-05&to=2026-04-01").Doc(t)

	// What warns comes first, one line per warning card, each linked.
	attention := doc.Find(`[data-testid="attention"]`)
	if attention.Length() != 1 || doc.Find(`main section`).First().AttrOr("data-testid", "") != "attention" {
		t.Fatalf("the page does not lead with what needs attention")
	}
	warning := map[string]bool{}
	doc.Find(`section.metric`).Each(func(_ int, s *goquery.Selection) {
		if s.Find(`[data-testid="metric-warning"]`).Length() > 0 {
			warning[strings.TrimPrefix(s.AttrOr("data-testid", ""), "metric-")] = true
		}
	})
	if len(warning) == 0 {
		t.Fatal("no metric warns in the generated history; the test needs one")
	}
	listed := map[string]bool{}
	attention.Find(`li`).Each(func(_ int, s *goquery.Selection) {
		id := strings.TrimPrefix(s.AttrOr("data-testid", ""), "attention-")
		listed[id] = true
		want := "#m-" + id
		if id == "unverified" {
			want = "/tasks?need=unverified" // where those tasks are
		}
		if href := s.Find("a").AttrOr("href", ""); href != want || doc.Find(`#m-`+id).Length() != 1 {
			t.Errorf("attention %s links to %q, want %q", id, href, want)
		}
	})
	for id := range warning {
		if !listed[id] {
			t.Errorf("%s warns but is not listed first", id)
		}
	}
	if !strings.Contains(attention.Find("h2").Text(), strconv.Itoa(len(listed))+" metrics need attention") && len(listed) > 1 {
		t.Errorf("attention heading %q for %d items", attention.Find("h2").Text(), len(listed))
	}

	openSectionTables(t, c, doc)

	// Counts: thousands separators wherever a number is shown.
	bare := regexp.MustCompile(`\d{4,}`)
	grouped := 0
	doc.Find(`[data-testid="metric-detail"], [data-testid="sample"], [data-testid="error-rate"], [data-testid="edit-rate"], ` +
		`[data-testid^="reasons-"] td, .bar-value, [data-testid="metric-unverified"] [data-testid="metric-value"]`).Each(func(_ int, s *goquery.Selection) {
		text := s.Text()
		if bare.MatchString(text) {
			t.Errorf("%q has a number without thousands separators", text)
		}
		if strings.Contains(text, ",") {
			grouped++
		}
	})
	if grouped == 0 {
		t.Error("no count reached 1,000: the history is too small to test grouping")
	}

	// The count of results nobody could confirm links to those tasks.
	link := doc.Find(`[data-testid="metric-unverified"] a[data-testid="unverified-link"]`)
	if link.AttrOr("href", "") != "/tasks?need=unverified" || link.Find(`[data-testid="metric-value"]`).Length() != 1 {
		t.Errorf("unverified count link: %q", link.AttrOr("href", ""))
	}

	// Plain words: no snake_case names, no "p50"/"p90", no "=", no
	// "invocation" in what the page explains.
	code := regexp.MustCompile(`\b[a-z]+_[a-z_]+\b|\bp[59]0\b|=|[Ii]nvocation`)
	doc.Find(`[data-testid="metric-warning"], [data-testid="metric-value"], section.card > p.muted, ` +
		`[data-testid="reasons-not-dispatched"] th[scope="row"], [data-testid="attention"], h2, h3, th[scope="col"], ` +
		`[data-testid="handoff-by-intent-table"] th[scope="row"], [data-testid="readiness-table"] th[scope="row"], .bar-label, ` +
		`#intent option, #action option, label`).Each(func(_ int, s *goquery.Selection) {
		if m := code.FindString(s.Text()); m != "" {
			t.Errorf("%q in %q", m, s.Text())
		}
	})

	// The success chart: a floor near the data, the target line at 95%
	// with its tick labelled and a legend that says what the line is.
	chart := doc.Find(`[data-testid="trend-action_success"]`)
	floor, _ := strconv.ParseFloat(chart.Find(`svg`).AttrOr("data-floor", ""), 64)
	if floor < 0.5 {
		t.Errorf("the success chart starts at %v, far below data near 90%%", floor)
	}
	if v := chart.Find(`line.threshold`).AttrOr("data-value", ""); v != "0.95" {
		t.Errorf("target line at %q", v)
	}
	if got := chart.Find(`.yaxis li.on-line`).Text(); got != "95%" {
		t.Errorf("target tick %q", got)
	}
	if got := chart.Find(`figcaption.legend`).Text(); !strings.Contains(got, "Dashed line: target 95%.") {
		t.Errorf("legend %q", got)
	}
}
