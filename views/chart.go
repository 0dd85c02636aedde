package views

import (
	"fmt"
	"math"
	"strings"
)

// Chart geometry, in SVG user units.
const (
	chartWidth  = 600
	chartHeight = 160
	chartPad    = 24
)

// LineChart is a trend drawn server-side: one point per day with data, the
// line joining them; days without data leave a gap in the line.
type LineChart struct {
	// ID names the chart for aria-labelledby and tests.
	ID    string
	Title string
	// Max is the value at the top of the plot.
	Max      float64
	MaxLabel string
	Points   []ChartPoint
	// Segments are the polylines' "x,y x,y" point lists.
	Segments []string
}

// ChartPoint is one plotted value.
type ChartPoint struct {
	X, Y float64
	// Value is the plotted number, Label its day, Text how the table says it.
	Value float64
	Label string
	Text  string
}

// BarChart is one bar per group (intent, action), longest first as given.
type BarChart struct {
	ID    string
	Title string
	Max   float64
	Bars  []ChartBar
}

// ChartBar is one horizontal bar.
type ChartBar struct {
	Y, Width, Height float64
	Value            float64
	Label            string
	Text             string
}

// ViewBox is the SVG viewBox attribute.
func (c LineChart) ViewBox() string { return fmt.Sprintf("0 0 %d %d", chartWidth, chartHeight) }

// NewLineChart lays out values (NaN for a day without data) over labels,
// scaled so that max is the top; a value above max is drawn at the top.
func NewLineChart(id, title string, labels []string, values []float64, texts []string, max float64, maxLabel string) LineChart {
	c := LineChart{ID: id, Title: title, Max: max, MaxLabel: maxLabel}
	n := len(values)
	step := 0.0
	if n > 1 {
		step = float64(chartWidth-2*chartPad) / float64(n-1)
	}
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
		x := float64(chartPad) + step*float64(i)
		y := float64(chartHeight - chartPad)
		if max > 0 {
			y -= math.Min(v/max, 1) * float64(chartHeight-2*chartPad)
		}
		x, y = round1(x), round1(y)
		c.Points = append(c.Points, ChartPoint{X: x, Y: y, Value: v, Label: labels[i], Text: texts[i]})
		seg = append(seg, fmt.Sprintf("%g,%g", x, y))
	}
	flush()
	return c
}

// barRow is the height of one bar row; bars start after a 200-unit label
// column and leave room for their value after them.
const (
	barRow      = 28
	barMaxWidth = 250
)

// NewBarChart lays out one bar per value, scaled so that max fills the
// width.
func NewBarChart(id, title string, labels []string, values []float64, texts []string, max float64) BarChart {
	c := BarChart{ID: id, Title: title, Max: max}
	for i, v := range values {
		w := 0.0
		if max > 0 {
			w = round1(math.Min(v/max, 1) * barMaxWidth)
		}
		c.Bars = append(c.Bars, ChartBar{Y: float64(i * barRow), Width: w, Height: barRow - 8, Value: v, Label: labels[i], Text: texts[i]})
	}
	return c
}

// ViewBox is the bar chart's SVG viewBox attribute.
func (c BarChart) ViewBox() string {
	return fmt.Sprintf("0 0 %d %d", chartWidth, max(len(c.Bars), 1)*barRow)
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

func f1(f float64) string { return fmt.Sprintf("%g", f) }
