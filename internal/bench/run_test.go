package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"countersign/internal/chaos"
	"countersign/internal/slowtest"
)

func TestParseTPS(t *testing.T) {
	out := `pgbench (15.10)
transaction type: <builtin: simple update>
number of failed transactions: 0 (0.000%)
latency average = 4.123 ms
initial connection time = 12.345 ms
tps = 2425.118033 (without initial connection time)
`
	tps, err := parseTPS(out)
	if err != nil || tps != 2425.118033 {
		t.Fatalf("tps %v, %v", tps, err)
	}
	if _, err := parseTPS("pgbench: error: connection refused"); err == nil {
		t.Fatal("output without a tps line must be an error")
	}
}

func TestVmHWMOfThisProcess(t *testing.T) {
	kb, err := vmHWM(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if kb < 1024 || kb > 64*1024*1024 {
		t.Fatalf("this test's peak RSS %d kB is not plausible", kb)
	}
}

// TestQuickRunReportsEveryFigure runs the whole suite over a tiny data set
// with short windows (a real PostgreSQL, pgbench, a console process and
// the shop) and checks the JSON it writes: every figure is there with a
// plausible value, ratios are value over baseline, and the writes left no
// duplicate effect in the shop's ledger.
func TestQuickRunReportsEveryFigure(t *testing.T) {
	slowtest.Skip(t, "starts PostgreSQL, pgbench and a console process")
	bin, err := chaos.BuildConsole(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := Defaults(true)
	cfg.Bin, cfg.Out = bin, testWriter{t}
	cfg.PgbenchDuration, cfg.LoadDuration, cfg.Warmup = time.Second, 1500*time.Millisecond, 300*time.Millisecond
	cfg.Writers, cfg.WriteDuration, cfg.ConfirmSamples = 2, time.Second, 2
	cfg.SmallHistory, cfg.LargeHistory, cfg.Pending = 200, 1000, 100
	bulkRows = 500 // the large load rebuilds its indexes, as a full run's does
	defer func() { bulkRows = 100000 }()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bench.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got Report
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, name := range FigureNames {
		f, ok := got.Figure(name)
		if !ok {
			t.Errorf("figure %s missing from the JSON", name)
			continue
		}
		if f.Value < 0 || (f.Value == 0 && name != "writes_duplicates" && name != "writes_duplicates_64" && name != "pages_compressed" &&
			name != "cpu_us_s_per_waiter") {
			t.Errorf("figure %s = %v", name, f.Value)
		}
		if f.Baseline != "" {
			base, ok := got.Figure(f.Baseline)
			if !ok || base.Value != f.Base || f.Ratio != f.Value/f.Base {
				t.Errorf("figure %s: baseline %s %v (found %v), ratio %v", name, f.Baseline, f.Base, base.Value, f.Ratio)
			}
		}
		if f.Target != "" && f.Met == nil {
			t.Errorf("figure %s has a target and no verdict", name)
		}
	}
	if len(got.Figures) != len(FigureNames) {
		t.Errorf("%d figures, want %d", len(got.Figures), len(FigureNames))
	}
	if d, _ := got.Figure("writes_duplicates"); d.Value != 0 || d.Met == nil || !*d.Met {
		t.Errorf("duplicate effects in the shop's ledger: %+v", d)
	}
	var table strings.Builder
	got.PrintTable(&table)
	for _, name := range FigureNames {
		if !strings.Contains(table.String(), name) {
			t.Errorf("the table lacks %s", name)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
