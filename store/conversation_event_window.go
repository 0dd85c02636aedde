package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// EventWindow is one bound on conversation events: at most Cap events per
// Key (an assistant, or an assistant's conversation) in the fixed window
// that starts at Start. Bound names the bound (one of assistants'
// EventBound words: "assistant_minute", …).
type EventWindow struct {
	Bound string
	Key   string
	Start time.Time
	Cap   int
}

// errWindowFull rolls back TakeEventWindows' transaction when a window is
// full, so the windows before it do not count the refused event.
var errWindowFull = errors.New("store: event window full")

// TakeEventWindows counts one event in each window, in the order given, in
// one transaction: either every window counts it, or none does and full is
// the index of the first window that was already at its cap (−1 when all
// took it). Each count is a single upsert on the window's row, so racing
// requests from any number of console instances queue on that row and
// never count past the cap. A window newer than the one stored starts
// again at one; an older one (a console whose clock is behind) counts in
// the stored one.
func (s *Store) TakeEventWindows(ctx context.Context, windows []EventWindow) (full int, err error) {
	full = -1
	err = s.InTx(ctx, func(tx *Tx) error {
		for i, w := range windows {
			var n int
			err := tx.tx.QueryRow(ctx, `
				INSERT INTO conversation_event_windows AS w (bound, key, window_start, n) VALUES ($1, $2, $3, 1)
				ON CONFLICT (bound, key) DO UPDATE SET window_start = greatest(w.window_start, excluded.window_start),
					n = CASE WHEN excluded.window_start > w.window_start THEN 1 ELSE w.n + 1 END
				WHERE excluded.window_start > w.window_start OR w.n < $4
				RETURNING n`, w.Bound, w.Key, w.Start, w.Cap).Scan(&n)
			if errors.Is(err, pgx.ErrNoRows) {
				full = i
				return errWindowFull
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errWindowFull) {
		return full, nil
	}
	if err != nil {
		return -1, fmt.Errorf("store.TakeEventWindows: %w", err)
	}
	return -1, nil
}

// PruneEventWindows deletes the event windows that started before before
// and returns how many: a window that has ended counts nothing (the next
// event starts a new one at one), so its row is only weight. A request
// racing the delete waits for it and then starts its window afresh.
func (s *Store) PruneEventWindows(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM conversation_event_windows WHERE window_start < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("store.PruneEventWindows: %w", err)
	}
	return tag.RowsAffected(), nil
}
