package demo

import (
	"context"
	"time"

	"countersign/internal/shopadapter"
	"countersign/store"
)

// seedHistory gives the demo 40 days of settled history (3,000
// invocations, 800 conversations) so that the metrics pages show something
// to read; it loads once.
func seedHistory(ctx context.Context, h HistoryLoader) error {
	return h.GenerateHistory(ctx, store.HistorySpec{Prefix: "demo_h", Invocations: 3000, Conversations: 800, Days: 40,
		End: time.Now(), AssistantID: "asst_demo_history", Finished: true, System: "shop", Actions: HistoryActions()})
}

// HistoryActions are the shop's actions as synthetic history spreads
// invocations over them, in a fixed order (the history's rows depend on
// it), each at the stage its spec starts it at.
func HistoryActions() []store.HistoryAction {
	specs := map[string]store.HistoryAction{}
	for _, a := range shopadapter.New(shopadapter.Config{}).Actions() {
		specs[a.Name] = store.HistoryAction{Name: a.Name, Stage: int16(a.DefaultStage), Money: a.AmountParam != ""}
	}
	var out []store.HistoryAction
	for _, name := range []string{shopadapter.ActionIssueRefund, shopadapter.ActionCancelSubscription, shopadapter.ActionReinstateSubscription,
		shopadapter.ActionChangeShippingAddress, shopadapter.ActionUpdateProductDesc, shopadapter.ActionResendReceipt} {
		out = append(out, specs[name])
	}
	return out
}
