package demoshop

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed schema.sql
var schemaSQL string

// migrateLockKey serialises concurrent Migrate calls on one database, since
// two CREATE … IF NOT EXISTS racing each other can still collide.
const migrateLockKey = 0x5e0d5409

// Migrate creates the shop schema and its tables in the pool's database. It is
// idempotent, safe to run at every start and from several processes at once,
// and fails only when the database refuses the statements.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLockKey); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		// No arguments: pgx sends the file with the simple protocol, which
		// accepts several statements at once.
		if _, err := tx.Exec(ctx, schemaSQL); err != nil {
			return fmt.Errorf("apply schema.sql: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("demoshop: migrate: %w", err)
	}
	return nil
}
