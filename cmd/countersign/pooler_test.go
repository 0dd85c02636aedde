package main

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
	"countersign/internal/slowtest"
	"countersign/store"
	"countersign/store/dbtest"
	"countersign/store/pgcluster"
)

// startBouncer runs PgBouncer in transaction pooling mode in front of the
// tests' cluster and returns the URL of database dbURL's database through
// it. Its connect_query sets what the console cannot send through it.
func startBouncer(t *testing.T, dbURL string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	b, err := pgcluster.StartBouncer(context.Background(), pgcluster.BouncerConfig{Dir: dir, Server: dbtest.Server(t),
		PoolSize: 10, ConnectQuery: "SET idle_in_transaction_session_timeout = 10000"})
	if err != nil {
		t.Fatal(err)
	}
	// Registered after the database, so it stops first and lets the
	// database be dropped.
	t.Cleanup(b.Stop)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	return b.URL(strings.TrimPrefix(u.Path, "/"))
}

// TestConsolesBehindPgBouncer runs the control-plane flow with every
// statement going through PgBouncer in transaction pooling mode: the
// proposals (made here, through the bouncer, in pgx's exec mode) and two
// console processes that dispatch and verify them through it, listening on
// their direct connections. Every write is sent exactly once and verified;
// a pooled session carries the connect_query's timeout.
func TestConsolesBehindPgBouncer(t *testing.T) {
	slowtest.Skip(t, "starts PgBouncer and two console processes")
	t.Parallel()
	f := newFleet(t)
	pooledURL := startBouncer(t, f.dbURL)
	ctx := context.Background()

	pooled, err := store.Open(ctx, pooledURL, 10*time.Second, store.Pooled())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pooled.Close)
	var timeout string
	if err := pooled.QueryRow(ctx, "SHOW idle_in_transaction_session_timeout").Scan(&timeout); err != nil {
		t.Fatal(err)
	}
	if timeout != "10s" {
		t.Errorf("a pooled session's idle_in_transaction_session_timeout is %q, want the connect_query's 10s", timeout)
	}
	st := store.New(pooled)
	reg := adapter.NewRegistry(shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: f.shopURL, Token: f.shop.Token(),
		Ledger: adapter.NewLedger(st, nil)}))
	f.cp = controlplane.New(st, reg, controlplane.Config{}, nil, nil) // the fleet's proposals now go through the bouncer

	if err := f.shop.SetFault(demoshop.FaultRule{Route: "PATCH /products/{id}", LatencyMS: 20}); err != nil {
		t.Fatal(err)
	}
	pooledEnv := []string{"DATABASE_URL=" + pooledURL, "DATABASE_DIRECT_URL=" + f.dbURL}
	f.start(pooledEnv...)
	f.start(pooledEnv...)
	task, invs := f.proposeEdits(30)
	counts := f.waitStates(task, controlplane.Completed, 90*time.Second)
	for _, inv := range invs {
		if n := f.effectsFor(inv.IdempotencyKey); n != 1 {
			t.Errorf("%s has %d effects at the shop, want 1", inv.ID, n)
		}
	}
	if got := f.writes.Load(); got != int64(len(invs)) {
		t.Errorf("the shop received %d writes for %d invocations", got, len(invs))
	}
	t.Logf("behind PgBouncer (transaction mode): %d invocations %v, shop writes received %d", len(invs), counts, f.writes.Load())
}

// TestPooledStoreRunsThroughTheBouncer runs the store's statements that the
// pages and decisions use through PgBouncer in exec mode: a task, its
// invocations, the timeline, a session row, the readiness probe.
func TestPooledStoreRunsThroughTheBouncer(t *testing.T) {
	slowtest.Skip(t, "starts PgBouncer")
	t.Parallel()
	dbURL := dbtest.NewURL(t)
	pooledURL := startBouncer(t, dbURL)
	ctx := context.Background()
	pool, err := store.Open(ctx, pooledURL, 10*time.Second, store.Pooled())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.New(pool)
	if n, err := st.MigrationsPending(ctx); err != nil || n != 0 {
		t.Fatalf("migrations pending through the bouncer: %d, %v", n, err)
	}
	u, err := st.CreateUser(ctx, store.NewUser{Email: "pooled@example.test", Name: "Pooled", Role: "agent", PasswordHash: "x", At: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	hash := []byte("0123456789abcdef0123456789abcdef")
	if err := st.CreateSession(ctx, store.Session{IDHash: hash, UserID: &u.ID, CSRFToken: "t", Data: []byte{}, CreatedAt: time.Now(), LastSeenAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	sess, user, err := st.SessionAndUser(ctx, hash)
	if err != nil || user == nil || user.ID != u.ID || sess.CSRFToken != "t" {
		t.Fatalf("session through the bouncer: %+v %+v %v", sess, user, err)
	}
}
