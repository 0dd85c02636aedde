package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"countersign/internal/chaos"
)

// cpuTime reads a process's CPU time so far: the nanoseconds each of its
// threads ran, from /proc/<pid>/task/*/schedstat (utime and stime count
// 10 ms ticks, too coarse for an idle console over a few seconds).
func cpuTime(pid int) (time.Duration, error) {
	dirs, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, err
	}
	var total int64
	for _, d := range dirs {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, d.Name()))
		if err != nil {
			continue // the thread ended meanwhile
		}
		first, _, _ := strings.Cut(string(b), " ")
		ns, err := strconv.ParseInt(first, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bench: /proc/%d/task/%s/schedstat: %q", pid, d.Name(), b)
		}
		total += ns
	}
	return time.Duration(total), nil
}

// cpuOver is the CPU time pid used during the next d.
func cpuOver(ctx context.Context, pid int, d time.Duration) (time.Duration, error) {
	before, err := cpuTime(pid)
	if err != nil {
		return 0, err
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(d):
	}
	after, err := cpuTime(pid)
	return after - before, err
}

// longPollAnswer is one waiter's answer.
type longPollAnswer struct {
	at     time.Time
	status int
	wait   string
	state  string
	err    error
}

// longPolls measures (f): the console's CPU over WaitWindow while idle
// (the baseline, measured here, in this run), then the same window with
// Waiters long polls (GET /invocations/{id}?wait=30s) held on one
// invocation awaiting its customer, each on a connection of its own; how
// many were still held at the window's end; how many connections listen
// in the console's database meanwhile; then cancels the task (the request
// is withdrawn) and times until every waiter had its answer.
func (r *runner) longPolls(ctx context.Context) error {
	n := r.cfg.Waiters
	r.log("long polls: the idle console for %s, then %d waiters for %s", r.cfg.WaitWindow, n, r.cfg.WaitWindow)
	customer := r.world.Customers()[0]
	api := chaos.NewAssistant(r.world.APIKey())
	task, err := r.newTask(ctx, api, customer, chaos.ActionConfirm, 2)
	if err != nil {
		return err
	}
	order, err := r.world.NewOrder(ctx, customer)
	if err != nil {
		return err
	}
	var inv chaos.Invocation
	if _, err := api.Do(ctx, r.base, http.MethodPost, "/tasks/"+task+"/invocations", map[string]any{
		"action": chaos.ActionConfirm, "args": map[string]any{"order_id": order, "address": map[string]any{
			"name": "Sam Rivera", "line1": "1 Long Poll Lane", "city": "Springfield", "postal_code": "12345", "country": "US"}},
		"summary": "Change the shipping address."}, "", &inv); err != nil {
		return err
	}
	if inv.State != "awaiting_confirmation" {
		return fmt.Errorf("bench: a stage-4 proposal is %s, not awaiting_confirmation", inv.State)
	}
	pid := r.world.ConsolePID(0)
	idle, err := cpuOver(ctx, pid, r.cfg.WaitWindow)
	if err != nil {
		return err
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, DisableCompression: true}}
	defer client.CloseIdleConnections()
	answers := make(chan longPollAnswer, n)
	url := r.base + "/api/v1/invocations/" + inv.ID + "?wait=30s&state=awaiting_confirmation"
	for range n {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			req.Header.Set("Authorization", "Bearer "+r.world.APIKey())
			res, err := client.Do(req)
			if err != nil {
				answers <- longPollAnswer{at: time.Now(), err: err}
				return
			}
			defer res.Body.Close()
			var body struct {
				State string `json:"state"`
			}
			err = json.NewDecoder(res.Body).Decode(&body)
			answers <- longPollAnswer{at: time.Now(), status: res.StatusCode, wait: res.Header.Get("Countersign-Wait"), state: body.State, err: err}
		}()
	}
	// The waiters connect and reach the console's wait; a wait lasts 30s,
	// so the window below ends well inside it.
	settle := min(2*time.Second, r.cfg.WaitWindow)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(settle):
	}
	held, err := cpuOver(ctx, pid, r.cfg.WaitWindow)
	if err != nil {
		return err
	}
	early := len(answers)
	var listening int
	if err := r.world.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN countersign_invocations'`).Scan(&listening); err != nil {
		return err
	}

	var t chaos.Task
	if _, err := api.Do(ctx, r.base, http.MethodGet, "/tasks/"+task, nil, "", &t); err != nil {
		return err
	}
	t0 := time.Now()
	if _, err := api.Do(ctx, r.base, http.MethodPost, "/tasks/"+task+"/cancel", map[string]any{"expected_version": t.Version}, "", nil); err != nil {
		return fmt.Errorf("bench: cancel the waited-on task: %w", err)
	}
	var last time.Time
	var wrong []string
	for range n {
		var a longPollAnswer
		select {
		case a = <-answers:
		case <-time.After(40 * time.Second):
			return fmt.Errorf("bench: a long poll did not answer within 40s of its request's withdrawal")
		}
		if a.at.After(last) {
			last = a.at
		}
		if a.err != nil || a.status != http.StatusOK || a.wait != "changed" || a.state != "not_dispatched" {
			wrong = append(wrong, fmt.Sprintf("%d %s %s %v", a.status, a.wait, a.state, a.err))
		}
	}
	if len(wrong) > 0 {
		r.rep.Problems = append(r.rep.Problems, fmt.Sprintf("long polls: %d of %d answered otherwise than 200 changed not_dispatched, e.g. %s", len(wrong), n, wrong[0]))
	}
	wake := last.Sub(t0)
	secs := r.cfg.WaitWindow.Seconds()
	idleMS, heldMS := float64(idle.Microseconds())/1000/secs, float64(held.Microseconds())/1000/secs
	perWaiter := max(0, (heldMS-idleMS)*1000/float64(n))
	r.log("long polls: idle console %.2f ms CPU/s; with %d waiters held %.2f ms CPU/s (%.2f µs/s a waiter); %d LISTEN connection(s); all answered %.1f ms after the withdrawal",
		idleMS, n-early, heldMS, perWaiter, listening, ms(wake))
	r.add(Figure{Name: "waiters_held", Value: float64(n - early), Unit: "waiters", Target: fmt.Sprintf("= %d", n), Met: met(early == 0),
		Note: fmt.Sprintf("long polls (?wait=30s) on one invocation still open at the end of a %s window; each on its own connection", r.cfg.WaitWindow)})
	r.add(Figure{Name: "waiters_listen_conns", Value: float64(listening), Unit: "conns", Target: "= 1", Met: met(listening == 1),
		Note: "connections LISTENing on countersign_invocations in the console's database while the waiters were held"})
	r.add(Figure{Name: "idle_cpu_ms_s", Value: idleMS, Unit: "ms/s", Note: fmt.Sprintf("the console's CPU (user+system) idle over %s, before the waiters", r.cfg.WaitWindow)})
	r.add(Figure{Name: "waiters_cpu_ms_s", Value: heldMS, Unit: "ms/s", Baseline: "idle_cpu_ms_s", Base: idleMS,
		Note: fmt.Sprintf("the console's CPU with %d waiters held, over the same window", n)})
	r.add(Figure{Name: "cpu_us_s_per_waiter", Value: perWaiter, Unit: "µs/s", Target: "≤ 20 µs/s", Met: met(perWaiter <= 20),
		Note: "(CPU with the waiters − idle CPU) ÷ waiters: what holding one costs a second; 0 when within the idle baseline's noise"})
	r.add(Figure{Name: "waiters_wake_ms", Value: ms(wake), Unit: "ms", Target: "≤ 1000 ms", Met: met(wake <= time.Second),
		Note: fmt.Sprintf("from sending the task's cancel to the last of the %d waiters' answers (each woken by the NOTIFY)", n)})
	return nil
}
