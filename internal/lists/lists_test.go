package lists_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/adapter"
	"countersign/internal/lists"
	"countersign/store"
)

func taskIDs(items []lists.TaskItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// TestTaskListPagesInItsOrderWithCounts: what needs a person comes first,
// then the newest change; a page continues strictly after its cursor, and
// the counts say where the page stands in the whole list.
func TestTaskListPagesInItsOrderWithCounts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	waiting := b.task("conv-waiting")
	b.refund(waiting, 1500)
	b.clock.Advance(time.Minute)
	older := b.task("conv-older")
	b.clock.Advance(time.Minute)
	newer := b.task("conv-newer")

	first, err := b.lists.TaskList(b.ctx, lists.TaskFilter{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{waiting.ID, newer.ID}, taskIDs(first.Items)); diff != "" {
		t.Errorf("first page (-want +got):\n%s", diff)
	}
	if it := first.Items[0]; !it.NeedsPerson || it.AwaitingApproval != 1 || first.Items[1].NeedsPerson {
		t.Errorf("first page's needs: %+v, then %+v", it, first.Items[1])
	}
	k := first.Counts
	if k.Total != 3 || k.Before != 0 || k.All != 3 || k.NeedsPerson != 1 || k.Approval != 1 || k.Active != 3 || k.Actions["issue_refund"] != 1 {
		t.Errorf("first page's counts: %+v", k)
	}
	if first.Next == nil {
		t.Fatal("the first of two pages has no next cursor")
	}

	second, err := b.lists.TaskList(b.ctx, lists.TaskFilter{After: first.Next, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{older.ID}, taskIDs(second.Items)); diff != "" {
		t.Errorf("second page (-want +got):\n%s", diff)
	}
	if second.Next != nil || second.Counts.Before != 2 || second.Counts.Total != 3 {
		t.Errorf("last page: next %+v, counts %+v; want no next, 2 before of 3", second.Next, second.Counts)
	}

	needy, err := b.lists.TaskList(b.ctx, lists.TaskFilter{Need: "approval"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{waiting.ID}, taskIDs(needy.Items)); diff != "" {
		t.Errorf("tasks awaiting approval (-want +got):\n%s", diff)
	}

	found, err := b.lists.Tasks(b.ctx, store.TaskFilter{Query: "conv-older"})
	if err != nil || len(found) != 1 || found[0].ID != older.ID {
		t.Errorf("searching a conversation found %+v, %v; want the one task", found, err)
	}
}

// TestHandoffListGroupsIdenticalHandOffsAndPages: the same hand-off made
// again is one piece of work with how often; waiting ones come first, the
// longest waiting first; a taken one is the taker's.
func TestHandoffListGroupsIdenticalHandOffsAndPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	now := b.clock.Now()
	same := `{"summary":"Wants a refund of a lamp.","facts":["order ord_1234"]}`
	var loop int64
	for i := range 3 {
		id := b.handoff("conv-loop", "transactional_high", same, now.Add(-3*time.Hour+time.Duration(i)*time.Hour))
		if i == 0 {
			loop = id
		}
	}
	b.handoff("conv-other", "ambiguous", `{"summary":"Asks about a charge."}`, now.Add(-30*time.Minute))
	b.handoff("conv-third", "informational", `{"summary": 5}`, now.Add(-10*time.Minute))

	first, err := b.lists.HandoffList(b.ctx, lists.HandoffFilter{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Groups) != 2 || first.Next == nil {
		t.Fatalf("first page: %+v, next %v; want two groups and a next page", first.Groups, first.Next)
	}
	g := first.Groups[0]
	want := lists.HandoffGroup{ID: loop, LastID: g.LastID, ConversationID: "conv-loop", AssistantID: "asst_h", Intent: "transactional_high", Count: 3,
		At: now.Add(-3 * time.Hour), LastAt: now.Add(-time.Hour), Summary: "Wants a refund of a lamp.", Facts: []byte(`["order ord_1234"]`)}
	if diff := cmp.Diff(want, g, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("the repeated hand-off (-want +got):\n%s", diff)
	}
	if first.Groups[1].ConversationID != "conv-other" {
		t.Errorf("second group is %s, want conv-other", first.Groups[1].ConversationID)
	}
	if k := first.Counts; k.Total != 3 || k.All != 3 || k.Waiting != 3 || k.Taken != 0 || k.Intents["transactional_high"] != 1 {
		t.Errorf("counts: %+v", k)
	}

	second, err := b.lists.HandoffList(b.ctx, lists.HandoffFilter{After: first.Next, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Groups) != 1 || second.Groups[0].ConversationID != "conv-third" || second.Groups[0].Summary != "" ||
		second.Next != nil || second.Counts.Before != 2 {
		t.Errorf("last page: %+v, next %v, counts %+v", second.Groups, second.Next, second.Counts)
	}

	if g.LastID <= loop {
		t.Errorf("the group's latest open hand-off is %d, want the newest of its three (after %d)", g.LastID, loop)
	}
	// Take names the latest open hand-off, as the card's form does.
	if _, err := b.ho.Take(b.ctx, b.agent, g.LastID); err != nil {
		t.Fatal(err)
	}
	mine, err := b.lists.HandoffList(b.ctx, lists.HandoffFilter{Status: "mine", UserID: b.agent.UserID})
	if err != nil {
		t.Fatal(err)
	}
	if len(mine.Groups) != 1 || mine.Groups[0].TakenBy != b.agent.UserID || mine.Groups[0].TakenByName != "Sam Agent" || mine.Groups[0].Count != 3 {
		t.Errorf("taken by me: %+v", mine.Groups)
	}
	if k := mine.Counts; k.Mine != 1 || k.Waiting != 2 || k.Taken != 1 {
		t.Errorf("counts after taking one: %+v", k)
	}
}

// TestApprovalQueuePagesAndCounts: soonest deadline first, a page after
// its cursor, and the counts (filtered or not) that the queue, its badge
// and the home page show.
func TestApprovalQueuePagesAndCounts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task("conv-queue")
	var ids []string
	for _, cents := range []int64{1500, 2500, 3500} {
		ids = append(ids, b.refund(task, cents).ID)
		b.clock.Advance(time.Minute)
	}

	first, err := b.lists.ApprovalQueue(b.ctx, lists.QueueFilter{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 2 || first[0].ID != ids[0] || first[1].ID != ids[1] || first[0].CustomerRef != b.customer.Email {
		t.Fatalf("first page: %+v; want %v first", first, ids[:2])
	}
	after := &lists.QueueCursor{DeadlineAt: *first[1].DeadlineAt, ID: first[1].ID}
	rest, err := b.lists.ApprovalQueue(b.ctx, lists.QueueFilter{After: after, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 1 || rest[0].ID != ids[2] {
		t.Errorf("after the cursor: %+v; want only %s", rest, ids[2])
	}

	min := int64(2000)
	n, err := b.lists.CountQueue(b.ctx, lists.QueueFilter{MinCents: &min, After: after, Limit: 1})
	if err != nil || n != 2 {
		t.Errorf("counting refunds of $20.00 or more: %d, %v; want 2 whatever the page", n, err)
	}
	approval, unverified, err := b.lists.PendingCounts(b.ctx)
	if err != nil || approval != 3 || unverified != 0 {
		t.Errorf("pending counts: %d awaiting approval, %d unverified, %v; want 3 and 0", approval, unverified, err)
	}
	w, err := b.lists.WaitingWork(b.ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if w.AwaitingApproval != 3 || w.SoonestDeadline == nil || !w.SoonestDeadline.Equal(*first[0].DeadlineAt) || w.Unverified != 0 ||
		len(w.UnverifiedItems) != 0 || w.OpenHandoffs != 0 {
		t.Errorf("waiting work: %+v; want 3 approvals, the first card's deadline soonest", w)
	}
}

// TestCustomerInvocationsAreTheCustomersNewestFirst: "My requests" finds a
// customer's requests however the reference is written, newest first.
func TestCustomerInvocationsAreTheCustomersNewestFirst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task("conv-mine")
	older := b.refund(task, 1500)
	b.clock.Advance(time.Minute)
	newer := b.refund(b.task("conv-mine-too"), 2500)

	invs, err := b.lists.CustomerInvocations(b.ctx, "  "+strings.ToUpper(b.customer.Email)+" ", 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, inv := range invs {
		got = append(got, inv.ID)
	}
	if diff := cmp.Diff([]string{newer.ID, older.ID}, got); diff != "" {
		t.Errorf("the customer's requests (-want +got):\n%s", diff)
	}
	if invs, err := b.lists.CustomerInvocations(b.ctx, "someone-else@example.test", 10); err != nil || len(invs) != 0 {
		t.Errorf("another customer's requests: %+v, %v; want none", invs, err)
	}
}

// TestApprovalQueueQuotesAreEachCardsOwn: read again (from the memo of
// decoded quotes), every card still carries its own quote, the one the
// control plane stored for it.
func TestApprovalQueueQuotesAreEachCardsOwn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task("conv-quotes")
	want := map[string]adapter.Quote{}
	for _, cents := range []int64{1100, 2200, 3300} {
		inv := b.refund(task, cents)
		want[inv.ID] = inv.Quote
	}
	for round := range 3 {
		cards, err := b.lists.ApprovalQueue(b.ctx, lists.QueueFilter{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(cards) != len(want) {
			t.Fatalf("round %d: %d cards, want %d", round, len(cards), len(want))
		}
		for _, c := range cards {
			if diff := cmp.Diff(want[c.ID], c.Quote); diff != "" {
				t.Errorf("round %d: %s's quote (-stored +shown):\n%s", round, c.ID, diff)
			}
		}
	}
}
