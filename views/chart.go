package views

import (
	"fmt"
	"math"
	"strings"
)

// Chart geometry, in SVG user units. The plot is stretched to the width
// of its card (preserveAspectRatio none) and holds no text: the axis
// labels are HTML beside and below it, so they render at the page's font
// size on any screen.
const (
	chartHeight = 160
	// chartPadDays is the margin left and right of the first and last
	// day, in days.
	chartPadDays = 0.4
)

// LineChart is a trend drawn server-side: one point per day with data, the
// line joining them; days without data leave a gap in the line. The
// vertical scale runs from Floor to Top, chosen to fit the data and the
// metric's warning lines.
type LineChart struct {
	// ID names the chart for aria-labelledby and tests.
	ID    string
	Title string
	// Floor and Top are the values at the bottom and top of the plot.
	Floor, Top float64
	// Ticks are the labelled values of the vertical axis, top first,
	// evenly spaced from Top to Floor.
	Ticks []ChartTick
	// Lines are the warning thresholds drawn across the plot.
	Lines  []ChartLine
	Points []ChartPoint
	// Segments are the polylines' "x,y x,y" point lists.
	Segments []string
	// FirstDay and LastDay label the horizontal axis.
	FirstDay, LastDay string
	// Days is the plot's width in days, first to last (at least 1).
	Days int
	// Scale says the vertical range in words, for the caption.
	Scale string
	// Today is the last day when it is still under way: drawn as a ring
	// apart from the line (a few hours are not a day, and a rate of a
	// morning's handful would pull the line to 0 % or 100 %), left out of
	// the scale, and said in the legend. Nil otherwise.
	Today *ChartPoint
}

// ChartTick is one label of the vertical axis; Line is set when a
// threshold sits on it.
type ChartTick struct {
	Value float64
	Y     float64
	Label string
	Line  bool
}

// ChartLine is a threshold across the plot.
type ChartLine struct {
	Value float64
	Y     float64
	Label string
}

// ChartPoint is one plotted value.
type ChartPoint struct {
	X, Y float64
	// Value is the plotted number, Label its day, Text how the table says it.
	Value float64
	Label string
	Text  string
}

// ChartScale is how a trend's vertical axis is chosen: the values and
// threshold lines it must show, the tick steps it may use (smallest
// first), the range it must stay in, and how a tick is written.
type ChartScale struct {
	Steps    []float64
	Min, Max float64
	// MaxTicks bounds the number of labels; 6 when zero.
	MaxTicks int
	// Zero starts the scale at Min whatever the data (times, counts).
	Zero   bool
	Lines  []ChartLine
	Format func(float64) string
}

// Fit chooses floor, top and step so that every value and line is inside,
// the range is as tight as the steps allow (so a 89% against a 95% target
// is visibly short, not a hair's width on a 0–100% scale), a line never
// sits on the very edge, and, when some step allows it, every line falls
// on a labelled tick.
func (s ChartScale) Fit(values []float64) (floor, top, step float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	for _, l := range s.Lines {
		lo, hi = math.Min(lo, l.Value), math.Max(hi, l.Value)
	}
	if math.IsInf(lo, 1) {
		lo, hi = s.Min, s.Max
	}
	lo, hi = math.Max(lo, s.Min), math.Min(hi, s.Max)
	if s.Zero {
		lo = s.Min
	}
	maxTicks := s.MaxTicks
	if maxTicks == 0 {
		maxTicks = 6
	}
	fit := func(step float64, onTicks bool) (float64, float64, bool) {
		if onTicks {
			for _, l := range s.Lines {
				if r := l.Value / step; math.Abs(r-math.Round(r)) > 1e-9 {
					return 0, 0, false
				}
			}
		}
		f := math.Floor(lo/step+1e-9) * step
		t := math.Ceil(hi/step-1e-9) * step
		if t-f < step/2 {
			t = f + step
		}
		for _, l := range s.Lines {
			// Headroom: a line is never drawn on the top or bottom edge.
			if math.Abs(l.Value-t) < 1e-9 && t+step <= s.Max+1e-9 {
				t += step
			}
			if math.Abs(l.Value-f) < 1e-9 && f-step >= s.Min-1e-9 {
				f -= step
			}
		}
		f, t = math.Max(f, s.Min), math.Min(t, s.Max)
		f, t = math.Round(f/step)*step, math.Round(t/step)*step
		f, t = math.Round(f*1e9)/1e9, math.Round(t*1e9)/1e9
		n := int(math.Round((t-f)/step)) + 1
		return f, t, n <= maxTicks
	}
	for _, onTicks := range []bool{true, false} {
		for _, st := range s.Steps {
			if f, t, ok := fit(st, onTicks); ok {
				return f, t, st
			}
		}
	}
	st := s.Steps[len(s.Steps)-1]
	f, t, _ := fit(st, false)
	return f, t, st
}

// NewLineChart lays out values (NaN for a day without data) over labels
// on the scale Fit chooses; a value outside it is drawn at its edge. With
// partialLast the last day is today, still under way: it becomes Today,
// not a point of the line.
func NewLineChart(id, title string, labels []string, values []float64, texts []string, scale ChartScale, partialLast bool) LineChart {
	fitted := values
	if partialLast && len(values) > 0 {
		fitted = append([]float64(nil), values...)
		fitted[len(fitted)-1] = math.NaN()
	}
	floor, top, step := scale.Fit(fitted)
	c := LineChart{ID: id, Title: title, Floor: floor, Top: top}
	y := func(v float64) float64 {
		if top <= floor {
			return chartHeight
		}
		r := math.Min(math.Max((v-floor)/(top-floor), 0), 1)
		// Whole units: under half a pixel at the chart's height, and two
		// characters fewer in each of the line's and the dots' points.
		return math.Round(chartHeight - r*chartHeight)
	}
	for v := top; v >= floor-step/2; v -= step {
		v := math.Round(math.Round(v/step)*step*1e9) / 1e9
		tick := ChartTick{Value: v, Y: y(v), Label: scale.Format(v)}
		for _, l := range scale.Lines {
			if math.Abs(l.Value-v) < 1e-9 {
				tick.Line = true
			}
		}
		c.Ticks = append(c.Ticks, tick)
	}
	var words []string
	for _, l := range scale.Lines {
		c.Lines = append(c.Lines, ChartLine{Value: l.Value, Y: y(l.Value), Label: l.Label})
		words = append(words, "dashed line: "+l.Label)
	}
	c.Scale = strings.Join(append(words, "scale from "+scale.Format(floor)+" to "+scale.Format(top)), "; ")
	if len(labels) > 0 {
		c.FirstDay, c.LastDay = labels[0], labels[len(labels)-1]
	}
	// A day is one unit across: x is the day's index, a short number in
	// each of the line's and the dots' points (the plot is stretched to
	// its box anyway, and every stroke keeps its width).
	n := len(values)
	c.Days = max(n-1, 1)
	var seg []string
	flush := func() {
		if len(seg) > 0 {
			c.Segments = append(c.Segments, strings.Join(seg, " "))
			seg = nil
		}
	}
	for i, v := range values {
		if math.IsNaN(v) {
			flush()
			continue
		}
		x := float64(i)
		py := y(v)
		if partialLast && i == n-1 {
			flush()
			c.Today = &ChartPoint{X: x, Y: py, Value: v, Label: labels[i], Text: texts[i]}
			continue
		}
		c.Points = append(c.Points, ChartPoint{X: x, Y: py, Value: v, Label: labels[i], Text: texts[i]})
		seg = append(seg, fmt.Sprintf("%g,%g", x, py))
	}
	flush()
	return c
}

// ViewBox is the SVG viewBox attribute.
func (c LineChart) ViewBox() string {
	return fmt.Sprintf("%g 0 %g %d", -chartPadDays, float64(c.Days)+2*chartPadDays, chartHeight)
}

// Right is the x of the plot's right edge, where the grid and the
// threshold lines end.
func (c LineChart) Right() string { return f1(float64(c.Days) + chartPadDays) }

// Left is the x of the plot's left edge.
func (c LineChart) Left() string { return f1(-chartPadDays) }

// ScaleText says the vertical range: "Scale from 85% to 100%."
func (c LineChart) ScaleText() string {
	if len(c.Ticks) == 0 {
		return ""
	}
	return consoleWith("console.metrics.chart.scale", map[string]any{"From": c.Ticks[len(c.Ticks)-1].Label, "To": c.Ticks[0].Label})
}

// AccessibleTitle is the chart's title with its scale and lines in words.
func (c LineChart) AccessibleTitle() string { return c.Title + " (" + c.Scale + ")" }

// BarChart is one bar per group (intent, action), longest first as given.
type BarChart struct {
	ID    string
	Title string
	Max   float64
	Bars  []ChartBar
}

// ChartBar is one horizontal bar; Width is its length in percent of the
// full bar.
type ChartBar struct {
	Width float64
	Value float64
	Label string
	Text  string
}

// NewBarChart lays out one bar per value, scaled so that max fills the
// width.
func NewBarChart(id, title string, labels []string, values []float64, texts []string, max float64) BarChart {
	c := BarChart{ID: id, Title: title, Max: max}
	for i, v := range values {
		w := 0.0
		if max > 0 {
			w = round1(math.Min(v/max, 1) * 100)
		}
		c.Bars = append(c.Bars, ChartBar{Width: w, Value: v, Label: labels[i], Text: texts[i]})
	}
	return c
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

func f1(f float64) string { return fmt.Sprintf("%g", f) }

// f4 writes a value for a data- attribute, exactly enough for tests.
func f4(f float64) string { return fmt.Sprintf("%.6g", f) }

// attentionHref is where an attention item links: where its items are, or
// its metric's card.
func attentionHref(a AttentionItem) string {
	if a.Href != "" {
		return a.Href
	}
	return "#m-" + a.ID
}

// GridPath draws the horizontal grid lines, one at each tick, as one path.
func (c LineChart) GridPath() string {
	var b strings.Builder
	for _, t := range c.Ticks {
		fmt.Fprintf(&b, "M%g %gH%g", -chartPadDays, t.Y, float64(c.Days)+chartPadDays)
	}
	return b.String()
}

// DotsPath draws a dot at each point as a zero-length segment of one path:
// round caps make it a dot that the stretched plot does not distort.
func (c LineChart) DotsPath() string {
	var b strings.Builder
	for _, p := range c.Points {
		fmt.Fprintf(&b, "M%g %gh0", p.X, p.Y)
	}
	return b.String()
}

// TodayPath draws today's ring (see Today) as a zero-length segment, like
// a dot.
func (c LineChart) TodayPath() string {
	if c.Today == nil {
		return ""
	}
	return fmt.Sprintf("M%g %gh0", c.Today.X, c.Today.Y)
}

// dayTableURL is a metric's per-day table under the page's filter.
func dayTableURL(id, query string) string {
	if query == "" {
		return "/metrics/table/" + id
	}
	return "/metrics/table/" + id + "?" + query
}
