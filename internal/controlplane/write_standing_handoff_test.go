package controlplane_test

import (
	"encoding/json"

	"countersign/internal/controlplane"
	"countersign/internal/handoffs"
)

// handOff records a hand-off of the task's conversation as the assistant
// would, with data (summary, facts, would_propose).
func (b *testBundle) handOff(task controlplane.Task, data any) int64 {
	b.t.Helper()
	raw, _ := json.Marshal(data)
	if _, err := b.store.Pool().Exec(b.ctx, `INSERT INTO assistants (id, name, created_at) VALUES ('asst_test', 'Test assistant', now())
		ON CONFLICT DO NOTHING`); err != nil {
		b.t.Fatal(err)
	}
	var id int64
	err := b.store.Pool().QueryRow(b.ctx, `INSERT INTO conversation_events (conversation_id, assistant_id, task_id, intent, mode, at, data)
		VALUES ($1, 'asst_test', NULLIF($2, ''), 'transactional_high', 'handed_off', $3, $4) RETURNING id`, task.ConversationID, task.ID, b.clock.Now(), raw).Scan(&id)
	if err != nil {
		b.t.Fatal(err)
	}
	return id
}

// takenDraft is a hand-off of task whose draft is data's would_propose,
// taken by the agent, and the hand-offs service over b's control plane
// with the draft's digest as its page shows it: the write path of a draft
// sent on, which proposes through b.cp.
func (b *testBundle) takenDraft(task controlplane.Task, data map[string]any) (ho *handoffs.Service, id int64, digest string) {
	b.t.Helper()
	ho = handoffs.New(b.store, b.cp, b.reg, b.clock.Now)
	id = b.handOff(task, data)
	if _, err := ho.Take(b.ctx, b.agent, id); err != nil {
		b.t.Fatal(err)
	}
	raw, _ := json.Marshal(data)
	d, ok := ho.PrepareDraft(id, task, raw)
	if !ok {
		b.t.Fatalf("hand-off %d has no draft", id)
	}
	return ho, id, d.Digest
}
