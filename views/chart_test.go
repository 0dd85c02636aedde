package views

import (
	"fmt"
	"math"
	"testing"
)

func pct(r float64) string { return fmt.Sprintf("%g%%", math.Round(r*1000)/10) }

var ratioScale = ChartScale{Steps: []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.25}, Min: 0, Max: 1, Format: pct}

// TestChartScaleFitsDataAndTarget: 89% against a 95% target is drawn on a
// scale from a floor near the data, with the target on a labelled tick
// and visibly above the data; not on a 0–100% scale.
func TestChartScaleFitsDataAndTarget(t *testing.T) {
	s := ratioScale
	s.Lines = []ChartLine{{Value: 0.95, Label: "target 95%"}}
	c := NewLineChart("success", "Success", []string{"d1", "d2", "d3"}, []float64{0.89, math.NaN(), 0.91}, []string{"89%", "", "91%"}, s, false)
	if c.Floor != 0.85 || c.Top != 1 {
		t.Fatalf("scale %v–%v, want 85%%–100%%", c.Floor, c.Top)
	}
	var labels []string
	onLine := ""
	for _, tk := range c.Ticks {
		labels = append(labels, tk.Label)
		if tk.Line {
			onLine = tk.Label
		}
	}
	if fmt.Sprint(labels) != "[100% 95% 90% 85%]" || onLine != "95%" {
		t.Errorf("ticks %v, target tick %q", labels, onLine)
	}
	// The plot is 160 units high: the gap between 89% and the target is
	// more than a third of it (on 0–100% it would be 6%, under 10 units).
	if gap := c.Points[0].Y - c.Lines[0].Y; gap < 160.0/3 {
		t.Errorf("89%% is only %v units below the target", gap)
	}
	if len(c.Segments) != 2 || c.FirstDay != "d1" || c.LastDay != "d3" {
		t.Errorf("segments %v, days %s–%s", c.Segments, c.FirstDay, c.LastDay)
	}
	if c.AccessibleTitle() != "Success (dashed line: target 95%; scale from 85% to 100%)" {
		t.Errorf("title %q", c.AccessibleTitle())
	}
}

func TestChartScaleCases(t *testing.T) {
	hours := ChartScale{Steps: []float64{900, 1800, 3600, 7200, 14400, 21600, 43200, 86400, 172800, 604800}, Min: 0, Max: math.Inf(1), Zero: true,
		Format: func(f float64) string { return fmt.Sprint(f) }}
	cases := []struct {
		name             string
		scale            ChartScale
		lines            []float64
		values           []float64
		floor, top, step float64
	}{
		{"all at 100% above a 95% target: the target is not on the edge", ratioScale, []float64{0.95}, []float64{1, 1}, 0.9, 1, 0.05},
		{"two lines far apart", ratioScale, []float64{0.02, 0.30}, []float64{0.1, 0.12}, 0, 0.4, 0.1},
		{"no data: the line alone", ratioScale, []float64{0.4}, []float64{math.NaN()}, 0.39, 0.41, 0.01},
		{"nothing at all", ratioScale, nil, nil, 0, 1, 0.2},
		{"times from zero, up past a 4h line", hours, []float64{14400}, []float64{3600, 28800, math.Inf(1)}, 0, 28800, 7200},
	}
	for _, tc := range cases {
		s := tc.scale
		for _, l := range tc.lines {
			s.Lines = append(s.Lines, ChartLine{Value: l})
		}
		f, top, step := s.Fit(tc.values)
		if math.Abs(f-tc.floor) > 1e-9 || math.Abs(top-tc.top) > 1e-9 || step != tc.step {
			t.Errorf("%s: %v–%v by %v, want %v–%v by %v", tc.name, f, top, step, tc.floor, tc.top, tc.step)
		}
		for _, v := range append(tc.values, tc.lines...) {
			if !math.IsNaN(v) && !math.IsInf(v, 0) && (v < f-1e-9 || v > top+1e-9) {
				t.Errorf("%s: %v is off the scale %v–%v", tc.name, v, f, top)
			}
		}
	}
}
