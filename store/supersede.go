package store

import "context"

// Successor returns the invocation that superseded id (a re-quote after
// its target changed), or ErrNotFound.
func (s *Store) Successor(ctx context.Context, id string) (Invocation, error) {
	return invocation(ctx, s.pool, `supersedes_id = $1 ORDER BY created_at DESC LIMIT 1`, id)
}
