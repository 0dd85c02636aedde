package journeys_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/web/browsertest"
)

// chartTextJS measures, in the rendered page, the smallest font size of
// the charts' axis labels, legends and bar labels, and counts SVG text
// (which would shrink with its chart).
const chartTextJS = `(() => {
	const els = [...document.querySelectorAll('.trend .yaxis li, .trend .xaxis span, .trend .legend, .bar-list li > span')]
		.filter(e => e.getBoundingClientRect().height > 0);
	return {count: els.length, min: Math.min(...els.map(e => parseFloat(getComputedStyle(e).fontSize))),
		svgText: document.querySelectorAll('svg text').length,
		overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth};
})()`

type chartText struct {
	Count    int     `json:"count"`
	Min      float64 `json:"min"`
	SVGText  int     `json:"svgText"`
	Overflow float64 `json:"overflow"`
}

// targetAlignJS is how far, in CSS pixels, the action success chart's
// target label sits from its dashed line on screen.
const targetAlignJS = `(() => {
	const chart = document.querySelector('[data-testid="trend-action_success"]');
	const label = chart.querySelector('.yaxis li.on-line'), line = chart.querySelector('line.threshold');
	if (!label || !line) return -1;
	const l = label.getBoundingClientRect(), t = line.getBoundingClientRect();
	return Math.abs((l.top + l.height / 2) - (t.top + t.height / 2));
})()`

// chartAlignJS groups the metric cards with a chart by the row they sit
// in and measures how far apart their charts start, and how many rows mix
// a card with a warning badge and one without.
const chartAlignJS = `(() => {
	const rows = {};
	for (const c of document.querySelectorAll('.metric-grid > section.metric')) {
		if (!c.querySelector('svg.chart')) continue;
		(rows[Math.round(c.getBoundingClientRect().top)] ||= []).push(c);
	}
	let worst = 0, mixed = 0;
	for (const r of Object.values(rows)) {
		const tops = r.map(c => c.querySelector('svg.chart').getBoundingClientRect().top);
		worst = Math.max(worst, Math.max(...tops) - Math.min(...tops));
		const badges = r.map(c => !!c.querySelector('[data-testid="metric-warning"]'));
		if (badges.includes(true) && badges.includes(false)) mixed++;
	}
	return {rows: Object.keys(rows).length, mixed, worst};
})()`

type chartAlign struct {
	Rows  int     `json:"rows"`
	Mixed int     `json:"mixed"`
	Worst float64 `json:"worst"`
}

func checkChartText(t *testing.T, width string, got chartText) {
	t.Helper()
	t.Logf("%s: %d chart labels, smallest %vpx, %d SVG text elements, sideways scroll %vpx", width, got.Count, got.Min, got.SVGText, got.Overflow)
	if got.Count < 20 || got.Min < 12 {
		t.Errorf("%s: %d chart labels, smallest %vpx; want every one at 12px or more", width, got.Count, got.Min)
	}
	if got.SVGText != 0 {
		t.Errorf("%s: %d SVG text elements scale with their chart", width, got.SVGText)
	}
	if got.Overflow > 1 {
		t.Errorf("%s: the page scrolls sideways by %vpx", width, got.Overflow)
	}
}

// TestBrowserManagerPages signs a manager in through the form in headless
// Chromium and reads the metrics page over generated history, at desktop
// and phone width: axis text renders at 12px or more, the target label
// sits on its dashed line, nothing scrolls sideways, and axe finds no
// serious or critical violations. Then it previews a policy draft and
// reads what it changes against today's policy. Screenshots:
// metrics-desktop.png, metrics-phone.png,
// countersign-policy-whatif.png, countersign-policy-whatif-phone.png.
func TestBrowserManagerPages(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	webtest.LoadHistory(t, b, 2000, 500)
	ctx := browsertest.New(t, 120*time.Second)
	u := b.Users[accounts.Manager]
	err := chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+"/sign-in"),
		browserSignIn(u),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`)),
		chromedp.Navigate(b.Server.URL+"/metrics"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="metric-action_success"] svg.chart`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	value, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="metric-action_success"] [data-testid="metric-value"]`)))
	if err != nil || !strings.HasSuffix(value, "%") {
		t.Errorf("success rate reads %q (%v)", value, err)
	}
	desktop, err := chromedp.Run(ctx, chromedp.Evaluate[chartText](chartTextJS))
	if err != nil {
		t.Fatal(err)
	}
	checkChartText(t, "desktop", desktop)
	if d, err := chromedp.Run(ctx, chromedp.Evaluate[float64](targetAlignJS)); err != nil || d < 0 || d > 4 {
		t.Errorf("the 95%% target label is %vpx from its line (%v)", d, err)
	} else {
		t.Logf("desktop: the 95%% target label is %.1fpx from its line", d)
	}
	// Charts side by side start at the same height, whether or not a card
	// in their row has a warning badge.
	al, err := chromedp.Run(ctx, chromedp.Evaluate[chartAlign](chartAlignJS))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("desktop: %d rows of charts, %d with and without a badge, chart tops differ by up to %.1fpx", al.Rows, al.Mixed, al.Worst)
	if al.Mixed == 0 || al.Worst > 1 {
		t.Errorf("charts in a row start up to %.1fpx apart (%d rows mix badges and none; want one and 1px at most)", al.Worst, al.Mixed)
	}
	legend, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="trend-action_success"] figcaption.legend`)))
	if !strings.Contains(legend, "Dashed line: target 95%") {
		t.Errorf("success chart legend: %q", legend)
	}
	// Bars compare: every bar's full track has the same width in a chart.
	spread, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`Math.max(...[...document.querySelectorAll('.bar-list')].map(l => {
		const w = [...l.querySelectorAll('svg.bar')].map(s => s.getBoundingClientRect().width);
		return Math.max(...w) - Math.min(...w); }))`))
	if err != nil || spread > 1 {
		t.Errorf("bar tracks differ by %vpx within a chart (%v)", spread, err)
	}
	// A per-day table comes when its details open, by the keyboard too.
	err = chromedp.Do(ctx,
		chromedp.Focus(chromedp.CSS(`[data-testid="metric-action_success"] details.day-table summary`)),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="metric-action_success"] [data-testid="trend-table"] tbody tr`)),
	)
	if err != nil {
		t.Fatalf("opening the success table: %v", err)
	}
	browsertest.CheckAccessibility(t, ctx, "metrics")
	browsertest.Screenshot(t, ctx, "metrics-desktop.png")

	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(b.Server.URL+"/metrics"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="metric-action_success"] svg.chart`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	phone, err := chromedp.Run(ctx, chromedp.Evaluate[chartText](chartTextJS))
	if err != nil {
		t.Fatal(err)
	}
	checkChartText(t, "phone", phone)
	if d, err := chromedp.Run(ctx, chromedp.Evaluate[float64](targetAlignJS)); err != nil || d < 0 || d > 4 {
		t.Errorf("phone: the 95%% target label is %vpx from its line (%v)", d, err)
	}
	browsertest.CheckAccessibility(t, ctx, "metrics on a phone")
	browsertest.Screenshot(t, ctx, "metrics-phone.png")

	// Filtering by the keyboard-free path: the form's GET keeps the choice.
	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(b.Server.URL+"/metrics?action=issue_refund"),
		// Stage readiness comes when its details open, by the keyboard.
		chromedp.Focus(chromedp.CSS(`[data-testid="readiness"] details.day-table summary`)),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="readiness-shop-issue_refund"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	selected, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`#action`)))
	if err != nil || selected != "issue_refund" {
		t.Errorf("action filter shows %q (%v)", selected, err)
	}

	err = chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+"/policies"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="policies-table"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if v := browsertest.Axe(t, ctx); len(v) > 0 {
		t.Errorf("policies: %d serious accessibility violations: %+v", len(v), v)
	}
	// A draft that moves refunds from stage 3 to stage 5 (automatic up to
	// $50, owned by this manager): the what-if leads with the change.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="policy-shop-issue_refund"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="policy-form"]`)),
		chromedp.SetValue(chromedp.CSS(`#stage`), "5"),
		chromedp.SetValue(chromedp.CSS(`#owner`), fmt.Sprint(u.ID)),
		chromedp.SetValue(chromedp.CSS(`#auto_max`), "50"),
		chromedp.Click(chromedp.CSS(`[data-testid="policy-preview"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="what-if-summary"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	summary, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="what-if-summary"]`)))
	if !strings.HasPrefix(summary, "Against today's policy, ") || !strings.Contains(summary, "more would have run automatically") {
		t.Errorf("what-if summary: %q", summary)
	}
	cells, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('[data-testid="what-if-table"] td small')].map(e => e.textContent.trim()).filter(s => s)`))
	if err != nil || len(cells) < 8 {
		t.Fatalf("what-if money cells %q (%v)", cells, err)
	}
	moneyRe := regexp.MustCompile(`^[+−]?\$\d{1,3}(,\d{3})*\.\d{2}$`)
	grouped := false
	for _, c := range cells {
		if !moneyRe.MatchString(c) {
			t.Errorf("what-if money %q is not written as $1,234.56", c)
		}
		grouped = grouped || strings.Contains(c, ",")
	}
	if !grouped {
		t.Logf("no what-if amount reached $1,000: %q", cells)
	}
	if v := browsertest.Axe(t, ctx); len(v) > 0 {
		t.Errorf("policy what-if: %d serious accessibility violations: %+v", len(v), v)
	}
	browsertest.Screenshot(t, ctx, "countersign-policy-whatif.png")

	// On a phone the same preview fits the screen: the table does not
	// scroll sideways and axe still finds nothing serious.
	// The preview posts the form and loads a new page: the old page's
	// summary is taken away first, so the wait is for the new page's.
	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="what-if-summary"]').remove()`),
		chromedp.Click(chromedp.CSS(`[data-testid="policy-preview"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="what-if-summary"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	scroll, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`(() => { const w = document.querySelector('[data-testid="what-if"] .table-wrap'); return w.scrollWidth - w.clientWidth; })()`))
	if err != nil || scroll > 1 {
		t.Errorf("the what-if table scrolls sideways by %vpx on a phone (%v)", scroll, err)
	}
	if v := browsertest.Axe(t, ctx); len(v) > 0 {
		t.Errorf("policy what-if on a phone: %d serious accessibility violations: %+v", len(v), v)
	}
	browsertest.Screenshot(t, ctx, "countersign-policy-whatif-phone.png")
}
