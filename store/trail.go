package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// TrailLeaf is a leaf of the audit trail as an export reads it: its index,
// what it records (an event's id or an invocation's), when it was logged,
// the hash the trail holds, and the entry as the database has it now — the
// event's row recomputed (nil when the row is gone), or the invocation's
// stored entry. Index is -1 for an event that has no leaf.
type TrailLeaf struct {
	Index    int64     `db:"idx"`
	Kind     string    `db:"kind"`
	Ref      string    `db:"ref"`
	LoggedAt time.Time `db:"logged_at"`
	Entry    *string   `db:"entry"`
	Hash     []byte    `db:"hash"`
}

// TrailFilter narrows an export: a period of logging time [From, To) and,
// when not empty, the system, the invocation's action, the person who acted
// (an event's actor id) and the customer (the task's customer reference).
// An export's header says it in JSON.
type TrailFilter struct {
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	System   string    `json:"system,omitempty"`
	Action   string    `json:"action,omitempty"`
	Person   string    `json:"person,omitempty"`
	Customer string    `json:"customer,omitempty"`
}

// Narrowed says whether the filter leaves out leaves of its period, so the
// export's leaves are not contiguous.
func (f TrailFilter) Narrowed() bool {
	return f.System != "" || f.Action != "" || f.Person != "" || f.Customer != ""
}

// TrailSize is the number of leaves in the trail.
func (s *Store) TrailSize(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT size FROM trail_head`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store.TrailSize: %w", err)
	}
	return n, nil
}

// TrailLeafHashes returns the hashes of leaves [from, to), in order.
func (s *Store) TrailLeafHashes(ctx context.Context, from, to int64) ([][]byte, error) {
	rows, _ := s.pool.Query(ctx, `SELECT hash FROM trail_leaves WHERE idx >= $1 AND idx < $2 ORDER BY idx`, from, to)
	hashes, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, fmt.Errorf("store.TrailLeafHashes(%d, %d): %w", from, to, err)
	}
	if int64(len(hashes)) != to-from {
		return nil, fmt.Errorf("store.TrailLeafHashes(%d, %d): %d leaves: %w", from, to, len(hashes), &NotFoundError{What: "trail leaf"})
	}
	return hashes, nil
}

// TrailLeaves lists the leaves an export of f holds, in index order, then
// the events of f's period that have no leaf (Index -1), in id order.
func (s *Store) TrailLeaves(ctx context.Context, f TrailFilter) ([]TrailLeaf, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT * FROM (
		SELECT l.idx, l.kind, l.ref, l.logged_at, l.hash,
		       CASE WHEN l.kind = 'invocation' THEN l.entry WHEN e.id IS NOT NULL THEN trail_event_entry(e, l.logged_at) END AS entry
		FROM trail_leaves l
		LEFT JOIN events e ON e.id = CASE WHEN l.kind = 'event' THEN l.ref::bigint END
		LEFT JOIN invocations i ON i.id = CASE WHEN l.kind = 'event' THEN e.invocation_id ELSE l.ref END
		LEFT JOIN tasks t ON t.id = coalesce(e.task_id, i.task_id)
		WHERE l.logged_at >= $1 AND l.logged_at < $2
		  AND ($3 = '' OR i.system = $3) AND ($4 = '' OR i.action = $4)
		  AND ($5 = '' OR e.actor_id = $5) AND ($6 = '' OR t.customer_ref = $6)
		UNION ALL
		SELECT -1, 'event', e.id::text, e.at, NULL, trail_event_entry(e, e.at)
		FROM events e
		LEFT JOIN invocations i ON i.id = e.invocation_id
		LEFT JOIN tasks t ON t.id = e.task_id
		WHERE e.at >= $1 AND e.at < $2
		  AND NOT EXISTS (SELECT 1 FROM trail_leaves l WHERE l.kind = 'event' AND l.ref = e.id::text)
		  AND ($3 = '' OR i.system = $3) AND ($4 = '' OR i.action = $4)
		  AND ($5 = '' OR e.actor_id = $5) AND ($6 = '' OR t.customer_ref = $6)
		) u ORDER BY u.idx < 0, u.idx, CASE WHEN u.idx < 0 THEN u.ref::bigint END`,
		f.From, f.To, f.System, f.Action, f.Person, f.Customer)
	leaves, err := pgx.CollectRows(rows, pgx.RowToStructByName[TrailLeaf])
	if err != nil {
		return nil, fmt.Errorf("store.TrailLeaves: %w", err)
	}
	return leaves, nil
}

// TrailCheckpoint is a signed checkpoint of the trail: the tree's size,
// its root, the compact range that extends to the next, and the signed note.
type TrailCheckpoint struct {
	Size     int64     `db:"size"`
	Root     []byte    `db:"root"`
	Compact  [][]byte  `db:"compact"`
	SignedAt time.Time `db:"signed_at"`
	Note     string    `db:"note"`
}

const checkpointColumns = `size, root, compact, signed_at, note`

// InsertTrailCheckpoint stores a checkpoint; false when one of that size is
// stored already (another console signed it first), which is not an error.
func (s *Store) InsertTrailCheckpoint(ctx context.Context, c TrailCheckpoint) (bool, error) {
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO trail_checkpoints (size, root, compact, signed_at, note) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (size) DO NOTHING`, c.Size, c.Root, c.Compact, c.SignedAt, c.Note)
	if err != nil {
		return false, fmt.Errorf("store.InsertTrailCheckpoint(%d): %w", c.Size, err)
	}
	return tag.RowsAffected() == 1, nil
}

// LatestTrailCheckpoint returns the checkpoint of the largest tree, or
// ErrNotFound when none was signed yet.
func (s *Store) LatestTrailCheckpoint(ctx context.Context) (TrailCheckpoint, error) {
	return s.trailCheckpoint(ctx, `SELECT `+checkpointColumns+` FROM trail_checkpoints ORDER BY size DESC LIMIT 1`)
}

// TrailCheckpointOfSize returns the checkpoint of a tree of that size, or
// ErrNotFound.
func (s *Store) TrailCheckpointOfSize(ctx context.Context, size int64) (TrailCheckpoint, error) {
	return s.trailCheckpoint(ctx, `SELECT `+checkpointColumns+` FROM trail_checkpoints WHERE size = $1`, size)
}

func (s *Store) trailCheckpoint(ctx context.Context, q string, args ...any) (TrailCheckpoint, error) {
	rows, _ := s.pool.Query(ctx, q, args...)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[TrailCheckpoint])
	if errors.Is(err, pgx.ErrNoRows) {
		return TrailCheckpoint{}, fmt.Errorf("store.TrailCheckpoint: %w", &NotFoundError{What: "checkpoint"})
	}
	if err != nil {
		return TrailCheckpoint{}, fmt.Errorf("store.TrailCheckpoint: %w", err)
	}
	return c, nil
}

// TrailCheckpoints lists up to limit checkpoints of trees smaller than
// below (0: any), largest first.
func (s *Store) TrailCheckpoints(ctx context.Context, below int64, limit int) ([]TrailCheckpoint, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT `+checkpointColumns+` FROM trail_checkpoints WHERE $1 = 0 OR size < $1 ORDER BY size DESC LIMIT $2`, below, limit)
	cps, err := pgx.CollectRows(rows, pgx.RowToStructByName[TrailCheckpoint])
	if err != nil {
		return nil, fmt.Errorf("store.TrailCheckpoints: %w", err)
	}
	return cps, nil
}

// TrailBounds returns the leaves around a period of logging time: the last
// logged before from and the first logged at or after to among the first
// size leaves, each when there is one (an export's proof that nothing of
// the period lies outside it; logged_at grows with the index).
func (s *Store) TrailBounds(ctx context.Context, from, to time.Time, size int64) (before, after *TrailLeaf, err error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT l.idx, l.kind, l.ref, l.logged_at, l.hash,
		       CASE WHEN l.kind = 'invocation' THEN l.entry WHEN e.id IS NOT NULL THEN trail_event_entry(e, l.logged_at) END AS entry
		FROM trail_leaves l
		LEFT JOIN events e ON e.id = CASE WHEN l.kind = 'event' THEN l.ref::bigint END
		WHERE l.idx IN ((SELECT max(idx) FROM trail_leaves WHERE logged_at < $1),
		                (SELECT min(idx) FROM trail_leaves WHERE logged_at >= $2 AND idx < $3))
		ORDER BY l.idx`, from, to, size)
	leaves, err := pgx.CollectRows(rows, pgx.RowToStructByName[TrailLeaf])
	if err != nil {
		return nil, nil, fmt.Errorf("store.TrailBounds: %w", err)
	}
	for i := range leaves {
		if leaves[i].LoggedAt.Before(from) {
			before = &leaves[i]
		} else {
			after = &leaves[i]
		}
	}
	return before, after, nil
}

// TrailLeavesOfInvocation lists the leaves of one invocation among the
// first size leaves, in index order: its events' and its state changes'
// (what a receipt proves). An event row gone has a nil Entry.
func (s *Store) TrailLeavesOfInvocation(ctx context.Context, invocationID string, size int64) ([]TrailLeaf, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT l.idx, l.kind, l.ref, l.logged_at, l.hash,
		       CASE WHEN l.kind = 'invocation' THEN l.entry WHEN e.id IS NOT NULL THEN trail_event_entry(e, l.logged_at) END AS entry
		FROM trail_leaves l
		LEFT JOIN events e ON e.id = CASE WHEN l.kind = 'event' THEN l.ref::bigint END
		WHERE l.idx < $2 AND (l.kind, l.ref) IN (
		      SELECT 'invocation', $1::text
		      UNION ALL SELECT 'event', ev.id::text FROM events ev WHERE ev.invocation_id = $1)
		ORDER BY l.idx`, invocationID, size)
	leaves, err := pgx.CollectRows(rows, pgx.RowToStructByName[TrailLeaf])
	if err != nil {
		return nil, fmt.Errorf("store.TrailLeavesOfInvocation(%s): %w", invocationID, err)
	}
	return leaves, nil
}

// RecordTrailEvent stores an event about the trail itself (an admin's
// checkpoint or export), which enters the trail like any other.
func (s *Store) RecordTrailEvent(ctx context.Context, e Event) error {
	return s.InTx(ctx, func(tx *Tx) error {
		_, err := tx.InsertEvent(ctx, e)
		return err
	})
}
