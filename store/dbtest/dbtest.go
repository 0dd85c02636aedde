// Package dbtest gives each test its own PostgreSQL database. A test binary
// starts one throwaway cluster (fsync off) the first time a test asks, builds
// one migrated template database, and clones it with CREATE DATABASE …
// TEMPLATE for every test, so tests run in parallel on real PostgreSQL.
// TEST_DATABASE_URL points it at an external server instead.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/store"
	"countersign/store/pgcluster"
)

var (
	once      sync.Once
	setupErr  error
	cluster   *pgcluster.Cluster
	tempDir   string
	serverURL string // connects to the maintenance database "postgres"
	template  string
	createMu  sync.Mutex
)

// Main runs the package's tests and then stops the cluster they used. Call
// it from TestMain.
func Main(m *testing.M, after ...func()) {
	code := m.Run()
	for _, f := range after {
		f()
	}
	if cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_ = cluster.Stop(ctx)
		cancel()
	}
	if tempDir != "" {
		os.RemoveAll(tempDir)
		os.Remove(tempDir + ".log")
	}
	os.Exit(code)
}

func setup() {
	ctx := context.Background()
	serverURL = os.Getenv("TEST_DATABASE_URL")
	if serverURL == "" {
		dir, err := os.MkdirTemp("", "countersign-test-pg-")
		if err != nil {
			setupErr = err
			return
		}
		tempDir = dir
		cluster, err = pgcluster.Start(ctx, pgcluster.Config{DataDir: dir, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			setupErr = err
			return
		}
		serverURL = cluster.URL("postgres")
	}
	template = "cs_tmpl_" + randomSuffix()
	setupErr = createDatabase(ctx, template, "template0")
	if setupErr != nil {
		return
	}
	pool, err := store.Open(ctx, withDatabase(serverURL, template), 30*time.Second)
	if err != nil {
		setupErr = err
		return
	}
	defer pool.Close()
	if _, err := store.Migrate(ctx, pool); err != nil {
		setupErr = err
	}
}

// Server returns the URL of the maintenance database of the server the
// tests use, starting the cluster if needed.
func Server(t testing.TB) string {
	t.Helper()
	once.Do(setup)
	if setupErr != nil {
		t.Fatalf("dbtest: %v", setupErr)
	}
	return serverURL
}

// NewURL creates a migrated database for this test and returns its URL; the
// database is dropped when the test ends.
func NewURL(t testing.TB) string {
	t.Helper()
	Server(t)
	return newDatabase(t, template)
}

// New returns a pool on a fresh migrated database for this test.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return open(t, NewURL(t))
}

// NewBare returns a pool on a fresh empty database, for systems that bring
// their own schema (the demo shop).
func NewBare(t testing.TB) *pgxpool.Pool {
	t.Helper()
	Server(t)
	return open(t, newDatabase(t, "template0"))
}

// NewBareURL is NewBare's URL form, for code that opens its own pool.
func NewBareURL(t testing.TB) string {
	t.Helper()
	Server(t)
	return newDatabase(t, "template0")
}

func open(t testing.TB, dbURL string) *pgxpool.Pool {
	t.Helper()
	pool, err := store.Open(context.Background(), dbURL, 30*time.Second)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	// Registered after the drop, so it runs before it.
	t.Cleanup(pool.Close)
	return pool
}

func newDatabase(t testing.TB, from string) string {
	t.Helper()
	name := "cs_test_" + randomSuffix()
	if err := createDatabase(context.Background(), name, from); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), serverURL)
		if err != nil {
			t.Errorf("dbtest: drop %s: %v", name, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("dbtest: drop %s: %v", name, err)
		}
	})
	return withDatabase(serverURL, name)
}

func createDatabase(ctx context.Context, name, from string) error {
	// Two clones of one template at once make PostgreSQL report the template
	// as busy; cloning is quick, so take turns.
	createMu.Lock()
	defer createMu.Unlock()
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return fmt.Errorf("connect to test server: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, from)); err != nil {
		return fmt.Errorf("create database %s from %s: %w", name, from, err)
	}
	return nil
}

func withDatabase(serverURL, name string) string {
	u, err := url.Parse(serverURL)
	if err != nil {
		// Key-value DSNs are not supported here; say so plainly.
		panic("dbtest: TEST_DATABASE_URL must be a postgres:// URL: " + err.Error())
	}
	u.Path = "/" + name
	return u.String()
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return strings.ToLower(hex.EncodeToString(b))
}
