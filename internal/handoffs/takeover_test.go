package handoffs_test

import (
	"strings"
	"testing"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/handoffs"
	"countersign/internal/racetest"
)

// TestOnlyAManagerTakesOverAConversationSomeoneHolds: an agent who holds a
// conversation and is away can be taken over from by a manager, with a
// reason, recorded once (who from whom, why); another agent cannot; the
// old holder is then told plainly who has it, and the manager ends it.
func TestOnlyAManagerTakesOverAConversationSomeoneHolds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	manager := controlplane.UserActor(b.owner, "manager", "Priya Owner")
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	id := b.handOff(task, map[string]any{"summary": "Wants a refund."})
	const reason = "Sam is off sick; the customer is waiting."
	if err := b.ho.TakeOver(b.ctx, manager, id, reason); !apperr.Is(err, apperr.Conflict) || !strings.Contains(err.Error(), "take it instead") {
		t.Errorf("taking over what nobody holds: %v, want a conflict saying to take it", err)
	}
	if _, err := b.ho.Take(b.ctx, b.agent, id); err != nil {
		t.Fatal(err)
	}
	later := b.handOff(task, map[string]any{"summary": "Asks again."})
	if err := b.ho.TakeOver(b.ctx, b.agent2, id, reason); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("an agent takes over from another: %v, want forbidden", err)
	}
	if err := b.ho.TakeOver(b.ctx, manager, id, "  "); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("taking over without a reason: %v, want invalid", err)
	}
	if err := b.ho.TakeOver(b.ctx, manager, later, reason); err != nil {
		t.Fatalf("the manager takes over: %v", err)
	}
	if err := b.ho.TakeOver(b.ctx, manager, later, reason); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("taking over one's own: %v, want a conflict", err)
	}
	if n := b.countRows(`SELECT count(*) FROM handoff_assignments WHERE user_id = $1 AND conversation_event_id IN ($2, $3)`, b.owner, id, later); n != 2 {
		t.Errorf("the manager holds %d of the two open hand-offs, want both", n)
	}
	if n := b.countRows(`SELECT count(*) FROM handoff_queue WHERE conversation_id = $1 AND taken_by = $2`, task.ConversationID, b.owner); n != 1 {
		t.Errorf("the hand-off list does not show the manager as the holder")
	}
	if n := b.countRows(`SELECT count(*) FROM events WHERE action = 'handoff.taken_over' AND data->>'from' = $1 AND data->>'reason' = $2 AND actor_id = $3`,
		b.agent.Name, reason, manager.ID); n != 1 {
		t.Errorf("handoff.taken_over events from %s with the reason: %d, want 1", b.agent.Name, n)
	}
	err := b.ho.Close(b.ctx, b.agent, later, handoffs.Resolved, "Refunded.")
	if !apperr.Is(err, apperr.Conflict) || !strings.Contains(err.Error(), "Priya Owner took this conversation over from you") {
		t.Errorf("the old holder resolves: %v, want told who took it over", err)
	}
	if err := b.ho.Close(b.ctx, manager, later, handoffs.Resolved, "Refunded by phone."); err != nil {
		t.Fatalf("the manager resolves: %v", err)
	}
}

// TestTakeOverRacingTheHoldersResolveHasOneOutcome: a manager's take-over
// and the holder's resolve at once: exactly one lands, the other is a
// conflict that says why, and the record agrees with the winner.
func TestTakeOverRacingTheHoldersResolveHasOneOutcome(t *testing.T) {
	t.Parallel()
	b := setup(t)
	manager := controlplane.UserActor(b.owner, "manager", "Priya Owner")
	for range 8 {
		task := b.task([]string{"issue_refund"}, 5, 1, 60)
		id := b.handOff(task, map[string]any{"summary": "Wants a refund."})
		if _, err := b.ho.Take(b.ctx, b.agent, id); err != nil {
			t.Fatal(err)
		}
		errs := racetest.Run(2, func(i int) error {
			if i == 0 {
				return b.ho.TakeOver(b.ctx, manager, id, "Sam is away.")
			}
			return b.ho.Close(b.ctx, b.agent, id, handoffs.Resolved, "Refunded.")
		})
		takeOver, resolve := errs[0], errs[1]
		switch {
		case takeOver == nil && resolve == nil, takeOver != nil && resolve != nil:
			t.Fatalf("take-over %v, resolve %v: want exactly one to land", takeOver, resolve)
		case takeOver == nil:
			if !apperr.Is(resolve, apperr.Conflict) || !strings.Contains(resolve.Error(), "took this conversation over from you") {
				t.Errorf("the resolve that lost: %v, want told the manager took it over", resolve)
			}
		default:
			if !apperr.Is(takeOver, apperr.Conflict) || !strings.Contains(takeOver.Error(), "over already") {
				t.Errorf("the take-over that lost: %v, want told it is over already", takeOver)
			}
		}
		overs := b.countRows(`SELECT count(*) FROM handoff_takeovers WHERE conversation_id = $1`, task.ConversationID)
		closed := b.countRows(`SELECT count(*) FROM handoff_closures WHERE conversation_event_id = $1`, id)
		if (takeOver == nil) != (overs == 1) || (resolve == nil) != (closed == 1) {
			t.Errorf("take-over %v, resolve %v, but %d take-overs and %d closures recorded", takeOver, resolve, overs, closed)
		}
	}
}
