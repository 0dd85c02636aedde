package pgcluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/internal/slowtest"
)

// TestFailoverToASynchronousStandbyKeepsEveryAcknowledgedCommit commits
// rows from eight goroutines through a multi-host URL, kills the primary
// with SIGKILL halfway, promotes the synchronous standby, and lets the
// goroutines carry on (the pool finds the new primary by itself). Every
// commit that was acknowledged, before or after the failover, is on the
// new primary: synchronous replication loses none.
func TestFailoverToASynchronousStandbyKeepsEveryAcknowledgedCommit(t *testing.T) {
	slowtest.Skip(t, "starts a primary and a standby and kills the primary")
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := testDir(t)
	if err := os.Chmod(dir, 0o755); err != nil { // the postgres OS user reaches both data dirs
		t.Fatal(err)
	}
	primary, err := Start(ctx, Config{DataDir: filepath.Join(dir, "primary"), Settings: []string{"synchronous_commit=on"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = primary.Stop(context.Background()) })
	standby, err := StartStandby(ctx, primary, StandbyConfig{DataDir: filepath.Join(dir, "standby"), Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = standby.Stop(context.Background()) })
	exec1(t, primary, "CREATE TABLE journal (id bigint PRIMARY KEY)")

	pool, err := pgxpool.New(ctx, MultiHostURL("postgres", primary, standby))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	const workers, each = 8, 60
	var (
		mu       sync.Mutex
		acked    []int64
		failures atomic.Int64
		next     atomic.Int64
		half     = make(chan struct{})
		halfOnce sync.Once
	)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				id := next.Add(1)
				if id == workers*each/2 {
					halfOnce.Do(func() { close(half) })
				}
				// Retried until acknowledged: the failover's errors are
				// the only ones expected.
				for ctx.Err() == nil {
					_, err := pool.Exec(ctx, "INSERT INTO journal VALUES ($1) ON CONFLICT DO NOTHING", id)
					if err == nil {
						mu.Lock()
						acked = append(acked, id)
						mu.Unlock()
						break
					}
					failures.Add(1)
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
	}
	<-half
	primary.Kill()
	if err := standby.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the writers did not finish after the failover: %v", ctx.Err())
	}

	conn, err := pgx.Connect(ctx, standby.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var inRecovery bool
	if err := conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&inRecovery); err != nil || inRecovery {
		t.Fatalf("the promoted standby is still in recovery (%v)", err)
	}
	lost := 0
	for _, id := range acked {
		var one int
		err := conn.QueryRow(ctx, "SELECT 1 FROM journal WHERE id = $1", id).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			lost++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if len(acked) != workers*each {
		t.Errorf("%d of %d rows acknowledged", len(acked), workers*each)
	}
	if lost > 0 {
		t.Errorf("%d acknowledged commits are missing on the promoted standby", lost)
	}
	t.Logf("failover: %d commits acknowledged, %d lost, %d attempts failed during the failover", len(acked), lost, failures.Load())
}

// TestFailoverToAnAsynchronousStandbyLosesAcknowledgedCommits is the other
// side: with asynchronous replication the primary acknowledges commits its
// standby has not received (here, once the standby's WAL receiver is cut
// off), and after a failover those commits are gone. This is what the
// README's settings for exactly-once guard against.
func TestFailoverToAnAsynchronousStandbyLosesAcknowledgedCommits(t *testing.T) {
	slowtest.Skip(t, "starts a primary and a standby and kills the primary")
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := testDir(t)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	primary, err := Start(ctx, Config{DataDir: filepath.Join(dir, "primary"), Settings: []string{"synchronous_commit=on"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = primary.Stop(context.Background()) })
	standby, err := StartStandby(ctx, primary, StandbyConfig{DataDir: filepath.Join(dir, "standby")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = standby.Stop(context.Background()) })
	exec1(t, primary, "CREATE TABLE journal (id bigint PRIMARY KEY)")
	exec1(t, primary, "INSERT INTO journal SELECT generate_series(1, 50)")
	// Wait until the standby has the first fifty, then cut it off.
	for exec1(t, standby, "SELECT (to_regclass('journal') IS NOT NULL)::text") != "true" {
		time.Sleep(20 * time.Millisecond)
	}
	for exec1(t, standby, "SELECT count(*)::text FROM journal") != "50" {
		time.Sleep(20 * time.Millisecond)
	}
	exec1(t, standby, "ALTER SYSTEM SET primary_conninfo = ''")
	exec1(t, standby, "SELECT pg_reload_conf()::text")
	for exec1(t, primary, "SELECT count(*)::text FROM pg_stat_replication") != "0" {
		time.Sleep(20 * time.Millisecond)
	}
	exec1(t, primary, "INSERT INTO journal SELECT generate_series(51, 80)") // acknowledged, never replicated
	primary.Kill()
	if err := standby.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	got := exec1(t, standby, "SELECT count(*)::text FROM journal")
	if got != "50" {
		t.Errorf("the promoted asynchronous standby has %s rows, want the 50 it received (30 acknowledged commits lost)", got)
	}
	t.Logf("asynchronous failover: 80 commits acknowledged, %s on the promoted standby", got)
}
