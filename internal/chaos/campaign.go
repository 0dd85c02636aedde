// Package chaos runs randomized fault campaigns against real console
// processes, one PostgreSQL and the demo shop, and checks after every round
// that each approved write took effect at most once, and only when and as
// its journal says: the invariants are listed on check. A campaign is
// reproducible from its seed: the workload's choices and the fault
// schedule derive from it (timing does not).
package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// Config sizes a campaign.
type Config struct {
	// Seed derives every round's seed; the same seed draws the same
	// schedules and workload choices.
	Seed uint64
	// Rounds is the most rounds to run; 0 means until Duration is spent.
	Rounds int
	// Duration bounds the whole campaign; a round is not started unless it
	// can finish within it.
	Duration time.Duration
	// RoundLength is how long each round's load and faults run.
	RoundLength time.Duration
	// Instances is how many console processes share the database (2–3).
	Instances int
	// Assistants is how many concurrent proposers the assistant runs.
	Assistants int
	// Bin is the built cmd/countersign binary.
	Bin string
	// Shrink retries a failing round with halves of its faults to find a
	// smaller schedule that still fails.
	Shrink bool
	// HistoryDir receives the JSON history of each failing round.
	HistoryDir string
	// KeepHistory writes every round's history, failing or not.
	KeepHistory bool
	// Out receives the progress lines and the table.
	Out io.Writer
}

// RoundResult is one round: its seed, what ran, what the checker found.
type RoundResult struct {
	Round    int       `json:"round"`
	Seed     uint64    `json:"seed"`
	Counts   Counts    `json:"counts"`
	Faults   []Fault   `json:"schedule"`
	Actions  []Action  `json:"actions"`
	Findings []Finding `json:"findings"`
	Error    string    `json:"error,omitempty"`
	// Shrunk is the smallest schedule found that still fails, if any.
	Shrunk *RoundResult `json:"shrunk,omitempty"`
}

// Result is a campaign's rounds and totals.
type Result struct {
	Seed      uint64
	Rounds    []RoundResult
	Totals    Counts
	Histories []string
}

// Failed reports whether any round broke an invariant or could not run.
func (r Result) Failed() bool {
	for _, rr := range r.Rounds {
		if rr.Counts.Violations > 0 || rr.Error != "" {
			return true
		}
	}
	return false
}

// roundSetup is the time a round needs besides its load: databases, console
// start-up, settling, reconciliation and the check.
const roundSetup = 45 * time.Second

// sweepSlack is what a sweep may take beyond its interval on a busy machine.
const sweepSlack = time.Second

// Run runs a campaign and prints its table.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	res := Result{Seed: cfg.Seed}
	fmt.Fprintf(cfg.Out, "chaos: seed %d, %d console instances, rounds of %s, budget %s\n", cfg.Seed, cfg.Instances, cfg.RoundLength, cfg.Duration)
	env, err := StartEnv(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		return res, err
	}
	defer env.Close()
	deadline := time.Now().Add(cfg.Duration)
	master := rand.New(rand.NewPCG(cfg.Seed, 0))
	for i := 1; cfg.Rounds == 0 || i <= cfg.Rounds; i++ {
		seed := master.Uint64()
		if time.Until(deadline) < cfg.RoundLength+roundSetup && i > 1 {
			break
		}
		if ctx.Err() != nil {
			break
		}
		faults := schedule(seed, cfg.RoundLength, cfg.Instances)
		rr := runRound(ctx, env, cfg, i, seed, faults)
		if (rr.Counts.Violations > 0) && cfg.Shrink && ctx.Err() == nil {
			rr.Shrunk = shrink(ctx, env, cfg, i, seed, rr.Faults, deadline)
		}
		if rr.Counts.Violations > 0 || rr.Error != "" || cfg.KeepHistory {
			if path, err := writeHistory(cfg.HistoryDir, rr); err == nil {
				res.Histories = append(res.Histories, path)
				fmt.Fprintf(cfg.Out, "round %d: history written to %s\n", i, path)
			} else {
				fmt.Fprintf(cfg.Out, "round %d: history not written: %v\n", i, err)
			}
		}
		res.Rounds = append(res.Rounds, rr)
		fmt.Fprintf(cfg.Out, "round %d seed %d: proposed %d (agent approved %d, customer confirmed %d) completed %d unverified %d effects %d faults %d lease overshoot %dms violations %d %s\n",
			i, seed, rr.Counts.Proposed, rr.Counts.AgentApproved, rr.Counts.CustomerConfirmed, rr.Counts.Completed, rr.Counts.Unverified, rr.Counts.Effects,
			sum(rr.Counts.Faults), rr.Counts.LeaseOvershootMS, rr.Counts.Violations, rr.Error)
		for _, f := range rr.Findings {
			fmt.Fprintf(cfg.Out, "  VIOLATION %s %s %s: %s\n", f.Rule, f.Task, f.Invocation, f.Detail)
		}
	}
	res.Totals = totals(res.Rounds)
	printTable(cfg.Out, res)
	return res, nil
}

// shrink retries the round with halves of its faults while a half still
// fails, and returns the smallest failing round found.
func shrink(ctx context.Context, env *Env, cfg Config, round int, seed uint64, faults []Fault, deadline time.Time) *RoundResult {
	var best *RoundResult
	cur := clean(faults)
	for len(cur) > 1 && time.Until(deadline) > 2*(cfg.RoundLength+roundSetup) && ctx.Err() == nil {
		half := len(cur) / 2
		progressed := false
		for _, part := range [][]Fault{cur[:half], cur[half:]} {
			fmt.Fprintf(cfg.Out, "round %d: shrinking, trying %d of %d faults\n", round, len(part), len(cur))
			rr := runRound(ctx, env, cfg, round, seed, clean(part))
			if rr.Counts.Violations > 0 {
				best, cur, progressed = &rr, clean(part), true
				break
			}
		}
		if !progressed {
			break
		}
	}
	return best
}

func clean(fs []Fault) []Fault {
	out := make([]Fault, len(fs))
	for i, f := range fs {
		f.Done, f.Error = false, ""
		out[i] = f
	}
	return out
}

// roundRun is one round in progress.
type roundRun struct {
	seed uint64
	w    *world
	d    *driver
	mu   sync.Mutex
	logs []string
	// leaseFindings are dispatching rows found past their lease once every
	// console was up again (settle).
	leaseFindings []Finding
	// overshoot is the longest a dispatching row was seen past its lease
	// while the load ran, faults or not.
	overshoot time.Duration
	// disturbing counts the console and database faults in force.
	disturbing atomic.Int32
	// lateSweeps are rows seen dispatching past their lease by more than a
	// sweep interval (and slack) although their lease ran out while every
	// console was up and PostgreSQL answered.
	lateSweeps map[string]Finding
}

// sampleLeases records, every half second while ctx lasts, how far past
// its lease the oldest dispatching row is.
//
// It also checks the sweep under load: from the moment every console
// answers and no console or database fault is in force (calm), a lease
// that runs out must be swept within one sweep interval and the slack.
func (r *roundRun) sampleLeases(ctx context.Context) {
	var calm time.Time
	for ctx.Err() == nil {
		var secs float64
		err := r.w.pool.QueryRow(ctx, `SELECT coalesce(max(extract(epoch FROM now() - lease_until)), 0)::float8
			FROM invocations WHERE state = 'dispatching'`).Scan(&secs)
		if err == nil {
			if d := time.Duration(secs * float64(time.Second)); d > r.overshoot {
				r.overshoot = d
			}
		}
		healthy := err == nil && r.disturbing.Load() == 0
		for _, c := range r.w.consoles {
			healthy = healthy && c.up(ctx)
		}
		switch {
		case !healthy:
			calm = time.Time{}
		case calm.IsZero():
			calm = time.Now()
		default:
			r.findLateSweeps(ctx, calm)
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

func (r *roundRun) findLateSweeps(ctx context.Context, calm time.Time) {
	rows, err := r.w.pool.Query(ctx, `SELECT id, task_id, lease_until FROM invocations
		WHERE state = 'dispatching' AND lease_until > $1 AND lease_until < now() - $2::interval`,
		calm, (sweepInterval + sweepSlack).String())
	if err != nil {
		return
	}
	defer rows.Close()
	for rows.Next() {
		var id, task string
		var until time.Time
		if rows.Scan(&id, &task, &until) != nil {
			return
		}
		if _, seen := r.lateSweeps[id]; !seen && r.disturbing.Load() == 0 {
			r.lateSweeps[id] = Finding{Rule: "sweep_late", Invocation: id, Task: task, Detail: fmt.Sprintf(
				"dispatching %s after its lease ran out at %s, every console up since %s",
				time.Since(until).Round(time.Millisecond), until.Format("15:04:05.000"), calm.Format("15:04:05.000"))}
		}
	}
}

func (r *roundRun) log(what, kind string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	line := fmt.Sprintf("%6dms %s %s", time.Since(r.d.start).Milliseconds(), what, kind)
	if err != nil {
		line += ": " + err.Error()
	}
	r.logs = append(r.logs, line)
}

// runRound builds a fresh world, drives it under the faults for the round's
// length, lets it settle with every process up and every fault lifted,
// reconciles what is unverified, and checks.
func runRound(ctx context.Context, env *Env, cfg Config, round int, seed uint64, faults []Fault) RoundResult {
	rr := RoundResult{Round: round, Seed: seed, Faults: faults}
	w, err := newWorld(ctx, env, cfg.Bin, cfg.Instances)
	if err != nil {
		rr.Error = "setup: " + err.Error()
		return rr
	}
	defer w.close()
	if err := w.shopBaseline(ctx); err != nil {
		rr.Error = "setup: " + err.Error()
		return rr
	}
	d := newDriver(w, seed)
	r := &roundRun{seed: seed, w: w, d: d, lateSweeps: map[string]Finding{}}
	loadCtx, cancel := context.WithTimeout(ctx, cfg.RoundLength)
	var wg sync.WaitGroup
	wg.Go(func() { d.run(loadCtx, cfg.Assistants) })
	wg.Go(func() { r.sampleLeases(loadCtx) })
	r.inject(loadCtx, rr.Faults)
	<-loadCtx.Done()
	cancel()
	wg.Wait()

	unverified, err := settle(ctx, r)
	rr.Actions = d.log
	if err != nil {
		rr.Error = "settle: " + err.Error()
	}
	rr.Counts.Faults = faultCounts(rr.Faults)
	if err == nil {
		rr.Findings, err = check(ctx, w, d, unverified, &rr.Counts)
		if err != nil {
			rr.Error = "check: " + err.Error()
		}
		rr.Findings = append(r.leaseFindings, rr.Findings...)
		for _, f := range r.lateSweeps {
			rr.Findings = append(rr.Findings, f)
		}
		rr.Counts.Violations = len(rr.Findings)
	}
	rr.Counts.LeaseOvershootMS = r.overshoot.Milliseconds()
	rr.Counts.Faults = faultCounts(rr.Faults)
	return rr
}

// settle lifts every fault, brings every console up, lifts the stop and the
// pauses, waits until nothing is approved or dispatching (a dispatching row
// must turn within its lease and one sweep), then reconciles every
// unverified invocation through the API. It returns the ones that were
// unverified before reconciling.
func settle(ctx context.Context, r *roundRun) (map[string]bool, error) {
	w, d := r.w, r.d
	rnd := rand.New(rand.NewPCG(r.seed, 99))
	_ = w.shopFaults(ctx, nil)
	for _, c := range w.consoles {
		c.mu.Lock()
		down := c.down
		c.mu.Unlock()
		if down {
			_ = c.start()
		}
	}
	for _, c := range w.consoles {
		if err := c.waitUp(ctx, 90*time.Second); err != nil {
			return nil, err
		}
	}
	if err := d.globalStop(ctx, rnd, false); err != nil {
		return nil, err
	}
	// Every console is up: within one sweep interval (and the slack a
	// machine shared by PostgreSQL and three consoles needs to run one
	// sweep), nothing may still be dispatching past its lease.
	sleep(ctx, sweepInterval+sweepSlack)
	rows, err := w.pool.Query(ctx, `SELECT id, task_id, lease_until FROM invocations
		WHERE state = 'dispatching' AND lease_until < now() - $1::interval`, (sweepInterval + sweepSlack).String())
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id, task string
		var until time.Time
		if err := rows.Scan(&id, &task, &until); err != nil {
			rows.Close()
			return nil, err
		}
		r.leaseFindings = append(r.leaseFindings, Finding{Rule: "dispatching_past_lease", Invocation: id, Task: task,
			Detail: fmt.Sprintf("still dispatching %s after its lease ran out, with every console up", time.Since(until).Round(time.Millisecond))})
	}
	rows.Close()
	d.mu.Lock()
	var paused []string
	for id, p := range d.paused {
		if p {
			paused = append(paused, id)
		}
	}
	d.mu.Unlock()
	for _, id := range paused {
		_ = d.taskControl(ctx, rnd, id, "resume") // a cancelled one refuses: fine
	}
	// Every lease granted before now ends within leaseLength; give the
	// sweep one interval more, and the dispatchers time to drain.
	deadline := time.Now().Add(leaseLength + 60*time.Second)
	for {
		var busy int
		var maxLease *time.Time
		err := w.pool.QueryRow(ctx, `SELECT count(*), max(lease_until) FROM invocations
			WHERE state IN ('approved', 'dispatching')`).Scan(&busy, &maxLease)
		if err == nil && busy == 0 {
			break
		}
		if time.Now().After(deadline) {
			break // the checker reports what is still dispatching
		}
		sleep(ctx, 250*time.Millisecond)
	}
	sleep(ctx, sweepInterval)

	rows, err = w.pool.Query(ctx, `SELECT id FROM invocations WHERE state = 'unverified' ORDER BY id`)
	if err != nil {
		return nil, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	out := map[string]bool{}
	for i, id := range ids {
		out[id] = true
		for attempt := range 3 {
			var inv apiInvocation
			status, err := d.api.do(ctx, w.console(i+attempt).URL(), http.MethodPost, "/invocations/"+id+"/reconcile", map[string]any{}, "", &inv)
			d.record(Action{Actor: "assistant", Op: "reconcile", Console: (i+attempt)%len(w.consoles) + 1, Status: status,
				Invocation: id, State: inv.State, Error: errText(err)})
			if err == nil || status == http.StatusConflict {
				break
			}
		}
	}
	return out, nil
}

func writeHistory(dir string, rr RoundResult) (string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("chaos-history-%d-round%d.json", rr.Seed, rr.Round))
	b, err := json.MarshalIndent(rr, "", "  ")
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, b, 0o644)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func totals(rounds []RoundResult) Counts {
	t := Counts{Faults: map[string]int{}}
	for _, r := range rounds {
		c := r.Counts
		t.Proposed += c.Proposed
		t.Approved += c.Approved
		t.Completed += c.Completed
		t.Unverified += c.Unverified
		t.Reconciled += c.Reconciled
		t.Effects += c.Effects
		t.AgentApproved += c.AgentApproved
		t.CustomerConfirmed += c.CustomerConfirmed
		t.Violations += c.Violations
		t.StillUnverified += c.StillUnverified
		t.WithEffect += c.WithEffect
		t.LeaseOvershootMS = max(t.LeaseOvershootMS, c.LeaseOvershootMS)
		for k, v := range c.Faults {
			t.Faults[k] += v
		}
	}
	return t
}

func printTable(out io.Writer, res Result) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\tproposed\tapproved\tcompleted\tunverified\treconciled\tstill unverified\t(with effect)\teffects\tfaults\tviolations\t")
	row := func(name string, c Counts) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", name, c.Proposed, c.Approved, c.Completed,
			c.Unverified, c.Reconciled, c.StillUnverified, c.WithEffect, c.Effects, sum(c.Faults), c.Violations)
	}
	for _, r := range res.Rounds {
		name := fmt.Sprint(r.Round)
		if r.Error != "" {
			name += " (error)"
		}
		row(name, r.Counts)
	}
	row("total", res.Totals)
	tw.Flush()
	var parts []string
	for _, k := range FaultKinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, res.Totals.Faults[k]))
	}
	fmt.Fprintf(out, "faults injected: %s\n", strings.Join(parts, ", "))
	fmt.Fprintf(out, "longest a dispatch was seen past its lease during the load: %s\n", time.Duration(res.Totals.LeaseOvershootMS)*time.Millisecond)
	fmt.Fprintf(out, "seed %d: %d rounds, %d violations\n", res.Seed, len(res.Rounds), res.Totals.Violations)
}

// BuildConsole builds cmd/countersign into dir and returns the binary's path.
func BuildConsole(dir string) (string, error) {
	bin := filepath.Join(dir, "countersign")
	out, err := exec.Command("go", "build", "-o", bin, "countersign/cmd/countersign").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("chaos: build the console: %v\n%s", err, out)
	}
	return bin, nil
}
