package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// Fault kinds the scheduler injects.
const (
	FaultConsoleKill   = "console_kill"   // SIGKILL a console, start it again after Hold
	FaultConsoleFreeze = "console_freeze" // SIGSTOP a console past its leases, SIGCONT after Hold
	FaultPGRestart     = "pg_restart"     // fast shutdown and start of PostgreSQL
	FaultPGCrash       = "pg_crash"       // immediate shutdown (SIGQUIT) and start: crash recovery
	FaultPGFailover    = "pg_failover"    // SIGKILL the primary, promote the standby, rebuild a standby (needs -replication)
	FaultTaskPause     = "task_pause"     // the assistant pauses a task, resumes it after Hold
	FaultTaskCancel    = "task_cancel"    // the assistant cancels a task
	FaultGlobalStop    = "global_stop"    // the admin stops all dispatch, lifts it after Hold
	FaultShopLatency   = "shop_latency"   // the shop answers slowly (sometimes past the adapter timeout)
	FaultShop5xx       = "shop_5xx"       // the shop answers 500 without applying
	FaultShopReset     = "shop_reset"     // the shop resets connections without applying
	FaultShopDrop      = "shop_drop"      // the shop commits and drops the answer
	FaultShopIgnore    = "shop_ignore"    // the shop answers success and rolls back
)

// FaultKinds lists every kind, in the order the table prints them.
var FaultKinds = []string{FaultConsoleKill, FaultConsoleFreeze, FaultPGRestart, FaultPGCrash, FaultPGFailover, FaultTaskPause,
	FaultTaskCancel, FaultGlobalStop, FaultShopLatency, FaultShop5xx, FaultShopReset, FaultShopDrop, FaultShopIgnore}

// DefaultKinds is what a campaign draws from when none are named: every
// kind, pg_failover only when the database has a standby.
func DefaultKinds(replicated bool) []string {
	var out []string
	for _, k := range FaultKinds {
		if k != FaultPGFailover || replicated {
			out = append(out, k)
		}
	}
	return out
}

// Fault is one scheduled misfortune.
type Fault struct {
	AtMS    int64   `json:"at_ms"`
	Kind    string  `json:"kind"`
	HoldMS  int64   `json:"hold_ms,omitempty"`
	Console int     `json:"console,omitempty"`
	Route   string  `json:"route,omitempty"`
	Latency int     `json:"latency_ms,omitempty"`
	Rate    float64 `json:"rate,omitempty"`
	Count   int     `json:"count,omitempty"`
	// Done and Error are filled in when the fault ran.
	Done  bool   `json:"done"`
	Error string `json:"error,omitempty"`
}

var writeRoutes = []string{"PATCH /products/{id}", "PATCH /subscriptions/{id}", "PATCH /orders/{id}", "*"}

// schedule draws a round's faults from its seed: about one every
// `every`, spread over the round, shop faults never overlapping (one rule
// table), process and database faults at least a few seconds apart.
// kinds, when not empty, limits the draw to those kinds.
func schedule(seed uint64, length time.Duration, instances int, kinds ...string) []Fault {
	if len(kinds) == 0 {
		kinds = DefaultKinds(false)
	}
	rnd := rand.New(rand.NewPCG(seed, 7))
	var out []Fault
	every := 4 * time.Second
	var shopFree, procFree time.Duration
	for at := time.Second + time.Duration(rnd.IntN(2000))*time.Millisecond; at < length-2*time.Second; at += every/2 + time.Duration(rnd.Int64N(int64(every))) {
		f := Fault{AtMS: at.Milliseconds(), Kind: kinds[rnd.IntN(len(kinds))]}
		hold := time.Duration(500+rnd.IntN(4000)) * time.Millisecond
		f.HoldMS = hold.Milliseconds()
		switch f.Kind {
		case FaultConsoleKill, FaultConsoleFreeze, FaultPGRestart, FaultPGCrash, FaultPGFailover:
			if at < procFree {
				continue
			}
			if f.Kind == FaultConsoleFreeze {
				// Longer than a lease, so other instances sweep its work.
				hold = leaseLength + time.Duration(500+rnd.IntN(3000))*time.Millisecond
				f.HoldMS = hold.Milliseconds()
			}
			procFree = at + hold + 3*time.Second
			f.Console = 1 + rnd.IntN(instances)
			if f.Kind == FaultPGRestart || f.Kind == FaultPGCrash {
				f.Console = 0
				f.HoldMS = int64(200 + rnd.IntN(1500))
			}
			if f.Kind == FaultPGFailover {
				f.Console, f.HoldMS = 0, 0
				procFree = at + 10*time.Second // a new standby is built after it
			}
		case FaultShopLatency, FaultShop5xx, FaultShopReset, FaultShopDrop, FaultShopIgnore:
			if at < shopFree {
				continue
			}
			shopFree = at + hold + 200*time.Millisecond
			f.Route = writeRoutes[rnd.IntN(len(writeRoutes))]
			switch f.Kind {
			case FaultShopLatency:
				f.Latency = 100 + rnd.IntN(2600) // past the 2 s adapter timeout now and then
			case FaultShop5xx, FaultShopReset:
				f.Rate = 0.2 + rnd.Float64()*0.6
			default:
				f.Count = 1 + rnd.IntN(4)
			}
		case FaultTaskCancel:
			f.HoldMS = 0
		}
		out = append(out, f)
	}
	return out
}

// inject runs the schedule against the world until ctx ends, filling in
// Done and Error; it returns when every fault has run and been undone.
func (r *roundRun) inject(ctx context.Context, faults []Fault) {
	rnd := rand.New(rand.NewPCG(r.seed, 11))
	start := r.d.start
	undo := make(chan func(), len(faults))
	pendingUndo := 0
	for i := range faults {
		f := &faults[i]
		wait := time.Until(start.Add(time.Duration(f.AtMS) * time.Millisecond))
		select {
		case <-ctx.Done():
			for ; pendingUndo > 0; pendingUndo-- {
				(<-undo)()
			}
			return
		case <-time.After(wait):
		}
		u, err := r.apply(ctx, rnd, f)
		f.Done = true
		if err != nil {
			f.Error = err.Error()
		}
		if u != nil {
			pendingUndo++
			hold := time.Duration(f.HoldMS) * time.Millisecond
			go func() {
				time.Sleep(hold)
				undo <- u
			}()
		}
		for drained := false; !drained; {
			select {
			case u := <-undo:
				u()
				pendingUndo--
			default:
				drained = true
			}
		}
	}
	for ; pendingUndo > 0; pendingUndo-- {
		(<-undo)()
	}
}

// apply injects one fault and returns what undoes it, if anything.
func (r *roundRun) apply(ctx context.Context, rnd *rand.Rand, f *Fault) (func(), error) {
	w, d := r.w, r.d
	switch f.Kind {
	case FaultConsoleKill:
		c := w.consoles[(f.Console-1)%len(w.consoles)]
		c.kill()
		return func() { _ = c.start() }, nil
	case FaultConsoleFreeze:
		c := w.consoles[(f.Console-1)%len(w.consoles)]
		c.freeze()
		return c.thaw, nil
	case FaultPGRestart, FaultPGCrash:
		r.pgDown.Add(1)
		defer r.pgDown.Add(-1)
		return nil, w.env.RestartPostgres(ctx, f.Kind == FaultPGCrash, time.Duration(f.HoldMS)*time.Millisecond)
	case FaultPGFailover:
		r.pgDown.Add(1)
		defer r.pgDown.Add(-1)
		return nil, w.env.Failover(ctx)
	case FaultTaskPause:
		id := d.randomTask(rnd)
		if id == "" {
			return nil, fmt.Errorf("no task yet")
		}
		if err := d.taskControl(ctx, rnd, id, "pause"); err != nil {
			return nil, err
		}
		return func() { _ = d.taskControl(context.WithoutCancel(ctx), rnd, id, "resume") }, nil
	case FaultTaskCancel:
		id := d.randomTask(rnd)
		if id == "" {
			return nil, fmt.Errorf("no task yet")
		}
		return nil, d.taskControl(ctx, rnd, id, "cancel")
	case FaultGlobalStop:
		if err := d.globalStop(ctx, rnd, true); err != nil {
			return func() { _ = d.globalStop(context.WithoutCancel(ctx), rnd, false) }, err
		}
		return func() { _ = d.globalStop(context.WithoutCancel(ctx), rnd, false) }, nil
	default:
		rule := map[string]any{"route": f.Route}
		switch f.Kind {
		case FaultShopLatency:
			rule["latency_ms"] = f.Latency
		case FaultShop5xx:
			rule["error_rate"] = f.Rate
		case FaultShopReset:
			rule["reset_rate"] = f.Rate
		case FaultShopDrop:
			rule["drop_after_commit"] = f.Count
		case FaultShopIgnore:
			rule["ignore_writes"] = f.Count
		}
		if err := w.shopFaults(ctx, rule); err != nil {
			return nil, err
		}
		return func() { _ = w.shopBaseline(context.WithoutCancel(ctx)) }, nil
	}
}

// baselineLatency slows every shop call a little, always: writes of one
// task then overlap, so in-flight limits are tested and not only passed.
const baselineLatency = 40

// shopBaseline clears every rule and sets the baseline latency.
func (w *world) shopBaseline(ctx context.Context) error {
	if err := w.shopFaults(ctx, nil); err != nil {
		return err
	}
	return w.shopFaults(ctx, map[string]any{"route": "*", "latency_ms": baselineLatency})
}

// shopFaults sets one rule through POST /_faults, or clears every rule, on
// the shop and, in a wide round, the second system alike (a described
// system meets the same misfortunes): the warehouse's /_faults, or the
// GraphQL shop's fault rules (gqlFaults), which hit its mutations whatever
// the rule's route.
func (w *world) shopFaults(ctx context.Context, rule map[string]any) error {
	if err := setFaults(ctx, w.shopURL, w.shop.Token(), rule); err != nil {
		return err
	}
	if w.gqlFaults != nil {
		w.gqlFaults.set(rule)
	}
	if w.warehouse != nil {
		return setFaults(ctx, w.whURL, w.warehouse.Token(), rule)
	}
	return nil
}

func setFaults(ctx context.Context, base, token string, rule map[string]any) error {
	method, body := http.MethodDelete, []byte(nil)
	if rule != nil {
		method = http.MethodPost
		body, _ = json.Marshal(rule)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+"/_faults", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := quick.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("shop %s %s/_faults: %d", method, base, res.StatusCode)
	}
	return nil
}

// faultCounts counts the faults that ran, by kind.
func faultCounts(faults []Fault) map[string]int {
	out := map[string]int{}
	for _, f := range faults {
		if f.Done && f.Error == "" {
			out[f.Kind]++
		}
	}
	return out
}
