package demo

import (
	"context"
	"time"

	"countersign/store"
)

// seedHistory gives the demo 40 days of settled history (3,000
// invocations, 800 conversations) so that the metrics pages show something
// to read; it loads once.
func seedHistory(ctx context.Context, h HistoryLoader) error {
	return h.GenerateHistory(ctx, store.HistorySpec{Prefix: "demo_h", Invocations: 3000, Conversations: 800, Days: 40,
		End: time.Now(), AssistantID: "asst_demo_history", Finished: true})
}
