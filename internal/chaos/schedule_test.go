package chaos

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestScheduleIsReproducible draws the same schedule from the same seed,
// a different one from another, every kind of fault over a few seeds, and
// never two shop rules (one table) or two process faults at once.
func TestScheduleIsReproducible(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff(schedule(42, time.Minute, 3), schedule(42, time.Minute, 3)); diff != "" {
		t.Errorf("one seed, two schedules (-first +second):\n%s", diff)
	}
	if cmp.Equal(schedule(42, time.Minute, 3), schedule(43, time.Minute, 3)) {
		t.Error("seeds 42 and 43 drew the same schedule")
	}
	seen := map[string]bool{}
	for seed := range uint64(20) {
		var shopUntil, procUntil int64
		for _, f := range schedule(seed, time.Minute, 3) {
			seen[f.Kind] = true
			switch f.Kind {
			case FaultShopLatency, FaultShop5xx, FaultShopReset, FaultShopDrop, FaultShopIgnore:
				if f.AtMS < shopUntil {
					t.Errorf("seed %d: %s at %d ms while a shop rule holds until %d ms", seed, f.Kind, f.AtMS, shopUntil)
				}
				shopUntil = f.AtMS + f.HoldMS
			case FaultConsoleKill, FaultConsoleFreeze, FaultPGRestart, FaultPGCrash, FaultPGFailover:
				if f.AtMS < procUntil {
					t.Errorf("seed %d: %s at %d ms while a process fault holds until %d ms", seed, f.Kind, f.AtMS, procUntil)
				}
				procUntil = f.AtMS + f.HoldMS
			}
		}
	}
	for _, k := range DefaultKinds(false) {
		if !seen[k] {
			t.Errorf("20 seeds never drew %s", k)
		}
	}
	if seen[FaultPGFailover] {
		t.Errorf("drew %s without a standby", FaultPGFailover)
	}
	failovers := 0
	for seed := range uint64(20) {
		for _, f := range schedule(seed, time.Minute, 3, DefaultKinds(true)...) {
			if f.Kind == FaultPGFailover {
				failovers++
			}
		}
	}
	if failovers == 0 {
		t.Errorf("20 seeds with a standby never drew %s", FaultPGFailover)
	}
}
