package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"countersign/internal/webhooks"
)

// roundRun is one round in progress.
type roundRun struct {
	seed uint64
	w    *world
	d    *driver
	// leaseFindings are dispatching rows found past their lease once every
	// console was up again (settle).
	leaseFindings []Finding
	// overshoot is the longest a dispatching row was seen past its lease
	// while the load ran, faults or not.
	overshoot time.Duration
	// pgDown counts the database faults in force.
	pgDown atomic.Int32
	// lateSweeps are rows seen dispatching past their lease by more than a
	// sweep interval (and slack) although their lease ran out while
	// PostgreSQL answered and at least one console was up: the others may
	// be dead or hung, which is what the lease is for.
	lateSweeps map[string]Finding
}

// sampleLeases records, every half second while ctx lasts, how far past
// its lease the oldest dispatching row is.
//
// It also checks the sweep under load: from the moment PostgreSQL is not
// being restarted and at least one console answers (calm) — the others
// killed or frozen, as they may be — a lease that runs out must be swept
// within one sweep interval and the slack.
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
		anyUp := false
		for _, c := range r.w.consoles {
			anyUp = anyUp || c.up(ctx)
		}
		healthy := err == nil && r.pgDown.Load() == 0 && anyUp
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
		calm, sweepBound.String())
	if err != nil {
		return
	}
	type late struct {
		id, task string
		until    time.Time
	}
	var found []late
	for rows.Next() {
		var l late
		if rows.Scan(&l.id, &l.task, &l.until) != nil {
			rows.Close()
			return
		}
		found = append(found, l)
	}
	rows.Close()
	for _, l := range found {
		if _, seen := r.lateSweeps[l.id]; !seen && r.pgDown.Load() == 0 {
			r.lateSweeps[l.id] = Finding{Rule: "sweep_late", Invocation: l.id, Task: l.task, Detail: fmt.Sprintf(
				"dispatching %s after its lease ran out at %s, PostgreSQL and a console up since %s; sessions then: %s",
				time.Since(l.until).Round(time.Millisecond), l.until.Format("15:04:05.000"), calm.Format("15:04:05.000"),
				r.sessions(ctx))}
		}
	}
}

// sessions describes the console database's sessions that are inside a
// transaction or waiting for a lock, for a sweep_late finding: which
// session held the row, and in what state, is what explains a late sweep.
func (r *roundRun) sessions(ctx context.Context) string {
	var out string
	err := r.w.pool.QueryRow(ctx, `SELECT coalesce(string_agg(format('pid %s %s (%s) for %s, blocked by %s: %s',
			pid, state, coalesce(wait_event_type, '-'), date_trunc('milliseconds', now() - coalesce(xact_start, state_change)),
			pg_blocking_pids(pid), left(query, 100)), '; '), 'none')
		FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()
		  AND (xact_start IS NOT NULL OR wait_event_type = 'Lock')`).Scan(&out)
	if err != nil {
		return "unknown: " + err.Error()
	}
	return out
}

// runRound builds a fresh world, drives it under the faults for the round's
// length, lets it settle with every process up and every fault lifted,
// reconciles what is unverified, and checks.
func runRound(ctx context.Context, env *Env, cfg Config, round int, seed uint64, faults []Fault) RoundResult {
	rr := RoundResult{Round: round, Seed: seed, Faults: faults}
	w, err := newWorld(ctx, env, cfg.Bin, cfg.Instances, seed, cfg.SecondSystem)
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
	if w.hooks != nil {
		rr.Webhooks = w.hooks.received()
	}
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
	waitForSweeps(ctx, w)

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
	settleHooks(ctx, r, rnd)
	return out, nil
}

// sweepReach is how long after a write ends unverified the consoles' own
// reconciliation has had its chance: its looks at 1, 3, 7 and 15 s
// (reconcileFirst, doubling), the last one past the shop's settle time
// since the call began, and the slack of a busy machine.
const sweepReach = 15*time.Second + shopSettle/2 + 2*sweepSlack

// gqlSweepReach is sweepReach for the GraphQL shop's writes: the look at
// 63 s (after those at 1, 3, 7, 15 and 31 s) is the first past
// graphql-shop.json's settle_after of a minute (the least a description
// file may declare) since the call began.
const gqlSweepReach = 63*time.Second + 2*sweepSlack

// waitForSweeps waits, at most the longest reach and two sweep intervals
// more, until every unverified invocation has been unverified for its
// system's reach (sweepReach; gqlSweepReach for the GraphQL shop's): what
// the consoles settle by themselves is settled before the campaign
// reconciles the rest through the API.
func waitForSweeps(ctx context.Context, w *world) {
	reach := sweepReach
	if w.second == SecondGraphQL {
		reach = max(reach, gqlSweepReach)
	}
	deadline := time.Now().Add(reach + 2*sweepInterval)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var young int
		err := w.pool.QueryRow(ctx, `SELECT count(*) FROM invocations WHERE state = 'unverified'
			AND updated_at > now() - CASE WHEN system = $2 THEN $3::interval ELSE $1::interval END`,
			sweepReach.String(), systemGraphQL, gqlSweepReach.String()).Scan(&young)
		if err == nil && young == 0 {
			break
		}
		sleep(ctx, 250*time.Millisecond)
	}
	sleep(ctx, 2*sweepInterval)
}

// settleHooks gives the outcome webhooks a bounded time to arrive: the
// receiver stops misbehaving, the admin resends (on the assistant's page)
// each delivery waiting out a back-off, and the round waits until the
// receiver has taken every outcome event the journal has, or webhookSettle
// has passed (the checker then reports what is missing, or late under a
// claim a killed console held).
func settleHooks(ctx context.Context, r *roundRun, rnd *rand.Rand) {
	w, d := r.w, r.d
	if !w.wide {
		return
	}
	w.hooks.calm.Store(true)
	resent := map[int64]time.Time{}
	for deadline := time.Now().Add(webhookSettle); time.Now().Before(deadline) && ctx.Err() == nil; {
		var events []int64
		rows, err := w.pool.Query(ctx, `SELECT id FROM events WHERE invocation_id IS NOT NULL AND action = ANY($1)`, webhooks.Names(webhooks.Outcomes))
		if err == nil {
			events, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		}
		if err != nil {
			sleep(ctx, 250*time.Millisecond)
			continue
		}
		took := map[int64]bool{}
		for _, rec := range w.hooks.received() {
			if rec.Status/100 == 2 {
				took[rec.EventID] = true
			}
		}
		// What waits behind a claim a killed console holds is late, not
		// to be waited for here.
		var ds []journalDelivery
		rows, err = w.pool.Query(ctx, `SELECT id, event_id, invocation_id, state, attempts, lease_until, next_attempt_at
			FROM webhook_deliveries ORDER BY event_id`)
		if err == nil {
			ds, err = pgx.CollectRows(rows, pgx.RowToStructByName[journalDelivery])
		}
		if err != nil {
			sleep(ctx, 250*time.Millisecond)
			continue
		}
		late, byEvent := lateDeliveries(ds, time.Now()), map[int64]int64{}
		for _, dl := range ds {
			byEvent[dl.EventID] = dl.ID
		}
		missing := 0
		for _, id := range events {
			if dl, ok := byEvent[id]; !took[id] && (!ok || late[dl] == 0) {
				missing++
			}
		}
		if missing == 0 {
			return
		}
		var waiting []int64
		rows, err = w.pool.Query(ctx, `SELECT id FROM webhook_deliveries WHERE state = 'pending'
			AND next_attempt_at > now() + interval '1 second' AND (lease_until IS NULL OR lease_until < now())`)
		if err == nil {
			waiting, _ = pgx.CollectRows(rows, pgx.RowTo[int64])
		}
		for _, id := range waiting {
			// A resend is refused while an attempt holds the delivery (the
			// page answers alike): one that is still waiting is resent
			// again a second later.
			if time.Since(resent[id]) > time.Second && d.resendDelivery(ctx, rnd, id) == nil {
				resent[id] = time.Now()
			}
		}
		sleep(ctx, 250*time.Millisecond)
	}
}
