package assistants

import (
	"context"
	"log/slog"
	"time"
)

// longestEventWindow is the longest window a conversation event counts in
// (the assistant's and the conversation's hour): a window that started
// before that has ended.
const longestEventWindow = time.Hour

// PruneEventWindows deletes the counts of event windows that have ended,
// and returns how many. Each conversation an assistant reports on leaves
// one such row, so without this the table grows with every conversation.
func (s *Service) PruneEventWindows(ctx context.Context) (int64, error) {
	return s.store.PruneEventWindows(ctx, s.now().UTC().Truncate(longestEventWindow).Add(-longestEventWindow))
}

// RunEventWindowPruner prunes ended event windows every interval until ctx
// ends. Several console instances may run it; a failure is logged and
// tried again at the next tick.
func (s *Service) RunEventWindowPruner(ctx context.Context, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.PruneEventWindows(ctx); err != nil && ctx.Err() == nil {
			log.Warn("pruning ended event windows failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
