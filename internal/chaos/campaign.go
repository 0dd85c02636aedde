// Package chaos runs randomized fault campaigns against real console
// processes, one PostgreSQL and the demo shop, and checks after every round
// that each approved write took effect at most once, and only when and as
// its journal says: the invariants are listed on check. A campaign is
// reproducible from its seed: the workload's choices and the fault
// schedule derive from it (timing does not). README.md beside this file
// describes the campaign, its flags, faults, invariants and report.
package chaos

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
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
	// Faults limits the schedule to these kinds; empty means every kind
	// (pg_failover only with Replication).
	Faults []string
	// Replication runs PostgreSQL with a streaming standby, "sync" or
	// "async" (ReplicationSync, ReplicationAsync), which pg_failover
	// promotes; empty means one server.
	Replication string
	// Pooler runs the consoles behind PgBouncer in transaction pooling
	// mode (DATABASE_URL through it, DATABASE_DIRECT_URL beside it).
	Pooler bool
	// SecondSystem is the wide round's second system beside the shop:
	// SecondWarehouse (the default when empty), a demo shop described by
	// warehouse.json, or SecondGraphQL, the GraphQL shop described by
	// graphql-shop.json.
	SecondSystem string
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
	// Webhooks is every request the receiver answered, in order.
	Webhooks []received `json:"webhooks_received,omitempty"`
	Error    string     `json:"error,omitempty"`
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

// sweepBound is how late past its lease an invocation may still be
// dispatching while PostgreSQL and a console are up: a console frozen inside
// StartSend's transaction holds the row until PostgreSQL ends its session
// (idleInTx after it froze, which is before the lease ran out, or StartSend
// would not have matched); the sweep skips a locked row and takes it on its
// next pass.
const sweepBound = sweepInterval + idleInTx + sweepSlack

// Run runs a campaign and prints its table.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	res := Result{Seed: cfg.Seed}
	cfg.SecondSystem = cmp.Or(cfg.SecondSystem, SecondWarehouse)
	if cfg.SecondSystem != SecondWarehouse && cfg.SecondSystem != SecondGraphQL {
		return res, fmt.Errorf("chaos: second system %q: want %q or %q", cfg.SecondSystem, SecondWarehouse, SecondGraphQL)
	}
	fmt.Fprintf(cfg.Out, "chaos: seed %d, %d console instances, rounds of %s, budget %s, replication %q, pooler %v, second system %s\n",
		cfg.Seed, cfg.Instances, cfg.RoundLength, cfg.Duration, cfg.Replication, cfg.Pooler, cfg.SecondSystem)
	env, err := StartReplicatedEnv(ctx, slog.New(slog.DiscardHandler), cfg.Replication)
	if err != nil {
		return res, err
	}
	defer env.Close()
	if cfg.Pooler {
		if err := env.StartPooler(ctx); err != nil {
			return res, err
		}
	}
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
		kinds := cfg.Faults
		if len(kinds) == 0 {
			kinds = DefaultKinds(cfg.Replication != "")
		}
		faults := schedule(seed, cfg.RoundLength, cfg.Instances, kinds...)
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
		fmt.Fprintf(cfg.Out, "  wide: refunds completed %d, originals reversed %d, %s effects %d, outcome events %d (taken again %d, late %d)\n",
			rr.Counts.Refunds, rr.Counts.Reversed, cfg.SecondSystem, rr.Counts.DescribedFx, rr.Counts.HookEvents, rr.Counts.HookRepeated, rr.Counts.HookLate)
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

// BuildConsole builds cmd/countersign into dir and returns the binary's path.
func BuildConsole(dir string) (string, error) {
	bin := filepath.Join(dir, "countersign")
	out, err := exec.Command("go", "build", "-o", bin, "countersign/cmd/countersign").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("chaos: build the console: %w\n%s", err, out)
	}
	return bin, nil
}
