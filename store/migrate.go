package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"countersign/migrations"
)

func provider(pool *pgxpool.Pool) (*goose.Provider, func(), error) {
	db := stdlib.OpenDBFromPool(pool)
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("store: load migrations: %w", err)
	}
	return p, func() { db.Close() }, nil
}

// Migrate applies every migration the database lacks, in order. It holds a
// PostgreSQL advisory lock meanwhile, so console instances starting together
// do not race.
func Migrate(ctx context.Context, pool *pgxpool.Pool) (applied int, err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: migrate: %w", err)
	}
	defer conn.Release()
	const lockKey = 0x636f756e74657273 // "counters"
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lockKey); err != nil {
		return 0, fmt.Errorf("store: migrate: take lock: %w", err)
	}
	defer func() {
		// A connection that could not unlock must not go back to the pool
		// holding the lock: closed, its session ends and the lock with it.
		if _, err := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lockKey); err != nil {
			conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()

	p, closeDB, err := provider(pool)
	if err != nil {
		return 0, err
	}
	defer closeDB()
	results, err := p.Up(ctx)
	if err != nil {
		return len(results), fmt.Errorf("store: migrate: %w", err)
	}
	return len(results), nil
}

// migrationsPending reports how many embedded migrations the database has
// not applied; /readyz is not ready while any are.
func migrationsPending(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	p, closeDB, err := provider(pool)
	if err != nil {
		return 0, err
	}
	defer closeDB()
	status, err := p.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: migration status: %w", err)
	}
	pending := 0
	for _, s := range status {
		if s.State == goose.StatePending {
			pending++
		}
	}
	return pending, nil
}
