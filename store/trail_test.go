package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/store"
	"countersign/store/dbtest"
)

// trailFixture makes a task with one invocation awaiting approval.
func trailFixture(t *testing.T, ctx context.Context, pool *pgxpool.Pool) {
	t.Helper()
	now := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	for _, q := range []string{
		`INSERT INTO tasks (id, customer_ref, conversation_id, allowed_actions, write_budget, inflight_limit, rate_per_minute,
			expires_at, state, created_at, updated_at)
		 VALUES ('tsk_trail', 'c@example.test', 'conv-trail', '{issue_refund}', 10, 2, 60, $1::timestamptz + interval '1 day',
			'active', $1, $1)`,
		`INSERT INTO invocations (id, task_id, conversation_id, system, action, target_kind, target_id, target_display, state,
			proposed_args, args_hash, quote, idempotency_key, amount_cents, policy_stage, policy_version, deadline_at,
			created_at, updated_at)
		 VALUES ('inv_trail', 'tsk_trail', 'conv-trail', 'shop', 'issue_refund', 'order', 'ord_1', 'Order 1',
			'awaiting_approval', '{}', '\x01', '{}', 'key-1', 100, 3, 1, $1::timestamptz + interval '1 hour', $1, $1)`,
	} {
		if _, err := pool.Exec(ctx, q, now); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEveryEventAndStateChangeBecomesALeaf: an event, an invocation's
// creation and its change of state each append one leaf whose hash is
// SHA-256(0x00 || entry) of the row as stored; a change that leaves the
// state alone appends none.
func TestEveryEventAndStateChangeBecomesALeaf(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	st := store.New(pool)
	trailFixture(t, ctx, pool)
	inv, task := "inv_trail", "tsk_trail"
	err := st.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.InsertEvent(ctx, store.Event{At: time.Now(), ActorKind: "user", ActorID: "usr_1", Action: "invocation.approved",
			TaskID: &task, InvocationID: &inv, Data: json.RawMessage(`{"reason": "ok"}`)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE invocations SET state = 'approved' WHERE id = 'inv_trail'`,
		`UPDATE invocations SET summary = 'no state change' WHERE id = 'inv_trail'`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	leaves, err := st.TrailLeaves(ctx, store.TrailFilter{To: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, l := range leaves {
		if l.Index != int64(i) || l.Entry == nil {
			t.Fatalf("leaf %d: index %d, entry %v", i, l.Index, l.Entry)
		}
		var e struct{ Kind, State, Action string }
		if err := json.Unmarshal([]byte(*l.Entry), &e); err != nil {
			t.Fatal(err)
		}
		if e.Kind == "invocation" {
			e.Action = e.State
		}
		got = append(got, e.Kind+":"+e.Action)
		h := sha256.Sum256(append([]byte{0}, *l.Entry...))
		if !bytes.Equal(h[:], l.Hash) {
			t.Errorf("leaf %d: hash %x, want SHA-256(0x00 || entry) %x", i, l.Hash, h)
		}
	}
	want := fmt.Sprint([]string{"invocation:awaiting_approval", "event:invocation.approved", "invocation:approved"})
	if fmt.Sprint(got) != want {
		t.Errorf("leaves %v, want %v", got, want)
	}
	if n, err := st.TrailSize(ctx); err != nil || n != 3 {
		t.Errorf("trail size %d (%v), want 3", n, err)
	}
}

// TestAChangeIsRefusedWhenTheTrailCannotBeWritten: when the leaf cannot be
// appended (here its index is taken), the event's transaction fails at its
// commit and nothing of the change is stored — no change without its leaf.
func TestAChangeIsRefusedWhenTheTrailCannotBeWritten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	st := store.New(pool)
	if _, err := pool.Exec(ctx, `
		INSERT INTO trail_leaves (idx, kind, ref, logged_at, hash) SELECT size, 'event', '0', now(), sha256('x') FROM trail_head`); err != nil {
		t.Fatal(err)
	}
	err := st.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.InsertEvent(ctx, store.Event{At: time.Now(), ActorKind: "system", ActorID: "test", Action: "task.created"})
		return err
	})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Fatalf("the change committed without its leaf: %v", err)
	}
	if n, err := dbtest.CountEvents(ctx, pool, "task.created", nil); err != nil || n != 0 {
		t.Errorf("%d events stored (%v), want 0", n, err)
	}
}

var errRolledBack = errors.New("rolled back on purpose")

// TestTrailLeavesAreGaplessUnderConcurrentWriters: writers racing on
// their own connections, each committing events (and rolling back every
// third transaction), leave leaves 0…n-1 with no gap, one per committed
// event, logged in index order.
func TestTrailLeavesAreGaplessUnderConcurrentWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	st := store.New(pool)
	const writers, each = 8, 10
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, writers*(each+each/2))
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range each + each/2 {
				err := st.InTx(ctx, func(tx *store.Tx) error {
					err := tx.InsertEvents(ctx, []store.Event{
						{At: time.Now(), ActorKind: "system", ActorID: fmt.Sprint("w", w), Action: "a"},
						{At: time.Now(), ActorKind: "system", ActorID: fmt.Sprint("w", w), Action: "b"},
					})
					if err == nil && i%3 == 2 {
						return errRolledBack
					}
					return err
				})
				if !errors.Is(err, errRolledBack) {
					errs <- err
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var n, distinct, maxIdx, events, disordered int64
	if err := pool.QueryRow(ctx, `
		SELECT count(*), count(DISTINCT ref), max(idx), (SELECT count(*) FROM events),
		       count(*) FILTER (WHERE logged_at < prev)
		FROM (SELECT *, lag(logged_at) OVER (ORDER BY idx) AS prev FROM trail_leaves) l`).Scan(&n, &distinct, &maxIdx, &events, &disordered); err != nil {
		t.Fatal(err)
	}
	if n != writers*each*2 || distinct != n || maxIdx != n-1 || events != n || disordered != 0 {
		t.Errorf("%d leaves of %d events (%d distinct), last index %d, %d logged out of order; want %d, gapless, in order",
			n, events, distinct, maxIdx, disordered, writers*each*2)
	}
	if size, err := st.TrailSize(ctx); err != nil || size != n {
		t.Errorf("trail size %d (%v), want %d", size, err, n)
	}
}

// TestACommitWaitsForTheTrailWhateverItsLockTimeout: a transaction with a
// short lock timeout (the sweep's) commits after waiting for another
// commit's hold on the trail's head, instead of failing as "row busy".
func TestACommitWaitsForTheTrailWhateverItsLockTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	st := store.New(pool)
	holder, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback(ctx) }()
	if _, err := holder.Exec(ctx, `SELECT size FROM trail_head FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- st.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.LockTimeout(ctx, time.Millisecond); err != nil {
				return err
			}
			_, err := tx.InsertEvent(ctx, store.Event{At: time.Now(), ActorKind: "system", ActorID: "sweep", Action: "invocation.unverified"})
			return err
		})
	}()
	// The commit is waiting for the head once a session waits on a lock
	// of the head's table.
	for waiting := false; !waiting; {
		select {
		case err := <-done:
			t.Fatalf("the commit did not wait for the head: %v", err)
		default:
		}
		if err := pool.QueryRow(ctx, `
			SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted AND pid <> pg_backend_pid())`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	if err := holder.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("a commit behind another failed: %v", err)
	}
}
