package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/slowtest"
	"countersign/store"
	"countersign/store/pgcluster"
)

// TestConsolesSurviveAFailover runs two console processes on a primary
// with a synchronous standby, through a multi-host DATABASE_URL, while they
// dispatch 40 automatic writes; halfway the primary is killed with SIGKILL
// and the standby promoted. The consoles reconnect to the new primary by
// themselves and carry on: every write ends completed, unverified when its
// answer was lost with the primary, or not dispatched when the failover
// came between its permit and its request (the adapter could not claim its
// key in the request ledger, so nothing was sent: the shop has no effect of
// it) — none is sent twice, none is lost.
func TestConsolesSurviveAFailover(t *testing.T) {
	slowtest.Skip(t, "starts a primary, a standby and two console processes, and kills the primary")
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "failover-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	primary, err := pgcluster.Start(ctx, pgcluster.Config{DataDir: filepath.Join(dir, "primary"), Settings: []string{"synchronous_commit=on"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = primary.Stop(context.Background()) })
	if err := createDatabase(ctx, primary.URL("postgres"), "countersign"); err != nil {
		t.Fatal(err)
	}
	standby, err := pgcluster.StartStandby(ctx, primary, pgcluster.StandbyConfig{DataDir: filepath.Join(dir, "standby"), Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = standby.Stop(context.Background()) })
	dbURL := pgcluster.MultiHostURL("countersign", primary, standby)
	pool, err := store.Open(ctx, dbURL, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	pool.Close()

	f := newFleetOn(t, dbURL)
	if err := f.shop.SetFault(demoshop.FaultRule{Route: "PATCH /products/{id}", LatencyMS: 50}); err != nil {
		t.Fatal(err)
	}
	task, invs := f.proposeEdits(40)
	f.start("ADAPTER_TIMEOUT=3s", "DISPATCH_LEASE_MARGIN=500ms")
	f.start("ADAPTER_TIMEOUT=3s", "DISPATCH_LEASE_MARGIN=500ms")
	for range len(invs) / 2 {
		select {
		case <-f.arrivals:
		case <-ctx.Done():
			t.Fatalf("writes did not reach the shop; %d arrived", f.writes.Load())
		}
	}
	primary.Kill()
	if err := standby.Promote(ctx); err != nil {
		t.Fatal(err)
	}

	// The control plane here reads through the same multi-host URL; reads
	// during the switch fail and are tried again.
	var counts map[controlplane.State]int
	for {
		invsNow, err := f.cp.Invocations(ctx, task.ID)
		if err == nil {
			counts = map[controlplane.State]int{}
			for _, inv := range invsNow {
				counts[inv.State]++
			}
			if counts[controlplane.Completed]+counts[controlplane.Unverified]+counts[controlplane.NotDispatched] == len(invs) {
				for _, inv := range invsNow {
					if n := f.effectsFor(inv.IdempotencyKey); inv.State == controlplane.NotDispatched && n > 0 {
						t.Errorf("%s is not dispatched (%s) but has %d effects at the shop", inv.ID, inv.NotDispatchedReason, n)
					}
				}
				break
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("after the failover the writes did not settle: %v (last error %v)", counts, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	for _, inv := range invs {
		if n := f.effectsFor(inv.IdempotencyKey); n > 1 {
			t.Errorf("%s has %d effects at the shop", inv.ID, n)
		}
	}
	if got := f.writes.Load(); got > int64(len(invs)) {
		t.Errorf("the shop received %d writes for %d invocations: something was sent twice", got, len(invs))
	}
	t.Logf("failover under load: %d invocations %v, shop writes received %d", len(invs), counts, f.writes.Load())
}
