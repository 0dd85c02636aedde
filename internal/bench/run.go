// Package bench is the benchmark suite behind `make bench` (also
// cmd/bench): in one run on one machine it measures the baselines — pgbench
// -N on the PostgreSQL cluster the console uses, and a bare Echo handler
// under the same HTTP load generator — and then a real console process
// against them: automatic writes per second with duplicates counted from
// the demo shop's ledger, the approval queue and task pages under load
// over a large seeded history, the metrics page at two sizes of history,
// a customer's confirmation to the write leaving, and the console's peak
// memory. It prints each figure next to its baseline and target and writes
// them all as JSON. README.md beside this file describes each figure and
// how it is measured.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"countersign/internal/chaos"
	"countersign/store"
)

// Config sizes a run.
type Config struct {
	// Bin is the built console (cmd/countersign).
	Bin string
	// Out receives the progress lines and the table.
	Out io.Writer `json:"-"`
	// Quick is a short smoke run over a tiny data set (figures are not
	// comparable with a full run's).
	Quick bool
	// Keep leaves the console, the shop and the databases up after the
	// figures until ctx ends, to inspect them (e.g. EXPLAIN in psql).
	Keep bool
	// Only, when not empty, names the steps to run (pgbench, echo, writes,
	// wide, confirm, longpoll, pages); the console always starts. For profiling one
	// step: figures of the others are missing from the report.
	Only []string
	// DebugAddr, when set, is the console's -debug-addr (Go's profiler).
	DebugAddr string

	PgbenchScale    int           // pgbench -i -s
	PgbenchDuration time.Duration // pgbench -T
	LoadDuration    time.Duration // each page load's measured window
	Warmup          time.Duration // each page load's warm-up, not counted
	Writers         int           // tasks writing in parallel
	WriteDuration   time.Duration // how long the writes run
	WideWriters     int           // tasks writing in parallel in the wide run
	WideDuration    time.Duration // how long the wide run's writes run
	ConfirmSamples  int           // confirmations timed one at a time
	Waiters         int           // long polls held at once
	WaitWindow      time.Duration // how long their CPU (and the idle baseline's) is measured
	SmallHistory    int           // invocations of the metrics page's baseline
	LargeHistory    int           // settled invocations of the big data set
	Pending         int           // invocations awaiting approval in it
}

// Defaults returns the full run's sizes, or the quick run's.
func Defaults(quick bool) Config {
	if quick {
		return Config{Quick: true, PgbenchScale: 1, PgbenchDuration: 3 * time.Second, LoadDuration: time.Second,
			Warmup: 200 * time.Millisecond, Writers: 4, WriteDuration: 2 * time.Second, WideWriters: 64,
			WideDuration: 2 * time.Second, ConfirmSamples: 3, Waiters: 100, WaitWindow: 2 * time.Second,
			SmallHistory: 1000, LargeHistory: 5000, Pending: 500}
	}
	return Config{PgbenchScale: 10, PgbenchDuration: 30 * time.Second, LoadDuration: 15 * time.Second,
		Warmup: 2 * time.Second, Writers: 10, WriteDuration: 30 * time.Second, WideWriters: 64,
		WideDuration: 15 * time.Second, ConfirmSamples: 200, Waiters: 500, WaitWindow: 10 * time.Second,
		SmallHistory: 10000, LargeHistory: 1000000, Pending: 100000}
}

// Figure is one measured number with its baseline, ratio and target.
type Figure struct {
	Name     string  `json:"name"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Baseline string  `json:"baseline,omitempty"` // the figure it is compared with
	Base     float64 `json:"baseline_value,omitempty"`
	Ratio    float64 `json:"ratio,omitempty"` // Value / Base
	Target   string  `json:"target,omitempty"`
	// Met is nil for a figure without a target.
	Met  *bool  `json:"met,omitempty"`
	Note string `json:"note,omitempty"`
}

// Report is a run: when, on what, every figure.
type Report struct {
	Started  time.Time `json:"started"`
	Seconds  float64   `json:"seconds"`
	Quick    bool      `json:"quick"`
	Cores    int       `json:"cores"`
	Load     string    `json:"load_average"` // /proc/loadavg at the start: others' work on the machine
	Config   Config    `json:"config"`
	Figures  []Figure  `json:"figures"`
	Problems []string  `json:"problems,omitempty"`
	// Waits are, per page load, what the console's database sessions were
	// doing when sampled during it: the evidence for where time goes.
	Waits map[string][]Wait `json:"waits,omitempty"`
	// Phases break an automatic write's time down by its journal's events.
	Phases []Phase `json:"write_phases,omitempty"`
}

// Figure returns the figure named name.
func (r *Report) Figure(name string) (Figure, bool) {
	for _, f := range r.Figures {
		if f.Name == name {
			return f, true
		}
	}
	return Figure{}, false
}

// FigureNames are the figures every run reports, in order.
var FigureNames = []string{
	"pgbench_tps", "echo_rps_64",
	"writes_per_s", "writes_duplicates", "writes_p50_ms", "writes_p99_ms",
	"commits_per_write_before", "commits_per_write_after", "writes_per_s_64", "writes_duplicates_64",
	"confirm_to_send_p50_ms", "confirm_to_send_p99_ms",
	"metrics_small_p50_ms", "metrics_large_p50_ms", "metrics_html_kb", "metrics_load_ms", "metrics_dom_nodes",
	"queue_rps_64", "queue_p50_ms_64", "queue_p99_ms_64", "queue_p50_ms_8", "queue_p99_ms_8",
	"task_rps_64", "task_p99_ms_64",
	"pages_compressed",
	"waiters_held", "waiters_listen_conns", "idle_cpu_ms_s", "waiters_cpu_ms_s", "cpu_us_s_per_waiter", "waiters_wake_ms",
	"peak_rss_mb",
}

type runner struct {
	cfg    Config
	env    *chaos.Env
	world  *chaos.World
	rep    *Report
	log    func(format string, args ...any)
	base   string
	pgTPS  float64
	echoRS float64
	// arrivals notes when each write (by X-Request-Id) reached the shop.
	mu       sync.Mutex
	arrivals map[string]time.Time
	waiters  map[string]chan time.Time
}

// Run runs the whole suite and returns its report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	loadavg, _ := os.ReadFile("/proc/loadavg")
	r := &runner{cfg: cfg, rep: &Report{Started: time.Now().UTC(), Quick: cfg.Quick, Cores: numCPU(), Config: cfg,
		Load: strings.TrimSpace(string(loadavg)), Waits: map[string][]Wait{}},
		arrivals: map[string]time.Time{}, waiters: map[string]chan time.Time{}}
	r.log = func(format string, args ...any) {
		fmt.Fprintf(cfg.Out, "%7.1fs  %s\n", time.Since(r.rep.Started).Seconds(), fmt.Sprintf(format, args...))
	}
	defer func() { r.rep.Seconds = time.Since(r.rep.Started).Seconds() }()
	var err error
	r.log("starting a private PostgreSQL (fsync on)")
	if r.env, err = chaos.StartDirectEnv(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		return r.rep, err
	}
	defer r.env.Close()

	steps := []struct {
		key, name string
		fn        func(context.Context) error
	}{
		{"pgbench", "pgbench", r.pgbench},
		{"echo", "bare Echo handler", r.echo},
		{"", "console", r.startConsole},
		{"writes", "automatic writes", r.writes},
		{"wide", "automatic writes, wide", r.writesWide},
		{"confirm", "confirmation to send", r.confirmToSend},
		{"pages", "metrics page and queue over the seeded history", r.pages},
		{"longpoll", "long polls held", r.longPolls},
		{"", "peak RSS", r.peakRSS},
	}
	for _, s := range steps {
		if s.key != "" && len(cfg.Only) > 0 && !slices.Contains(cfg.Only, s.key) {
			continue
		}
		if err := s.fn(ctx); err != nil {
			if r.world != nil {
				r.world.Close()
			}
			return r.rep, fmt.Errorf("bench: %s: %w", s.name, err)
		}
	}
	if r.cfg.Keep {
		r.log("kept for inspection until interrupted: console %s (agent %s, manager %s, password %q), database %s",
			r.base, r.world.Agent(), r.world.Manager(), chaos.Password, r.env.URL(r.world.DatabaseName()))
		<-ctx.Done()
	}
	r.log("dropping the bench databases")
	r.world.Close()
	return r.rep, nil
}

func (r *runner) add(f Figure) {
	if f.Base != 0 {
		f.Ratio = f.Value / f.Base
	}
	r.rep.Figures = append(r.rep.Figures, f)
}

func met(ok bool) *bool { return &ok }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (r *runner) pgbench(ctx context.Context) error {
	const db = "bench_pgbench"
	if err := r.env.DropDatabase(ctx, db); err != nil {
		return err
	}
	name, url, err := r.env.CreateDatabase(ctx, db)
	if err != nil {
		return err
	}
	defer func() { _ = r.env.DropDatabase(context.WithoutCancel(ctx), name) }()
	r.log("pgbench -i -s %d, then -N -c 10 -j 2 -T %s", r.cfg.PgbenchScale, r.cfg.PgbenchDuration)
	tps, err := Pgbench(ctx, url, r.cfg.PgbenchScale, 10, r.cfg.PgbenchDuration)
	if err != nil {
		return err
	}
	r.pgTPS = tps
	r.add(Figure{Name: "pgbench_tps", Value: tps, Unit: "tx/s", Note: fmt.Sprintf("pgbench -N -c 10 -j 2, scale %d, same cluster", r.cfg.PgbenchScale)})
	return nil
}

func (r *runner) echo(ctx context.Context) error {
	url, stop, err := StartBareEcho()
	if err != nil {
		return err
	}
	defer stop()
	res, err := Load{URL: url, Connections: 64, Duration: r.cfg.LoadDuration, Warmup: r.cfg.Warmup,
		Header: http.Header{"Accept-Encoding": {"gzip"}}}.Run(ctx)
	if err != nil {
		return err
	}
	r.echoRS = res.RPS()
	r.log("bare Echo handler, 64 connections: %.0f req/s, p50 %.2f ms, p99 %.2f ms", res.RPS(), ms(res.Latency.Quantile(0.5)), ms(res.Latency.Quantile(0.99)))
	r.add(Figure{Name: "echo_rps_64", Value: res.RPS(), Unit: "req/s",
		Note: fmt.Sprintf("bare Echo handler, 64 connections, p99 %.2f ms", ms(res.Latency.Quantile(0.99)))})
	return nil
}

// startConsole sets up the installation: databases, the shop (its writes'
// arrivals noted), one console process with production timings.
func (r *runner) startConsole(ctx context.Context) error {
	r.log("starting the demo shop and a console process (%s)", r.cfg.Bin)
	w, err := chaos.NewWorld(ctx, r.env, r.cfg.Bin, chaos.WorldOptions{Instances: 1,
		Env: []string{"ADAPTER_TIMEOUT=15s", "DISPATCH_LEASE_MARGIN=15s", "SHOP_SETTLE_AFTER=1m", "DISPATCH_INTERVAL=1s", "LOG_FORMAT=json",
			"API_RATE_PER_MINUTE=100000", "METRICS_REFRESH=1h", "DEBUG_ADDR=" + r.cfg.DebugAddr},
		WrapShop: r.noteArrivals})
	if err != nil {
		return err
	}
	r.world = w
	r.base = w.ConsoleURL(0)
	return nil
}

// noteArrivals wraps the shop: it notes when each write (anything but GET)
// arrives, by its X-Request-Id (the invocation's idempotency key).
func (r *runner) noteArrivals(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if id := req.Header.Get("X-Request-Id"); id != "" && req.Method != http.MethodGet && !strings.HasPrefix(req.URL.Path, "/_") {
			at := time.Now()
			r.mu.Lock()
			if _, seen := r.arrivals[id]; !seen {
				r.arrivals[id] = at
				if ch := r.waiters[id]; ch != nil {
					ch <- at
				}
			}
			r.mu.Unlock()
		}
		next.ServeHTTP(w, req)
	})
}

// awaitArrival returns a channel that receives the time the write with
// key reaches the shop.
func (r *runner) awaitArrival(key string) <-chan time.Time {
	ch := make(chan time.Time, 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if at, ok := r.arrivals[key]; ok {
		ch <- at
	} else {
		r.waiters[key] = ch
	}
	return ch
}

func (r *runner) peakRSS(context.Context) error {
	pid := r.world.ConsolePID(0)
	kb, err := vmHWM(pid)
	if err != nil {
		return err
	}
	mb := float64(kb) / 1024
	r.log("console peak RSS (VmHWM): %.1f MB", mb)
	r.add(Figure{Name: "peak_rss_mb", Value: mb, Unit: "MB", Target: "≤ 150 MB", Met: met(mb <= 150),
		Note: "VmHWM of the console process over the whole run"})
	return nil
}

// vmHWM reads a process's peak resident set size in kB.
func vmHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, errors.New("bench: no VmHWM in /proc status")
}

// WriteJSON writes the report to path, creating its folder.
func (rep *Report) WriteJSON(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// PrintTable writes the figures as a table: figure, value, baseline,
// ratio, target, met.
func (rep *Report) PrintTable(w io.Writer) {
	fmt.Fprintf(w, "\n%-24s %14s  %-20s %14s %9s  %-12s %s\n", "figure", "value", "baseline", "baseline value", "ratio", "target", "met")
	for _, f := range rep.Figures {
		base, bv, ratio := "", "", ""
		if f.Baseline != "" {
			base, bv = f.Baseline, fmtNum(f.Base)
			ratio = fmt.Sprintf("%.3f×", f.Ratio)
		}
		m := ""
		if f.Met != nil {
			m = map[bool]string{true: "yes", false: "NO"}[*f.Met]
		}
		fmt.Fprintf(w, "%-24s %14s  %-20s %14s %9s  %-12s %s\n", f.Name, fmtNum(f.Value)+" "+f.Unit, base, bv, ratio, f.Target, m)
	}
	for _, p := range rep.Problems {
		fmt.Fprintln(w, "problem:", p)
	}
}

func fmtNum(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// storeOf is the console database as the production store sees it.
func (r *runner) storeOf() *store.Store { return store.New(r.world.Pool()) }
