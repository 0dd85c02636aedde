package metrics

import (
	"context"
	"log/slog"
	"time"

	"countersign/store"
)

// Refresher folds new events into the metrics roll-ups (*store.Store).
type Refresher interface {
	RefreshMetrics(ctx context.Context) (store.RefreshReport, error)
}

// RunRefresher folds new events into the roll-ups every interval until ctx
// ends. Several console instances may run it: refreshes serialise in the
// database and the second one finds little to do. A failed refresh is
// logged and retried at the next tick; the watermark has not moved.
func RunRefresher(ctx context.Context, st Refresher, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := st.RefreshMetrics(ctx); err != nil && ctx.Err() == nil {
			log.Warn("metrics roll-up refresh failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
