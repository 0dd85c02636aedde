package console_test

import (
	"context"
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/store/dbtest"
	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"countersign/internal/accounts"
)

// TestMetricsPageMatchesRawRecompute recomputes every metric from the raw
// rows and compares it with what the page shows, for several filters.
func TestMetricsPageMatchesRawRecompute(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	webtest.LoadHistory(t, b, 3000, 700)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])
	from, to := time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range []struct{ system, action, intent, assistant string }{
		{}, {action: "issue_refund"}, {system: "shop", intent: "transactional_high"}, {assistant: "asst_hist", action: "resend_receipt"},
		{assistant: "nobody"},
	} {
		q := fmt.Sprintf("/metrics?from=%s&to=%s&system=%s&action=%s&intent=%s&assistant=%s", from.Format(time.DateOnly),
			to.Format(time.DateOnly), f.system, f.action, f.intent, f.assistant)
		res := c.Get(q)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", q, res.StatusCode)
		}
		want := rawMetrics(t, b, from, to.AddDate(0, 0, 1), f.system, f.action, f.intent, f.assistant)
		if diff := cmp.Diff(want, webtest.ShownMetrics(t, res.Doc(t))); diff != "" {
			t.Errorf("%s (-raw +page):\n%s", q, diff)
		}
	}
	// The unfiltered page is not trivial: every metric has data.
	for id, v := range rawMetrics(t, b, from, to.AddDate(0, 0, 1), "", "", "", "") {
		if v[0] == "no data" {
			t.Errorf("%s has no data in the generated history", id)
		}
	}
}

// openSectionTables fetches, as htmx does when each opens, the tables of
// the metrics page's sections (the groups, the reasons, stage readiness)
// and puts each in its details, as htmx does.
func openSectionTables(t *testing.T, c *webtest.Client, doc *goquery.Document) {
	t.Helper()
	c.Header.Set("HX-Request", "true")
	defer c.Header.Del("HX-Request")
	n := 0
	doc.Find(`section:not(.metric) details.day-table[hx-get]`).Each(func(_ int, d *goquery.Selection) {
		res := c.Get(d.AttrOr("hx-get", ""))
		if res.StatusCode != http.StatusOK || strings.Contains(res.Text, "<html") {
			t.Fatalf("%s: %d, a whole page: %v", d.AttrOr("hx-get", ""), res.StatusCode, strings.Contains(res.Text, "<html"))
		}
		d.Find("div").SetHtml(res.Text)
		n++
	})
	if n == 0 {
		t.Fatal("the metrics page has no section table to open")
	}
}

// svgDoc is the part of a trend chart the test reads.
type svgDoc struct {
	XMLName xml.Name `xml:"svg"`
	Floor   float64  `xml:"data-floor,attr"`
	Top     float64  `xml:"data-top,attr"`
	Lines   []struct {
		Points string `xml:"points,attr"`
	} `xml:"polyline"`
	Marks []chartMark `xml:"line"`
	Paths []chartPath `xml:"path"`
}

// chartMark is a line of a chart: a grid line or a threshold.
type chartMark struct {
	Class string  `xml:"class,attr"`
	Y     float64 `xml:"y1,attr"`
	Value float64 `xml:"data-value,attr"`
}

// chartPath is a path of a chart: the grid or the dots.
type chartPath struct {
	Class string `xml:"class,attr"`
	D     string `xml:"d,attr"`
}

// chartDot is a data point of a chart, with its day and value from the
// chart's per-day table.
type chartDot struct {
	X, Y  float64
	Day   string
	Value float64
}

// dots are the chart's data points, each a zero-length segment
// ("Mx yh0") of its dots path.
func (d svgDoc) dots(t *testing.T) []chartDot {
	t.Helper()
	return d.pathDots(t, "dots")
}

// pathDots are the points of the chart's paths of class.
func (d svgDoc) pathDots(t *testing.T, class string) []chartDot {
	t.Helper()
	var out []chartDot
	for _, p := range d.Paths {
		if p.Class != class {
			continue
		}
		for _, seg := range strings.Split(strings.TrimPrefix(p.D, "M"), "M") {
			var dot chartDot
			if _, err := fmt.Sscanf(seg, "%g %gh0", &dot.X, &dot.Y); err != nil {
				t.Fatalf("dot %q: %v", seg, err)
			}
			out = append(out, dot)
		}
	}
	return out
}

// TestMetricsChartsAreXMLAndMatchTheData parses every trend chart as XML
// and checks the success-rate trend's points against the raw data per
// day, on the scale the chart declares; and every bar against its table
// row.
func TestMetricsChartsAreXMLAndMatchTheData(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	webtest.LoadHistory(t, b, 1200, 300)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])
	res := c.Get("/metrics?from=2026-03-20&to=2026-04-01")
	doc := res.Doc(t)
	charts := doc.Find(`svg.chart`)
	if charts.Length() != 10 {
		t.Errorf("%d charts, want a trend per metric (10)", charts.Length())
	}
	if n := doc.Find(`svg text`).Length(); n != 0 {
		t.Errorf("%d SVG text elements: axis text scales with the chart; it belongs in HTML", n)
	}
	parsed := map[string]svgDoc{}
	charts.Each(func(_ int, s *goquery.Selection) {
		html, err := goquery.OuterHtml(s)
		if err != nil {
			t.Fatal(err)
		}
		var d svgDoc
		if err := xml.Unmarshal([]byte(html), &d); err != nil {
			t.Errorf("%s is not XML: %v", s.AttrOr("data-testid", "?"), err)
		}
		// Its accessible name: the card's heading and the chart's caption
		// (its lines and scale in words).
		var name []string
		for _, id := range strings.Fields(s.AttrOr("aria-labelledby", "")) {
			name = append(name, strings.TrimSpace(doc.Find("#"+id).Text()))
		}
		if len(name) != 2 || name[0] == "" || !strings.Contains(name[1], "Scale from") {
			t.Errorf("%s is named %q", s.AttrOr("data-testid", "?"), name)
		}
		parsed[s.AttrOr("data-testid", "")] = d
	})
	success := parsed["chart-action_success"]
	dots := success.dots(t)
	// The last day, 2026-04-01, is today: a ring apart from the line, said
	// so in the legend and the table.
	today := success.pathDots(t, "today-dot")
	if len(dots) != 12 || len(today) != 1 {
		t.Fatalf("success chart has %d points and %d rings, want one per full day (12) and today's", len(dots), len(today))
	}
	for _, l := range success.Lines {
		if strings.Contains(l.Points, fmt.Sprintf("%g,", today[0].X)) {
			t.Errorf("today's partial point is joined to the line: %s", l.Points)
		}
	}
	if legend := doc.Find(`[data-testid="metric-action_success"] [data-testid="legend-today"]`).Text(); !strings.Contains(legend, "today so far") {
		t.Errorf("the legend does not say which point is today so far: %q", legend)
	}
	dots = append(dots, today...)
	// The chart's days and values are its table's, which comes when opened.
	link := doc.Find(`[data-testid="metric-action_success"] details.day-table`)
	c.Header.Set("HX-Request", "true")
	table := c.Get(link.AttrOr("hx-get", "")).Doc(t)
	c.Header.Del("HX-Request")
	rows := table.Find(`[data-testid="trend-table"] tbody tr`)
	if rows.Length() != len(dots) {
		t.Fatalf("the success table (%s) has %d rows for %d dots", link.AttrOr("hx-get", ""), rows.Length(), len(dots))
	}
	rows.Each(func(i int, r *goquery.Selection) {
		dots[i].Day = strings.Fields(r.Find("th").Text())[0]
		if _, err := fmt.Sscan(r.Find("td").AttrOr("data-value", ""), &dots[i].Value); err != nil {
			t.Errorf("row %d: %v", i, err)
		}
	})
	if !(success.Floor < success.Top && success.Top <= 1 && success.Floor >= 0) {
		t.Fatalf("scale %v to %v", success.Floor, success.Top)
	}
	var linePoints []string
	for _, l := range success.Lines {
		linePoints = append(linePoints, strings.Fields(l.Points)...)
	}
	for i, d := range dots {
		day, _ := time.Parse(time.DateOnly, d.Day)
		raw := rawMetrics(t, b, day, day.AddDate(0, 0, 1), "", "", "", "")["action_success"]
		var num, den float64
		if _, err := fmt.Sscanf(strings.ReplaceAll(raw[1], ",", ""), "%g of %g", &num, &den); err != nil {
			t.Fatalf("%s: raw %q: %v", d.Day, raw[1], err)
		}
		if math.Abs(d.Value-num/den) > 1e-5 {
			t.Errorf("%s: point %v, raw %s", d.Day, d.Value, raw[1])
		}
		r := math.Min(math.Max((d.Value-success.Floor)/(success.Top-success.Floor), 0), 1)
		if wantY := 160 - r*160; math.Abs(d.Y-wantY) > 0.5 { // whole units
			t.Errorf("%s: y %v, want %v on the scale %v–%v", d.Day, d.Y, wantY, success.Floor, success.Top)
		}
		if i < len(linePoints) && linePoints[i] != fmt.Sprintf("%g,%g", d.X, d.Y) {
			t.Errorf("line point %d is %s, dot is %g,%g", i, linePoints[i], d.X, d.Y)
		}
	}
	bars := doc.Find(`[data-testid="chart-handoff-by-intent"] li`)
	if n := doc.Find(`[data-testid="handoff-by-intent-table"]`).Length(); n != 0 {
		t.Errorf("the page carries the handoff table (%d) before it is opened", n)
	}
	openSectionTables(t, c, doc)
	rows = doc.Find(`[data-testid="handoff-by-intent-table"] tbody tr`)
	if bars.Length() == 0 || bars.Length() != rows.Length() {
		t.Fatalf("%d bars, %d table rows", bars.Length(), rows.Length())
	}
	bars.Each(func(i int, bar *goquery.Selection) {
		rect := bar.Find("rect")
		var width, value float64
		if _, err := fmt.Sscan(rect.AttrOr("width", ""), &width); err != nil {
			t.Errorf("bar %d: width: %v", i, err)
		}
		if _, err := fmt.Sscan(rect.AttrOr("data-value", ""), &value); err != nil {
			t.Errorf("bar %d: data-value: %v", i, err)
		}
		if want := math.Round(value*100*10) / 10; math.Abs(width-want) > 0.06 {
			t.Errorf("bar %d: width %v%% for value %v", i, width, value)
		}
		cell := rows.Eq(i).Find("td").Text()
		if !strings.HasPrefix(cell, fmt.Sprintf("%.1f%%", value*100)) || bar.Find(".bar-value").Text() != cell {
			t.Errorf("bar %d value %v (%q), table says %q", i, value, bar.Find(".bar-value").Text(), cell)
		}
	})
}

// TestMetricsCSVExports downloads every table as CSV and checks the
// summary against the page.
func TestMetricsCSVExports(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	webtest.LoadHistory(t, b, 600, 200)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])
	q := "?from=2026-03-05&to=2026-04-01"
	page := webtest.ShownMetrics(t, c.Get("/metrics"+q).Doc(t))
	for _, name := range []string{"summary", "trend", "handoff_by_intent", "actions", "reasons", "readiness"} {
		res := c.Get("/metrics/" + name + ".csv" + q)
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("%s: %d %s", name, res.StatusCode, res.Header.Get("Content-Type"))
		}
		records, err := csv.NewReader(strings.NewReader(res.Text)).ReadAll()
		if err != nil || len(records) < 2 {
			t.Fatalf("%s: %d records, %v", name, len(records), err)
		}
		if name != "summary" {
			continue
		}
		for _, rec := range records[1:] {
			if shown, ok := page[rec[0]]; ok && shown[0] != rec[1] {
				t.Errorf("%s: page %q, csv %q", rec[0], shown[0], rec[1])
			}
		}
	}
	for _, bad := range []string{"/metrics/nope.csv", "/metrics/summary.txt"} {
		if res := c.Get(bad); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", bad, res.StatusCode)
		}
	}
}

// TestMetricsEmptyAndBadFilter: an empty history says "no data" everywhere
// and a bad date re-renders the form with 422.
func TestMetricsEmptyAndBadFilter(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Admin])
	doc := c.Get("/metrics").Doc(t)
	for id, v := range webtest.ShownMetrics(t, doc) {
		if v[0] != "no data" {
			t.Errorf("%s: %q on an empty history", id, v[0])
		}
	}
	if doc.Find(`[data-testid="metric-warning"]`).Length() != 0 {
		t.Error("a warning fired on an empty history")
	}
	if got := doc.Find(`[data-testid="attention"] h2`).Text(); !strings.HasPrefix(got, "Every metric is within its limits for ") {
		t.Errorf("attention on an empty history: %q", got)
	}
	res := c.Get("/metrics?from=yesterday")
	if res.StatusCode != http.StatusUnprocessableEntity || res.Doc(t).Find(`#from[aria-invalid="true"]`).Length() != 1 {
		t.Errorf("bad date: %d", res.StatusCode)
	}
}

// TestManagerPagesRoles: agents and customers see none of the manager's
// pages, nor the links to them; managers and admins do.
func TestManagerPagesRoles(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	for _, role := range accounts.Roles {
		c := b.Client(t)
		c.MustSignIn(b.Users[role])
		allowed := role == accounts.Manager || role == accounts.Admin
		for _, path := range []string{"/metrics", "/metrics/summary.csv", "/policies", "/policies/shop/issue_refund"} {
			res := c.Get(path)
			if allowed != (res.StatusCode == http.StatusOK) || (!allowed && res.StatusCode != http.StatusForbidden) {
				t.Errorf("%s GET %s: %d", role, path, res.StatusCode)
			}
		}
		home := c.Get("/").Doc(t)
		if got := home.Find(`nav a[href="/metrics"]`).Length() > 0; got != allowed {
			t.Errorf("%s sees the metrics link: %v", role, got)
		}
		if allowed {
			continue
		}
		res := c.Post("/policies/shop/issue_refund", url.Values{"_csrf": {c.CSRF("/")}, "intent": {"save"}, "version": {"1"},
			"stage": {"5"}, "enabled": {"on"}, "approval_window": {"24"}, "confirmation_window": {"30"}, "reason": {"try"}})
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("%s POST policy: %d, want 403", role, res.StatusCode)
		}
	}
	p, err := b.Control.Policy(context.Background(), "shop", "issue_refund")
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != 1 || p.Stage != 3 {
		t.Errorf("agents or customers changed the policy: %+v", p)
	}
	if n, _ := dbtest.CountEvents(context.Background(), b.Store.Pool(), "policy.changed", nil); n != 0 {
		t.Errorf("%d policy.changed events", n)
	}
}
