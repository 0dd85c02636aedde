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

func (r *runner) newTask(ctx context.Context, api *chaos.Assistant, customer, action string, budget, inflight int) (string, error) {
	var t chaos.Task
	_, err := api.Do(ctx, r.base, http.MethodPost, "/tasks", map[string]any{"customer_ref": customer,
		"conversation_id": fmt.Sprintf("bench-%d", time.Now().UnixNano()), "allowed_actions": []string{action},
		"write_budget": budget, "inflight_limit": inflight, "rate_per_minute": 10000,
		"expires_at": time.Now().Add(2 * time.Hour)}, "", &t)
	return t.ID, err
}

// writes measures (a): Writers tasks, each with one product of the shop,
// propose a new description through the assistant API, wait for the write
// to be completed (dispatched and verified by read-back), and propose the
// next, for WriteDuration. The figure is completed writes per second; the
// shop's ledger then shows each write's effects, and any key with the same
// effect twice is a duplicate.
func (r *runner) writes(ctx context.Context) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tw, err := r.watch(wctx)
	if err != nil {
		return err
	}
	api := chaos.NewAssistant(r.world.APIKey())
	r.log("automatic writes: %d tasks in parallel for %s", r.cfg.Writers, r.cfg.WriteDuration)
	type part struct {
		hist      Histogram
		propose   Histogram
		completed int
		other     map[string]int
		err       error
	}
	parts := make([]part, r.cfg.Writers)
	start := time.Now()
	until := start.Add(r.cfg.WriteDuration)
	sctx, stopSampling := context.WithDeadline(ctx, until)
	defer stopSampling()
	waits := make(chan []Wait, 1)
	go func() { waits <- r.sampleWaits(sctx) }()
	var wg sync.WaitGroup
	for i := range parts {
		p := &parts[i]
		p.other = map[string]int{}
		wg.Go(func() {
			const budget = 1000
			var task, product string
			used := budget
			for n := 0; time.Now().Before(until); n++ {
				if used >= budget {
					if task, p.err = r.newTask(ctx, api, r.world.Operator(), chaos.ActionAuto, budget, 1); p.err != nil {
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
	r.rep.Waits["automatic writes"] = <-waits
	r.log("  database sessions sampled: %s", waitsLine(r.rep.Waits["automatic writes"]))
	var hist, propose Histogram
	completed, other := 0, map[string]int{}
	for i := range parts {
		propose.Merge(&parts[i].propose)
		if parts[i].err != nil {
			return parts[i].err
		}
		hist.Merge(&parts[i].hist)
		completed += parts[i].completed
		for k, v := range parts[i].other {
			other[k] += v
		}
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
	r.log("  proposal request (dry-run included) p50 %.1f ms, p99 %.1f ms", ms(propose.Quantile(0.5)), ms(propose.Quantile(0.99)))
	rate := float64(completed) / r.cfg.WriteDuration.Seconds()
	dups, effects, err := r.duplicates(ctx)
	if err != nil {
		return err
	}
	r.log("automatic writes: %d completed and verified (%.1f/s), p50 %.1f ms, p99 %.1f ms; other outcomes %v; %d ledger effects, %d duplicates",
		completed, rate, ms(hist.Quantile(0.5)), ms(hist.Quantile(0.99)), other, effects, dups)
	note := fmt.Sprintf("%d tasks in parallel, one write in flight each; %d completed", r.cfg.Writers, completed)
	if len(other) > 0 {
		note += fmt.Sprintf("; other outcomes %v", other)
		r.rep.Problems = append(r.rep.Problems, fmt.Sprintf("automatic writes that did not complete: %v", other))
	}
	r.add(Figure{Name: "writes_per_s", Value: rate, Unit: "writes/s", Baseline: "pgbench_tps", Base: r.pgTPS,
		Target: "≥ 0.3×", Met: met(r.pgTPS > 0 && rate/r.pgTPS >= 0.3), Note: note})
	r.add(Figure{Name: "writes_duplicates", Value: float64(dups), Unit: "", Target: "0", Met: met(dups == 0),
		Note: fmt.Sprintf("from the shop's ledger: %d effects", effects)})
	r.add(Figure{Name: "writes_p50_ms", Value: ms(hist.Quantile(0.5)), Unit: "ms", Note: "propose → completed (verified)"})
	r.add(Figure{Name: "writes_p99_ms", Value: ms(hist.Quantile(0.99)), Unit: "ms", Note: "propose → completed (verified)"})
	return nil
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
	task, err := r.newTask(ctx, api, customer, chaos.ActionConfirm, r.cfg.ConfirmSamples+1, 1)
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
		if err != nil || status != http.StatusOK || tok == "" {
			return fmt.Errorf("bench: the request page: %d, token %v, %v", status, tok != "", err)
		}
		arrived := r.awaitArrival(inv.IdempotencyKey)
		t0 := time.Now()
		status, _, err = person.Post(ctx, r.base, "/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {tok}})
		if err != nil || status != http.StatusSeeOther {
			return fmt.Errorf("bench: confirm: %d, %v", status, err)
		}
		select {
		case at := <-arrived:
			hist.Record(at.Sub(t0))
		case <-time.After(30 * time.Second):
			return fmt.Errorf("bench: the confirmed write %s did not reach the shop within 30s", inv.ID)
		}
		if state, err := r.settle(ctx, tw, task, inv.ID, 60*time.Second); err != nil || state != "completed" {
			return fmt.Errorf("bench: the confirmed write %s ended %s (%v)", inv.ID, state, err)
		}
	}
	p50, p99 := ms(hist.Quantile(0.5)), ms(hist.Quantile(0.99))
	r.log("confirmation to send: p50 %.1f ms, p99 %.1f ms (max %.1f ms)", p50, p99, ms(hist.Max()))
	note := fmt.Sprintf("%d confirmations on an idle console: POST /requests/{id}/confirm sent → the write's request arrives at the shop", hist.Count())
	r.add(Figure{Name: "confirm_to_send_p50_ms", Value: p50, Unit: "ms", Note: note})
	r.add(Figure{Name: "confirm_to_send_p99_ms", Value: p99, Unit: "ms", Target: "≤ 50 ms", Met: met(p99 <= 50), Note: note})
	return nil
}

// Phase is when one kind of event of a write's journal is written,
// counted from its invocation.proposed event.
type Phase struct {
	Event string  `json:"event"`
	Count int     `json:"count"`
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
}

// phases reads the journal of every completed invocation of action: where
// a write's time goes between its proposal and its verified completion.
func (r *runner) phases(ctx context.Context, action string) ([]Phase, error) {
	rows, err := r.world.Pool().Query(ctx, `
		SELECT e.action, count(*)::int,
			percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM e.at - p.at) * 1000),
			percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM e.at - p.at) * 1000)
		FROM invocations i
		JOIN events p ON p.invocation_id = i.id AND p.action = 'invocation.proposed'
		JOIN events e ON e.invocation_id = i.id AND e.id <> p.id
		WHERE i.action = $1 AND i.state = 'completed'
		GROUP BY e.action ORDER BY 3`, action)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Phase
	for rows.Next() {
		var ph Phase
		if err := rows.Scan(&ph.Event, &ph.Count, &ph.P50MS, &ph.P99MS); err != nil {
			return nil, err
		}
		out = append(out, ph)
	}
	return out, rows.Err()
}
