// Command chaos runs a randomized fault campaign against real console
// processes on one PostgreSQL and the demo shop, and checks after every
// round that every write took effect exactly as its journal says (see
// internal/chaos). It prints a table of counts per round and exits 1 when
// any invariant broke, writing the failing round's history as JSON.
//
//	chaos -seed 42 -duration 30m -instances 3
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"countersign/internal/chaos"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
}

func run() error {
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()), "campaign seed; the same seed draws the same schedules")
	rounds := flag.Int("rounds", 0, "most rounds to run; 0: until -duration is spent")
	duration := flag.Duration("duration", 10*time.Minute, "time budget of the whole campaign")
	roundLength := flag.Duration("round", 60*time.Second, "load and faults per round")
	instances := flag.Int("instances", 3, "console processes sharing the database (2 or 3)")
	assistants := flag.Int("assistants", 4, "concurrent proposers")
	bin := flag.String("bin", "", "built cmd/countersign binary; empty: build one")
	history := flag.String("history", ".", "folder for the JSON history of failing rounds")
	faults := flag.String("faults", "", "comma-separated fault kinds to draw from (default: every kind): "+strings.Join(chaos.FaultKinds, ","))
	replication := flag.String("replication", "", "run PostgreSQL with a streaming standby, sync or async, and draw pg_failover faults; empty: one server")
	pooler := flag.Bool("pooler", false, "run the consoles behind PgBouncer in transaction pooling mode")
	second := flag.String("second-system", chaos.SecondWarehouse, "the second system beside the shop: "+chaos.SecondWarehouse+
		" (a demo shop described by a file) or "+chaos.SecondGraphQL+" (the GraphQL shop described by a file)")
	keep := flag.Bool("keep-history", false, "write every round's history, not only failing ones")
	noShrink := flag.Bool("no-shrink", false, "do not retry a failing round with halves of its faults")
	flag.Parse()
	if *second != chaos.SecondWarehouse && *second != chaos.SecondGraphQL {
		return fmt.Errorf("-second-system must be %s or %s, got %q", chaos.SecondWarehouse, chaos.SecondGraphQL, *second)
	}
	if *instances < 1 || *instances > 5 {
		return fmt.Errorf("-instances must be between 1 and 5, got %d", *instances)
	}
	var kinds []string
	if *faults != "" {
		for _, k := range strings.Split(*faults, ",") {
			if !slices.Contains(chaos.FaultKinds, k) {
				return fmt.Errorf("-faults: unknown kind %q; the kinds are %s", k, strings.Join(chaos.FaultKinds, ", "))
			}
			kinds = append(kinds, k)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *bin == "" {
		dir, err := os.MkdirTemp("", "countersign-chaos-bin-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if *bin, err = chaos.BuildConsole(dir); err != nil {
			return err
		}
	}
	res, err := chaos.Run(ctx, chaos.Config{Seed: *seed, Rounds: *rounds, Duration: *duration, RoundLength: *roundLength,
		Instances: *instances, Assistants: *assistants, Bin: *bin, Shrink: !*noShrink, HistoryDir: *history, KeepHistory: *keep, Faults: kinds, Replication: *replication, Pooler: *pooler,
		SecondSystem: *second, Out: os.Stdout})
	if err != nil {
		return err
	}
	if res.Failed() {
		os.Exit(1)
	}
	return nil
}
