package store

import (
	"context"
	"fmt"
	"time"
)

// StagePolicyForDemo puts an action's policy on stage with a confirmation
// window, bumping its version. Only the console's demo mode calls it, so
// that `make run` has a customer confirmation of every kind to show.
func (s *Store) StagePolicyForDemo(ctx context.Context, system, action string, stage int16, window time.Duration, at time.Time) error {
	_, err := s.pool.Exec(ctx, `
		UPDATE policies SET stage = $3, confirmation_window = $4, version = version + 1, updated_at = $5
		WHERE system = $1 AND action = $2 AND (stage <> $3 OR confirmation_window <> $4)`,
		system, action, stage, window, at)
	if err != nil {
		return fmt.Errorf("store.StagePolicyForDemo(%s/%s): %w", system, action, err)
	}
	return nil
}
