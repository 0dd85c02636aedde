package handoffs_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/handoffs"
)

// draftDigest is hand-off id's draft digest as its page shows it: on the
// hand-off's task, else the conversation's newest.
func (b *testBundle) draftDigest(id int64) string {
	b.t.Helper()
	var data json.RawMessage
	var task string
	err := b.store.Pool().QueryRow(b.ctx, `SELECT e.data, COALESCE(e.task_id, (SELECT t.id FROM tasks t WHERE t.conversation_id = e.conversation_id
		ORDER BY t.created_at DESC, t.id DESC LIMIT 1), '') FROM conversation_events e WHERE e.id = $1`, id).Scan(&data, &task)
	if err != nil {
		b.t.Fatal(err)
	}
	var t controlplane.Task
	if task != "" {
		if t, err = b.cp.Task(b.ctx, task); err != nil {
			b.t.Fatal(err)
		}
	}
	d, ok := b.ho.PrepareDraft(id, t, data)
	if !ok {
		b.t.Fatalf("hand-off %d has no draft", id)
	}
	return d.Digest
}

func TestAHandoffDraftSentByEightAtOnceBecomesOneProposal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.task([]string{"issue_refund"}, 20, 10, 600)
	o := b.order(2)
	id := b.handOff(task, map[string]any{"summary": "Wants $8.00 back.",
		"would_propose": map[string]any{"action": "issue_refund", "args": refund(o.ID, 800, "damaged")}})
	if _, err := b.ho.Take(b.ctx, b.agent, id); err != nil {
		t.Fatal(err)
	}
	digest := b.draftDigest(id)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	start := make(chan struct{})
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = b.ho.SendDraft(b.ctx, b.agent, id, digest)
		}()
	}
	close(start)
	wg.Wait()
	sent := 0
	for _, err := range errs {
		switch {
		case err == nil:
			sent++
		case !apperr.Is(err, apperr.Conflict):
			t.Errorf("a second send: %v, want a conflict (sent already)", err)
		}
	}
	if sent != 1 {
		t.Errorf("%d sends succeeded, want exactly one", sent)
	}
	if n := b.countRows(`SELECT count(*) FROM invocations WHERE task_id = $1`, task.ID); n != 1 {
		t.Errorf("the draft became %d proposals, want 1", n)
	}
	if n := b.countRows(`SELECT count(*) FROM events WHERE action = 'handoff.draft_sent'`); n != 1 {
		t.Errorf("handoff.draft_sent recorded %d times, want 1", n)
	}
	// Sent later, past the duplicate window: still refused.
	b.clock.Advance(11 * 60 * 1e9)
	if _, err := b.ho.SendDraft(b.ctx, b.agent, id, digest); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("sending again later: %v, want a conflict", err)
	}
}

func TestADiscardedHandoffDraftIsNeverSent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	o := b.order(2)
	id := b.handOff(task, map[string]any{"summary": "Wants $7.00 back.",
		"would_propose": map[string]any{"action": "issue_refund", "args": refund(o.ID, 700, "damaged")}})
	if _, err := b.ho.Take(b.ctx, b.agent, id); err != nil {
		t.Fatal(err)
	}
	if err := b.ho.DiscardDraft(b.ctx, b.agent, id, b.draftDigest(id)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ho.SendDraft(b.ctx, b.agent, id, b.draftDigest(id)); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("sending a discarded draft: %v, want a conflict", err)
	}
	if n := b.countRows(`SELECT count(*) FROM invocations WHERE task_id = $1`, task.ID); n != 0 {
		t.Errorf("a discarded draft became %d proposals", n)
	}
}

func TestAHandoffDraftIsSentOnlyAsThePageShowedIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	o := b.order(2)
	first := b.handOff(task, map[string]any{"summary": "Wants $25.00 back.",
		"would_propose": map[string]any{"action": "issue_refund", "args": refund(o.ID, 2500, "damaged")}})
	if _, err := b.ho.Take(b.ctx, b.agent, first); err != nil {
		t.Fatal(err)
	}
	shown := b.draftDigest(first)
	latest := b.handOff(task, map[string]any{"summary": "Agreed on $1.00.",
		"would_propose": map[string]any{"action": "issue_refund", "args": refund(o.ID, 100, "changed_mind")}})
	if _, err := b.ho.SendDraft(b.ctx, b.agent, first, shown); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("sending the older hand-off's draft after the assistant handed off again: %v, want a conflict", err)
	}
	if _, err := b.ho.SendDraft(b.ctx, b.agent, latest, shown); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("sending the latest hand-off with the digest of another draft: %v, want a conflict", err)
	}
	if _, err := b.ho.SendDraft(b.ctx, b.agent, latest, ""); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("sending with no digest: %v, want a conflict", err)
	}
	if n := b.countRows(`SELECT count(*) FROM invocations WHERE task_id = $1`, task.ID); n != 0 {
		t.Fatalf("%d proposals from drafts the page did not show", n)
	}
	inv, err := b.ho.SendDraft(b.ctx, b.agent, latest, b.draftDigest(latest))
	if err != nil || inv.AmountCents == nil || *inv.AmountCents != 100 {
		t.Fatalf("sending the draft shown: %v, %v", inv.AmountCents, err)
	}
}

func TestAnOlderHandoffsFormDoesNotActOnTheNewRound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	old := b.handOff(task, map[string]any{"summary": "Wants $40.00 back."})
	if _, err := b.ho.Take(b.ctx, b.agent, old); err != nil {
		t.Fatal(err)
	}
	if err := b.ho.Close(b.ctx, b.agent, old, handoffs.GivenBack, "Only $5 is fine; ask them."); err != nil {
		t.Fatal(err)
	}
	fresh := b.handOff(task, map[string]any{"summary": "A second, unrelated problem."})
	if _, err := b.ho.Take(b.ctx, b.agent2, old); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("taking with the old round's id: %v, want a conflict", err)
	}
	if _, err := b.ho.Take(b.ctx, b.agent, fresh); err != nil {
		t.Fatal(err)
	}
	manager := controlplane.UserActor(b.owner, "manager", "Priya Owner")
	if err := b.ho.TakeOver(b.ctx, manager, old, "They are away."); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("taking over with the old round's id: %v, want a conflict", err)
	}
	if err := b.ho.Close(b.ctx, b.agent, old, handoffs.Resolved, "Refunded $40 by phone."); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("resolving with the old round's id: %v, want a conflict", err)
	}
	if n := b.countRows(`SELECT count(*) FROM handoffs_open WHERE conversation_event_id = $1`, fresh); n != 1 {
		t.Errorf("the new round was closed by a form for the old one")
	}
}

func TestASentOnDraftKeepsTheAssistantsSummary(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	o := b.order(2)
	id := b.handOff(task, map[string]any{"summary": "Customer agreed to a small goodwill refund of $1.00.",
		"would_propose": map[string]any{"action": "issue_refund", "args": refund(o.ID, 2500, "damaged")}})
	if _, err := b.ho.Take(b.ctx, b.agent, id); err != nil {
		t.Fatal(err)
	}
	inv, err := b.ho.SendDraft(b.ctx, b.agent, id, b.draftDigest(id))
	if err != nil {
		t.Fatal(err)
	}
	if !inv.SummaryDisagrees || inv.Summary != "Customer agreed to a small goodwill refund of $1.00." {
		t.Errorf("the proposal's summary is %q (disagrees %v): want the assistant's, flagged against the $25.00 quote", inv.Summary, inv.SummaryDisagrees)
	}
	if n := b.countRows(`SELECT count(*) FROM events WHERE action = 'handoff.draft_sent' AND data->>'note' LIKE 'Sent on by %'`); n != 1 {
		t.Errorf("who sent it on is not recorded on its own")
	}
}

func TestWhoSendsAHandoffDraftOnDoesNotApproveItsRequotedSuccessor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	o := b.order(3)
	id := b.handOff(task, map[string]any{"summary": "Wants $10.00 back.",
		"would_propose": map[string]any{"action": "issue_refund", "args": refund(o.ID, 1000, "damaged")}})
	if _, err := b.ho.Take(b.ctx, b.agent, id); err != nil {
		t.Fatal(err)
	}
	inv, err := b.ho.SendDraft(b.ctx, b.agent, id, b.draftDigest(id))
	if err != nil || inv.State != controlplane.AwaitingConfirmation {
		t.Fatalf("%v %v", inv.State, err)
	}
	// A tightened policy: above $5 an agent approves.
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET approval_above_cents = 500, version = version + 1 WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	// The order changes under the quote: the confirmation re-quotes it.
	body, _ := json.Marshal(map[string]any{"order_id": o.ID, "amount_cents": 100, "reason": "goodwill"})
	res, err := b.shopPost("/refunds", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	rq, err := customerConfirm(b.ctx, b.cp, controlplane.CustomerProvedOn(b.customer.Email, "code", inv.ID), inv.ID)
	if err != nil || !rq.Requoted {
		t.Fatalf("confirm after the order changed: %+v %v", rq, err)
	}
	next := rq.Invocation
	if next.State != controlplane.AwaitingApproval {
		t.Fatalf("the successor is %s, want awaiting approval", next.State)
	}
	if got, err := staffApprove(b.ctx, b.cp, b.agent, next.ID, next.Version); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("the person who sent the draft on approved its re-quoted successor alone: %v, %v", got.State, err)
	}
	if got, err := staffApprove(b.ctx, b.cp, b.agent2, next.ID, next.Version); err != nil || got.State != controlplane.Approved {
		t.Errorf("another agent approves the successor: %v, %v", got.State, err)
	}
}

// TestAHandoffDraftGoesToTheSystemItsTaskAllows: two connected systems
// offer issue_refund and the assistant's draft names neither. On a task
// that may refund on one of them only, the draft is bound to that one, as
// a proposal naming no system would be, and sending it proposes there; on
// a task that may refund on both it is refused (draft_system_unknown),
// naming both, and nothing is proposed.
func TestAHandoffDraftGoesToTheSystemItsTaskAllows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		allowed []string
		want    string // the system the draft goes to; "" when refused
	}{
		{"a task limited to one", []string{"shop_eu/issue_refund"}, "shop_eu"},
		{"a task allowing both", []string{"issue_refund"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			reg := adapter.NewRegistry(b.shopSystem("shop"), b.shopSystem("shop_eu"))
			cp := controlplane.New(b.store, reg, controlplane.Config{CallTimeout: 5 * time.Second, LeaseMargin: time.Second}, b.clock.Now, nil)
			ho := handoffs.New(b.store, cp, reg, b.clock.Now)
			if err := cp.EnsurePolicies(b.ctx, nil); err != nil {
				t.Fatal(err)
			}
			b.setStage("issue_refund", controlplane.StageAssisted)
			task, err := cp.CreateTask(b.ctx, b.assistant, controlplane.NewTask{CustomerRef: b.customer.Email,
				ConversationID: "conv-" + strings.ReplaceAll(tc.name, " ", "-"), AllowedActions: tc.allowed,
				WriteBudget: 5, InflightLimit: 1, RatePerMinute: 60, ExpiresAt: b.clock.Now().Add(24 * time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			o := b.order(2)
			id := b.handOff(task, map[string]any{"summary": "Wants $8.00 back.",
				"would_propose": map[string]any{"action": "issue_refund", "args": refund(o.ID, 800, "damaged")}})
			if _, err := ho.Take(b.ctx, b.agent, id); err != nil {
				t.Fatal(err)
			}
			var data json.RawMessage
			if err := b.store.Pool().QueryRow(b.ctx, `SELECT data FROM conversation_events WHERE id = $1`, id).Scan(&data); err != nil {
				t.Fatal(err)
			}
			d, _ := ho.PrepareDraft(id, task, data)
			if d.System != tc.want {
				t.Fatalf("the draft is bound to %q (candidates %v), want %q", d.System, d.Candidates, tc.want)
			}
			inv, err := ho.SendDraft(b.ctx, b.agent, id, d.Digest)
			if tc.want != "" {
				if err != nil || inv.System != tc.want {
					t.Fatalf("sending the draft: %q, %v, want a proposal to %s", inv.System, err, tc.want)
				}
				return
			}
			e, ok := apperr.As(err)
			if !ok || e.Code != "draft_system_unknown" || !strings.Contains(e.Message, "shop, shop_eu") {
				t.Errorf("sending a draft two systems of the task could take: %v, want it refused naming both (draft_system_unknown)", err)
			}
			if n := b.countRows(`SELECT count(*) FROM invocations WHERE task_id = $1`, task.ID); n != 0 {
				t.Errorf("the draft was sent to a guessed system (%d proposals)", n)
			}
		})
	}
}
