// Package store is the console's PostgreSQL access: one concrete type with
// hand-written SQL next to the code that scans it. pgx.ErrNoRows becomes a
// NotFoundError (which is ErrNotFound) here and nowhere else.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNotFound is what every not-found of the store is, for errors.Is: a
// row the caller asked for does not exist. The store never returns it bare
// but as a NotFoundError that names what was missing.
var ErrNotFound = errors.New("store: not found")

// NotFoundError is the store's not-found, decided where the row is
// missing: What names the missing thing in the words the person or program
// reading the answer uses ("task", "hand-off", "live key"), a noun without
// an article. errors.Is(err, ErrNotFound) holds for it, and
// internal/apperr reads it, through its Missing method, as the
// application's not-found: kind apperr.NotFound, message "No such task.",
// so the layers above return it as it is. The store is the bottom layer
// and imports nothing of internal/; apperr names the method, not this
// type, so neither package imports the other.
//
// A caller adds words of its own only where "No such <What>." is not good
// enough for its reader (an action with no policy yet, an assistant with
// no endpoint) or where a missing row means something else there (a wrong
// code is invalid input): it checks errors.Is(err, ErrNotFound) and returns
// its own apperr error, which then wins.
type NotFoundError struct {
	What string
}

// Error says what was not found, for the logs.
func (e *NotFoundError) Error() string { return "store: " + e.What + " not found" }

// Is makes errors.Is(err, ErrNotFound) hold for every NotFoundError.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Missing names what was not found; internal/apperr recognises a
// not-found by this method.
func (e *NotFoundError) Missing() string { return e.What }

// ErrConflict is returned when a write collides with a unique constraint or
// a concurrent change.
var ErrConflict = errors.New("store: conflict")

// ErrLimit is returned when a write would pass a limit the statement
// enforces (e.g. how many codes a link may be sent).
var ErrLimit = errors.New("store: limit reached")

// Store is the console's database.
type Store struct {
	pool *pgxpool.Pool
	// sessions holds connections that keep a session of their own (LISTEN);
	// the pool itself when no transaction pooler stands in between.
	sessions *pgxpool.Pool
}

// New wraps an open pool. With a transaction pooler (PgBouncer) in front of
// pool, pass the direct pool: New(pooled, direct).
func New(pool *pgxpool.Pool, direct ...*pgxpool.Pool) *Store {
	st := &Store{pool: pool, sessions: pool}
	if len(direct) > 0 && direct[0] != nil {
		st.sessions = direct[0]
	}
	return st
}

// Pool exposes the pool for packages that run their own SQL in the same
// database (migrations, background work).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// DefaultIdleInTransactionTimeout is how long PostgreSQL lets a console's
// session sit inside a transaction waiting for the console before it ends
// the session, releasing its row locks: a console frozen mid-transaction (a
// stopped process, a GC pause, a hung host) must not hold an invocation
// away from the lease sweep of the healthy ones. The console's transactions
// make no calls to other systems, so a healthy one is never idle this long.
const DefaultIdleInTransactionTimeout = 10 * time.Second

// Option adjusts how Open configures the pool's connections.
type Option func(*openOptions)

type openOptions struct {
	cfg      *pgxpool.Config
	pooled   bool
	maxConns int32
}

// IdleInTransactionTimeout sets the sessions' idle_in_transaction_session_timeout
// (0 turns it off). Without it Open uses DefaultIdleInTransactionTimeout
// unless the URL sets the parameter itself.
func IdleInTransactionTimeout(d time.Duration) Option {
	return func(o *openOptions) {
		o.cfg.ConnConfig.RuntimeParams[idleInTx] = strconv.FormatInt(d.Milliseconds(), 10)
	}
}

const idleInTx = "idle_in_transaction_session_timeout"

// MaxConns caps the pool's connections (pool_max_conns in the URL wins).
func MaxConns(n int32) Option { return func(o *openOptions) { o.maxConns = n } }

// Pooled configures connections made through a transaction pooler
// (PgBouncer in transaction mode), where consecutive transactions of one
// client connection may run on different server sessions: statements use
// the extended protocol with the unnamed statement only (pgx's
// QueryExecModeExec, unless the URL sets default_query_exec_mode), and no
// session setting is sent at connect time, because the pooler refuses
// startup parameters it does not know: set idle_in_transaction_session_timeout
// on the role or in the pooler's connect_query instead. Nothing the store
// runs through the pool keeps session state: locks are
// transaction-scoped, settings are SET LOCAL (set_config(…, true)), and
// LISTEN and the migration lock use the direct connection (New's second
// pool).
func Pooled() Option {
	return func(o *openOptions) { o.pooled = true }
}

// Open connects to url and checks the connection, waiting up to timeout for
// a server that is still starting.
func Open(ctx context.Context, url string, timeout time.Duration, opts ...Option) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("store: parse database URL: %w", err)
	}
	o := openOptions{cfg: cfg}
	if _, set := cfg.ConnConfig.RuntimeParams[idleInTx]; !set {
		IdleInTransactionTimeout(DefaultIdleInTransactionTimeout)(&o)
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.pooled {
		delete(cfg.ConnConfig.RuntimeParams, idleInTx)
		// The URL's default_query_exec_mode, when it names one, wins.
		if !strings.Contains(url, "default_query_exec_mode") {
			cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
		}
	}
	// pgxpool's default (4 on a small machine) starves the dispatch workers;
	// pool_max_conns in the URL still wins.
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = 32
		if o.maxConns > 0 {
			cfg.MaxConns = o.maxConns
		}
	}
	prev := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		if prev != nil {
			if err := prev(ctx, conn); err != nil {
				return err
			}
		}
		rawJSON(conn.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open pool: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: connect to %s:%d/%s: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, err)
	}
	return pool, nil
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// MigrationsPending counts the migrations not yet applied to the database,
// for the readiness probe.
func (s *Store) MigrationsPending(ctx context.Context) (int, error) {
	return migrationsPending(ctx, s.pool)
}

// dbtx is what a pool and a transaction have in common, so a helper can run
// inside or outside one.
type dbtx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// notFound turns pgx.ErrNoRows into the NotFoundError naming what, and
// leaves any other error alone.
func notFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return &NotFoundError{What: what}
	}
	return err
}

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// rawJSON has json and jsonb columns scanned into a json.RawMessage as the
// bytes PostgreSQL sent (it keeps them valid), not through json.Unmarshal,
// which checks and copies every byte again: the rows of a queue page carry
// nine JSON columns each. Other targets decode as before.
func rawJSON(m *pgtype.Map) {
	unmarshal := func(data []byte, v any) error {
		if raw, ok := v.(*json.RawMessage); ok {
			*raw = append((*raw)[:0], data...)
			return nil
		}
		return json.Unmarshal(data, v)
	}
	m.RegisterType(&pgtype.Type{Name: "json", OID: pgtype.JSONOID, Codec: &pgtype.JSONCodec{Marshal: json.Marshal, Unmarshal: unmarshal}})
	m.RegisterType(&pgtype.Type{Name: "jsonb", OID: pgtype.JSONBOID, Codec: &pgtype.JSONBCodec{Marshal: json.Marshal, Unmarshal: unmarshal}})
}
