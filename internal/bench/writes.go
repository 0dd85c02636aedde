package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"countersign/internal/chaos"
	"countersign/store"
)

// finalStates are the states an invocation does not leave on its own.
var finalStates = map[string]bool{"completed": true, "failed": true, "unverified": true, "not_dispatched": true,
	"rejected": true, "expired": true, "reversed": true}

// taskWatch wakes whoever waits on a task when one of its events is
// written (the console's own NOTIFY channel for live task pages).
type taskWatch struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

func (tw *taskWatch) channel(task string) chan struct{} {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	c := tw.ch[task]
	if c == nil {
		c = make(chan struct{}, 1)
		tw.ch[task] = c
	}
	return c
}

func (tw *taskWatch) wake(task string) {
	select {
	case tw.channel(task) <- struct{}{}:
	default:
	}
}

// watch follows the console database's task events until ctx ends and
// returns once the LISTEN is in force.
func (r *runner) watch(ctx context.Context) (*taskWatch, error) {
	tw := &taskWatch{ch: map[string]chan struct{}{}}
	ready := make(chan error, 1)
	go r.storeOf().Listen(ctx, store.TaskEventsChannel, tw.wake, func(err error, _ time.Duration) {
		select {
		case ready <- err:
		default:
		}
	})
	select {
	case err := <-ready:
		return tw, err
	case <-time.After(30 * time.Second):
		return nil, errors.New("bench: LISTEN on the task events did not start")
	}
}

// settle waits until invocation id reaches a final state, woken by its
// task's events and looking again every 250ms in case a notification was
// lost; it returns the state.
func (r *runner) settle(ctx context.Context, tw *taskWatch, task, id string, within time.Duration) (string, error) {
	wake := tw.channel(task)
	deadline := time.After(within)
	for {
		var state string
		if err := r.world.Pool().QueryRow(ctx, `SELECT state FROM invocations WHERE id = $1`, id).Scan(&state); err != nil {
			return "", err
		}
		if finalStates[state] {
			return state, nil
		}
		select {
		case <-ctx.Done():
			return state, ctx.Err()
		case <-deadline:
			return state, fmt.Errorf("bench: invocation %s still %s after %s", id, state, within)
		case <-wake:
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// newTask opens a task for action with a budget of writes, one in flight
// at a time.
func (r *runner) newTask(ctx context.Context, api *chaos.Assistant, customer, action string, budget int) (string, error) {
	var t chaos.Task
	_, err := api.Do(ctx, r.base, http.MethodPost, "/tasks", map[string]any{"customer_ref": customer,
		"conversation_id": fmt.Sprintf("bench-%d", time.Now().UnixNano()), "allowed_actions": []string{action},
		"write_budget": budget, "inflight_limit": 1, "rate_per_minute": 10000,
		"expires_at": time.Now().Add(2 * time.Hour)}, "", &t)
	return t.ID, err
}

// writes measures (a): Writers tasks, each with one product of the shop,
// propose a new description through the assistant API, wait for the write
// to be completed (dispatched and verified by read-back), and propose the
// next, for WriteDuration. The figure is completed writes per second; the
// shop's ledger then shows each write's effects, and any key with the same
// effect twice is a duplicate. The journal of the completed writes gives
// where their time went (phases) and how many commits each made before its
// request left and after (commits_per_write).
func (r *runner) writes(ctx context.Context) error {
	r.log("automatic writes: %d tasks in parallel for %s", r.cfg.Writers, r.cfg.WriteDuration)
	start := time.Now()
	pages0, err := r.pagesTouched(ctx)
	if err != nil {
		return err
	}
	res, err := r.writeLoop(ctx, r.cfg.Writers, r.cfg.WriteDuration, "automatic writes")
	if err != nil {
		return err
	}
	pages1, err := r.pagesTouched(ctx)
	if err != nil {
		return err
	}
	phases, err := r.phases(ctx, chaos.ActionAuto)
	if err != nil {
		return err
	}
	r.rep.Phases = phases
	var line []string
	for _, ph := range phases {
		line = append(line, fmt.Sprintf("%s +%.1f ms (p99 +%.1f)", ph.Event, ph.P50MS, ph.P99MS))
	}
	r.log("  one write's journal, after invocation.proposed (median over completed writes): %s", strings.Join(line, ", "))
	r.log("  proposal request (dry-run included) p50 %.1f ms, p99 %.1f ms", ms(res.propose.Quantile(0.5)), ms(res.propose.Quantile(0.99)))
	dups, effects, err := r.duplicates(ctx)
	if err != nil {
		return err
	}
	r.log("automatic writes: %d completed and verified (%.1f/s), p50 %.1f ms, p99 %.1f ms; other outcomes %v; %d ledger effects, %d duplicates",
		res.completed, res.rate, ms(res.hist.Quantile(0.5)), ms(res.hist.Quantile(0.99)), res.other, effects, dups)
	note := fmt.Sprintf("%d tasks in parallel, one write in flight each; %d completed", r.cfg.Writers, res.completed)
	if len(res.other) > 0 {
		note += fmt.Sprintf("; other outcomes %v", res.other)
		r.rep.Problems = append(r.rep.Problems, fmt.Sprintf("automatic writes that did not complete: %v", res.other))
	}
	r.add(Figure{Name: "writes_per_s", Value: res.rate, Unit: "writes/s", Baseline: "pgbench_tps", Base: r.pgTPS,
		Target: "≥ 0.3×", Met: met(r.pgTPS > 0 && res.rate/r.pgTPS >= 0.3), Note: note})
	r.add(Figure{Name: "writes_duplicates", Value: float64(dups), Unit: "", Target: "0", Met: met(dups == 0),
		Note: fmt.Sprintf("from the shop's ledger: %d effects", effects)})
	p50 := ms(res.hist.Quantile(0.5))
	r.add(Figure{Name: "writes_p50_ms", Value: p50, Unit: "ms", Target: "≤ 25 ms", Met: met(p50 <= 25),
		Note: fmt.Sprintf("propose → completed (verified), %d tasks in parallel, the shop adding no latency", r.cfg.Writers)})
	r.add(Figure{Name: "writes_p99_ms", Value: ms(res.hist.Quantile(0.99)), Unit: "ms", Note: "propose → completed (verified)"})
	if res.completed > 0 {
		// A log line, not a figure: backends report their counts at most
		// once a second (an idle one up to ten seconds later), so the
		// count is approximate; pg_stat_statements in the bench cluster
		// is the exact picture (see the README).
		r.log("  console database pages touched (blks_hit + blks_read) per completed write: about %.0f",
			float64(pages1-pages0)/float64(res.completed))
	}
	return r.commitsPerWrite(ctx, chaos.ActionAuto, start)
}

// writesWide is (a) again with WideWriters (64) tasks in parallel: whether
// the write path scales past the ten lanes' latency bound. Its figures are
// named for 64 lanes.
func (r *runner) writesWide(ctx context.Context) error {
	r.log("automatic writes, wide: %d tasks in parallel for %s", r.cfg.WideWriters, r.cfg.WideDuration)
	res, err := r.writeLoop(ctx, r.cfg.WideWriters, r.cfg.WideDuration, "automatic writes, wide")
	if err != nil {
		return err
	}
	dups, effects, err := r.duplicates(ctx)
	if err != nil {
		return err
	}
	r.log("automatic writes, wide: %d completed and verified (%.1f/s), p50 %.1f ms, p99 %.1f ms; other outcomes %v; %d ledger effects, %d duplicates",
		res.completed, res.rate, ms(res.hist.Quantile(0.5)), ms(res.hist.Quantile(0.99)), res.other, effects, dups)
	note := fmt.Sprintf("%d tasks in parallel, one write in flight each; %d completed; p50 %.1f ms, p99 %.1f ms",
		r.cfg.WideWriters, res.completed, ms(res.hist.Quantile(0.5)), ms(res.hist.Quantile(0.99)))
	if len(res.other) > 0 {
		note += fmt.Sprintf("; other outcomes %v", res.other)
		r.rep.Problems = append(r.rep.Problems, fmt.Sprintf("wide automatic writes that did not complete: %v", res.other))
	}
	r.add(Figure{Name: "writes_per_s_64", Value: res.rate, Unit: "writes/s", Baseline: "pgbench_tps", Base: r.pgTPS,
		Target: "≥ 0.15×", Met: met(r.pgTPS > 0 && res.rate/r.pgTPS >= 0.15), Note: note})
	r.add(Figure{Name: "writes_duplicates_64", Value: float64(dups), Unit: "", Target: "0", Met: met(dups == 0),
		Note: fmt.Sprintf("from the shop's ledger, both runs of writes: %d effects", effects)})
	return nil
}

// writeRun is what one closed loop of automatic writes measured.
type writeRun struct {
	hist, propose Histogram
	completed     int
	other         map[string]int
	rate          float64 // completed writes a second
}

// writeLoop runs lanes tasks in parallel, each proposing an automatic
// write and waiting for it to complete before the next, for d.
func (r *runner) writeLoop(ctx context.Context, lanes int, d time.Duration, waitsName string) (writeRun, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tw, err := r.watch(wctx)
	if err != nil {
		return writeRun{}, err
	}
	api := chaos.NewAssistant(r.world.APIKey())
	type part struct {
		hist      Histogram
		propose   Histogram
		completed int
		other     map[string]int
		err       error
	}
	parts := make([]part, lanes)
	const budget = 1000
	// Each lane's task and product are made before the window opens: the
	// window measures writes, not setting up 64 lanes on a busy machine
	// (which could use all of a short window and count nothing).
	tasks, products := make([]string, lanes), make([]string, lanes)
	var setup sync.WaitGroup
	for i := range parts {
		setup.Go(func() {
			if tasks[i], parts[i].err = r.newTask(ctx, api, r.world.Operator(), chaos.ActionAuto, budget); parts[i].err != nil {
				return
			}
			products[i], parts[i].err = r.world.NewProduct(ctx)
		})
	}
	setup.Wait()
	for _, p := range parts {
		if p.err != nil {
			return writeRun{}, p.err
		}
	}
	start := time.Now()
	until := start.Add(d)
	sctx, stopSampling := context.WithDeadline(ctx, until)
	defer stopSampling()
	waits := make(chan []Wait, 1)
	go func() { waits <- r.sampleWaits(sctx) }()
	var wg sync.WaitGroup
	for i := range parts {
		p := &parts[i]
		p.other = map[string]int{}
		wg.Go(func() {
			task, product := tasks[i], products[i]
			used := 0
			for n := 0; time.Now().Before(until); n++ {
				if used >= budget {
					if task, p.err = r.newTask(ctx, api, r.world.Operator(), chaos.ActionAuto, budget); p.err != nil {
						return
					}
					if product, p.err = r.world.NewProduct(ctx); p.err != nil {
						return
					}
					used = 0
				}
				used++
				t0 := time.Now()
				var inv chaos.Invocation
				_, err := api.Do(ctx, r.base, http.MethodPost, "/tasks/"+task+"/invocations", map[string]any{
					"action": chaos.ActionAuto, "args": map[string]any{"product_id": product,
						"description": fmt.Sprintf("Bench edition %d of writer %d.", n, i)},
					"summary": "Update the product description."}, "", &inv)
				if err != nil {
					p.err = err
					return
				}
				p.propose.Record(time.Since(t0))
				state, err := r.settle(ctx, tw, task, inv.ID, 60*time.Second)
				if err != nil {
					p.err = err
					return
				}
				if state != "completed" {
					p.other[state]++
					continue
				}
				if time.Now().After(until) {
					break // finished after the window: not counted
				}
				p.completed++
				p.hist.Record(time.Since(t0))
			}
		})
	}
	wg.Wait()
	stopSampling()
	r.rep.Waits[waitsName] = <-waits
	r.log("  database sessions sampled: %s", waitsLine(r.rep.Waits[waitsName]))
	out := writeRun{other: map[string]int{}}
	for i := range parts {
		out.propose.Merge(&parts[i].propose)
		if parts[i].err != nil {
			return out, parts[i].err
		}
		out.hist.Merge(&parts[i].hist)
		out.completed += parts[i].completed
		for k, v := range parts[i].other {
			out.other[k] += v
		}
	}
	out.rate = float64(out.completed) / d.Seconds()
	return out, nil
}

// pagesTouched is the console database's buffer reads so far, cached or
// not (pg_stat_database; each backend reports its own at most about once
// a second).
func (r *runner) pagesTouched(ctx context.Context) (int64, error) {
	var n int64
	err := r.world.Pool().QueryRow(ctx, `SELECT blks_hit + blks_read FROM pg_stat_database WHERE datname = current_database()`).Scan(&n)
	return n, err
}

// duplicates counts, from the shop's ledger, effects that repeat an
// earlier one (same request id, kind and object), and all effects.
func (r *runner) duplicates(ctx context.Context) (dups, effects int, err error) {
	err = r.world.ShopPool().QueryRow(ctx, `
		SELECT COALESCE(sum(n - 1), 0)::int, COALESCE(sum(n), 0)::int
		FROM (SELECT count(*) AS n FROM shop.ledger GROUP BY request_id, kind, object) g`).Scan(&dups, &effects)
	return dups, effects, err
}

// confirmToSend measures (d) on an otherwise idle console: a customer,
// signed in, confirms a shipping-address change (stage 4) on its request
// page; the time is from sending the confirmation to the write reaching
// the shop. One at a time, each settled before the next.
func (r *runner) confirmToSend(ctx context.Context) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tw, err := r.watch(wctx)
	if err != nil {
		return err
	}
	customer := r.world.Customers()[0]
	api := chaos.NewAssistant(r.world.APIKey())
	person := chaos.NewPerson(customer)
	if err := person.SignIn(ctx, r.base); err != nil {
		return err
	}
	task, err := r.newTask(ctx, api, customer, chaos.ActionConfirm, r.cfg.ConfirmSamples+1)
	if err != nil {
		return err
	}
	r.log("confirmation to send: %d confirmations, one at a time", r.cfg.ConfirmSamples)
	var hist Histogram
	for n := range r.cfg.ConfirmSamples {
		order, err := r.world.NewOrder(ctx, customer)
		if err != nil {
			return err
		}
		var inv chaos.Invocation
		if _, err := api.Do(ctx, r.base, http.MethodPost, "/tasks/"+task+"/invocations", map[string]any{
			"action": chaos.ActionConfirm, "args": map[string]any{"order_id": order, "address": map[string]any{
				"name": "Sam Rivera", "line1": fmt.Sprintf("%d Harbour Road", n+1), "city": "Springfield", "postal_code": "12345", "country": "US"}},
			"summary": "Change the shipping address."}, "", &inv); err != nil {
			return err
		}
		if inv.State != "awaiting_confirmation" {
			return fmt.Errorf("bench: a stage-4 proposal is %s, not awaiting_confirmation", inv.State)
		}
		status, page, err := person.Get(ctx, r.base, "/requests/"+inv.ID)
		tok := chaos.Field(page, "_csrf")
		if err != nil {
			return fmt.Errorf("bench: the request page: %w", err)
		}
		if status != http.StatusOK || tok == "" {
			return fmt.Errorf("bench: the request page: %d, token %v", status, tok != "")
		}
		arrived := r.awaitArrival(inv.IdempotencyKey)
		t0 := time.Now()
		// The confirmation names the quote its page showed, as a browser's
		// form does.
		status, _, err = person.Post(ctx, r.base, "/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {tok},
			"quote_version": {chaos.Field(page, "quote_version")}, "quote_digest": {chaos.Field(page, "quote_digest")}})
		if err != nil {
			return fmt.Errorf("bench: confirm: %w", err)
		}
		if status != http.StatusSeeOther {
			return fmt.Errorf("bench: confirm: %d", status)
		}
		select {
		case at := <-arrived:
			hist.Record(at.Sub(t0))
		case <-time.After(30 * time.Second):
			return fmt.Errorf("bench: the confirmed write %s did not reach the shop within 30s", inv.ID)
		}
		if state, err := r.settle(ctx, tw, task, inv.ID, 60*time.Second); err != nil {
			return fmt.Errorf("bench: the confirmed write %s: %w", inv.ID, err)
		} else if state != "completed" {
			return fmt.Errorf("bench: the confirmed write %s ended %s", inv.ID, state)
		}
	}
	p50, p99 := ms(hist.Quantile(0.5)), ms(hist.Quantile(0.99))
	r.log("confirmation to send: p50 %.1f ms, p99 %.1f ms (max %.1f ms)", p50, p99, ms(hist.Max()))
	note := fmt.Sprintf("%d confirmations on an idle console: POST /requests/{id}/confirm sent → the write's request arrives at the shop", hist.Count())
	r.add(Figure{Name: "confirm_to_send_p50_ms", Value: p50, Unit: "ms", Note: note})
	r.add(Figure{Name: "confirm_to_send_p99_ms", Value: p99, Unit: "ms", Target: "≤ 50 ms", Met: met(p99 <= 50), Note: note})
	return nil
}
