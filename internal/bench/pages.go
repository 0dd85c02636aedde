package bench

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"countersign/internal/chaos"
)

// pages measures (b) and (c). It seeds SmallHistory settled invocations,
// folds them into the metrics roll-ups as the console's refresher does, and
// times the metrics page; then grows the history to LargeHistory settled
// and Pending awaiting approval, folds again, and times the metrics page,
// the approval queue's first page (at 64 and 8 connections) and a task's
// page (at 64).
func (r *runner) pages(ctx context.Context) error {
	var assistantID string
	if err := r.world.Pool().QueryRow(ctx, `SELECT id FROM assistants ORDER BY created_at LIMIT 1`).Scan(&assistantID); err != nil {
		return err
	}
	sd := &seeder{pool: r.world.Pool(), assistantID: assistantID, now: time.Now()}
	manager, agent := chaos.NewPerson(r.world.Manager()), chaos.NewPerson(r.world.Agent())
	for _, p := range []*chaos.Person{manager, agent} {
		if err := p.SignIn(ctx, r.base); err != nil {
			return err
		}
	}
	header := func(p *chaos.Person) (http.Header, error) {
		cookie, err := p.Cookie(r.base)
		// As a browser: the session cookie, and compressed answers welcome.
		return http.Header{"Cookie": {cookie}, "Accept-Encoding": {"gzip, deflate, br"}}, err
	}
	mh, err := header(manager)
	if err != nil {
		return err
	}
	ah, err := header(agent)
	if err != nil {
		return err
	}

	small := roundDown(r.cfg.SmallHistory)
	if err := r.seed(ctx, "settled history", func() error { return sd.history(ctx, 0, small) }); err != nil {
		return err
	}
	metricsSmall, err := r.metricsPage(ctx, mh, small)
	if err != nil {
		return err
	}
	large := roundDown(r.cfg.LargeHistory)
	if err := r.seed(ctx, "settled history", func() error { return sd.history(ctx, small, large) }); err != nil {
		return err
	}
	if err := r.seed(ctx, "pending approvals", func() error { return sd.pending(ctx, r.cfg.Pending) }); err != nil {
		return err
	}
	total := large + r.cfg.Pending
	metricsLarge, err := r.metricsPage(ctx, mh, total)
	if err != nil {
		return err
	}
	r.add(Figure{Name: "metrics_small_p50_ms", Value: ms(metricsSmall), Unit: "ms",
		Note: fmt.Sprintf("GET /metrics (last 28 days) at %d invocations, one connection", small)})
	ratio := float64(metricsLarge) / float64(metricsSmall)
	r.add(Figure{Name: "metrics_large_p50_ms", Value: ms(metricsLarge), Unit: "ms", Baseline: "metrics_small_p50_ms", Base: ms(metricsSmall),
		Target: "≤ 1.5×", Met: met(ratio <= 1.5), Note: fmt.Sprintf("GET /metrics (last 28 days) at %d invocations, one connection", total)})
	status, html, err := manager.Get(ctx, r.base, "/metrics")
	if err != nil {
		return fmt.Errorf("bench: the metrics page: %w", err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("bench: the metrics page (%d)", status)
	}
	kb := float64(len(html)) / 1000
	r.add(Figure{Name: "metrics_html_kb", Value: kb, Unit: "kB", Target: "≤ 30 kB", Met: met(kb <= 30),
		Note: "GET /metrics (last 28 days) as the manager gets it, before any table is opened; HTML uncompressed"})
	loaded, err := loadInChromium(ctx, r.base, "/metrics", mh.Get("Cookie"), 7)
	if err != nil {
		return err
	}
	r.log("metrics page in headless Chromium: load %.0f ms (median of 7), %d elements", loaded.loadMS, loaded.nodes)
	r.add(Figure{Name: "metrics_load_ms", Value: loaded.loadMS, Unit: "ms", Target: "≤ 150 ms", Met: met(loaded.loadMS <= 150),
		Note: fmt.Sprintf("/metrics in headless Chromium at %d invocations: Navigation Timing's loadEventEnd, median of 7 loads after one that warmed the cache", total)})
	r.add(Figure{Name: "metrics_dom_nodes", Value: float64(loaded.nodes), Unit: "elements",
		Note: "elements in /metrics after it loaded, before any table is opened"})

	// The queue must show the seeded work before it is timed.
	status, page, err := agent.Get(ctx, r.base, "/queue")
	if err != nil {
		return fmt.Errorf("bench: the queue page: %w", err)
	}
	if status != http.StatusOK || !strings.Contains(page, `data-testid="card-inv_benchp`) {
		return fmt.Errorf("bench: the queue page (%d) does not show the seeded pending invocations", status)
	}
	note := fmt.Sprintf("GET /queue (first page), agent signed in; %d pending, %d settled", r.cfg.Pending, large)
	q64, err := r.load(ctx, "/queue", ah, 64)
	if err != nil {
		return err
	}
	q8, err := r.load(ctx, "/queue", ah, 8)
	if err != nil {
		return err
	}
	r.add(Figure{Name: "queue_rps_64", Value: q64.RPS(), Unit: "req/s", Baseline: "echo_rps_64", Base: r.echoRS,
		Target: "≥ 0.10×", Met: met(r.echoRS > 0 && q64.RPS()/r.echoRS >= 0.10), Note: note + ", 64 connections"})
	r.add(Figure{Name: "queue_p50_ms_64", Value: ms(q64.Latency.Quantile(0.5)), Unit: "ms", Note: "64 connections"})
	r.add(Figure{Name: "queue_p99_ms_64", Value: ms(q64.Latency.Quantile(0.99)), Unit: "ms", Note: "64 connections"})
	r.add(Figure{Name: "queue_p50_ms_8", Value: ms(q8.Latency.Quantile(0.5)), Unit: "ms", Note: "8 connections"})
	p99 := ms(q8.Latency.Quantile(0.99))
	r.add(Figure{Name: "queue_p99_ms_8", Value: p99, Unit: "ms", Target: "≤ 25 ms", Met: met(p99 <= 25),
		Note: fmt.Sprintf("8 connections, %.0f req/s", q8.RPS())})

	taskPath := "/tasks/" + "tsk_benchp0"
	t64, err := r.load(ctx, taskPath, ah, 64)
	if err != nil {
		return err
	}
	r.add(Figure{Name: "task_rps_64", Value: t64.RPS(), Unit: "req/s", Baseline: "echo_rps_64", Base: r.echoRS,
		Target: "≥ 0.05×", Met: met(r.echoRS > 0 && t64.RPS() >= 0.05*r.echoRS),
		Note: "GET /tasks/{id} (a task with 10 invocations awaiting approval), 64 connections"})
	taskP99 := ms(t64.Latency.Quantile(0.99))
	r.add(Figure{Name: "task_p99_ms_64", Value: taskP99, Unit: "ms", Target: "≤ 100 ms", Met: met(taskP99 <= 100), Note: "64 connections"})

	compressed := q8.Encoding != "" && t64.Encoding != ""
	v := 0.0
	if compressed {
		v = 1
	}
	r.add(Figure{Name: "pages_compressed", Value: v, Unit: "", Target: "1 (compressed)", Met: met(compressed),
		Note: fmt.Sprintf("Content-Encoding with Accept-Encoding: gzip — queue %q, task %q; queue page %.0f bytes as sent",
			q8.Encoding, t64.Encoding, float64(q8.Bytes)/float64(q8.Requests))})
	return nil
}

func roundDown(n int) int { return max(perTask, n/perTask*perTask) }

// seed runs one COPY load and then does what production does after one:
// autovacuum analyzes the new rows (done here at once, so the timing does
// not race it) and the metrics refresher folds the new events in.
func (r *runner) seed(ctx context.Context, what string, load func() error) error {
	t0 := time.Now()
	if err := load(); err != nil {
		return err
	}
	copied := time.Since(t0)
	if _, err := r.world.Pool().Exec(ctx, "VACUUM ANALYZE"); err != nil {
		return err
	}
	t1 := time.Now()
	rep, err := r.storeOf().RefreshMetrics(ctx)
	if err != nil {
		return err
	}
	r.log("seeded %s by COPY in %s; roll-ups refreshed in %s (%d invocation days)", what, copied.Round(time.Millisecond),
		time.Since(t1).Round(time.Millisecond), rep.InvocationDays)
	return nil
}

// metricsPage times the manager's metrics page over one connection and
// returns its median.
func (r *runner) metricsPage(ctx context.Context, h http.Header, invocations int) (time.Duration, error) {
	res, err := r.load(ctx, "/metrics", h, 1)
	if err != nil {
		return 0, err
	}
	r.log("  (at %d invocations)", invocations)
	return res.Latency.Quantile(0.5), nil
}

func (r *runner) load(ctx context.Context, path string, h http.Header, conns int) (LoadResult, error) {
	sctx, stop := context.WithCancel(ctx)
	waits := make(chan []Wait, 1)
	go func() { waits <- r.sampleWaits(sctx) }()
	res, err := Load{URL: r.base + path, Header: h, Connections: conns, Duration: r.cfg.LoadDuration, Warmup: r.cfg.Warmup}.Run(ctx)
	stop()
	ws := <-waits
	r.rep.Waits[fmt.Sprintf("GET %s at %d connections", path, conns)] = ws
	switch {
	case ctx.Err() != nil:
		return res, ctx.Err()
	case err != nil && res.Connections == 0:
		return res, err // the load could not start
	case err != nil:
		// Nothing answered within the window: a figure of 0, and the reason.
		r.rep.Problems = append(r.rep.Problems, err.Error())
	case res.Errors > 0:
		r.rep.Problems = append(r.rep.Problems, fmt.Sprintf("GET %s at %d connections: %d errors (first: %s)", path, conns, res.Errors, res.FirstError))
	}
	r.log("GET %s, %d connections: %.0f req/s, p50 %.2f ms, p99 %.2f ms, %d errors, encoding %q", path, conns, res.RPS(),
		ms(res.Latency.Quantile(0.5)), ms(res.Latency.Quantile(0.99)), res.Errors, res.Encoding)
	r.log("  database sessions sampled: %s", waitsLine(ws))
	return res, nil
}
