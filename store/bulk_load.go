package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// BulkRows are rows for one table of a bulk load: Row(i) gives the values
// of Columns for row i, for i from 0 to N-1.
type BulkRows struct {
	Table   string
	Columns []string
	N       int
	Row     func(i int) []any
}

// BulkLoad copies the rows of each table, in order, with COPY in one
// transaction, so a load is all there or not at all. It is for synthetic
// history (the demo's metrics, the benchmarks), written many rows at a
// time: nothing but the tables' own constraints checks the rows, and it
// fails with the first table whose rows they refuse.
func (s *Store) BulkLoad(ctx context.Context, tables ...BulkRows) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, t := range tables {
			i := 0
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{t.Table}, t.Columns, pgx.CopyFromFunc(func() ([]any, error) {
				if i >= t.N {
					return nil, nil
				}
				i++
				return t.Row(i - 1), nil
			})); err != nil {
				return fmt.Errorf("%s: %w", t.Table, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store.BulkLoad: %w", err)
	}
	return nil
}
