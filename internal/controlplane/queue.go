package controlplane

import (
	"context"
	"errors"
	"time"

	"countersign/internal/apperr"
	"countersign/store"
)

// QueueFilter selects cards of the approval queue. Empty fields select
// everything.
type QueueFilter struct {
	System string
	Action string
	// CustomerRef matches the start of the task's customer.
	CustomerRef string
	MinCents    *int64
	MaxCents    *int64
	// OlderThan keeps invocations proposed longer ago than this.
	OlderThan time.Duration
	// ClaimedBy keeps cards held (unexpired) by this user; 0 means anyone.
	ClaimedBy int64
	// After is the last card of the previous page: the next page starts
	// strictly after it in the queue's order.
	After *QueueCursor
	Limit int
}

// QueueCursor is a position in the approval queue: the deadline and id of
// a card.
type QueueCursor struct {
	DeadlineAt time.Time
	ID         string
}

// Claim is who holds a card of the approval queue, and until when.
type Claim struct {
	InvocationID string
	UserID       int64
	ClaimedAt    time.Time
	ExpiresAt    time.Time
}

// QueueCard is an invocation awaiting approval with its task's headroom
// and who holds the card.
type QueueCard struct {
	Invocation
	CustomerRef   string
	TaskState     TaskState
	WriteBudget   int
	WritesUsed    int
	InflightLimit int
	Inflight      int
	// HolderID and HolderName are set while an agent holds the card.
	HolderID   int64
	HolderName string
	HoldUntil  time.Time
	// FirstApprovers are the users who recorded the first of two approvals
	// (of any version of the arguments; see FirstApprovers for the current).
	FirstApprovers []int64
}

// ClaimHold is how long opening a card for deciding holds it.
const ClaimHold = 5 * time.Minute

// ApprovalQueue lists a page of invocations awaiting approval, newest
// deadline first (keyset pagination: pass the last card's cursor as After).
func (s *Service) ApprovalQueue(ctx context.Context, f QueueFilter) ([]QueueCard, error) {
	rows, err := s.store.ApprovalQueue(ctx, store.QueueFilter{System: f.System, Action: f.Action, CustomerRef: f.CustomerRef,
		MinCents: f.MinCents, MaxCents: f.MaxCents, OlderThan: f.OlderThan, ClaimedBy: f.ClaimedBy, Now: s.now(),
		After: (*store.QueueCursor)(f.After), Limit: f.Limit})
	if err != nil {
		return nil, err
	}
	out := make([]QueueCard, 0, len(rows))
	for _, r := range rows {
		c, err := queueCard(r)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Card returns one card, whatever its invocation's state now, or
// apperr.NotFound.
func (s *Service) Card(ctx context.Context, id string) (QueueCard, error) {
	r, err := s.store.QueueItem(ctx, id, s.now())
	if errors.Is(err, store.ErrNotFound) {
		return QueueCard{}, apperr.Wrap(err, apperr.NotFound, "No such request.")
	}
	if err != nil {
		return QueueCard{}, err
	}
	return queueCard(r)
}

func queueCard(r store.QueueItem) (QueueCard, error) {
	inv, err := fromRow(r.Invocation)
	if err != nil {
		return QueueCard{}, err
	}
	c := QueueCard{Invocation: inv, CustomerRef: r.CustomerRef, TaskState: TaskState(r.TaskState), WriteBudget: int(r.WriteBudget),
		WritesUsed: int(r.WritesUsed), InflightLimit: int(r.InflightLimit), Inflight: int(r.Inflight), FirstApprovers: r.FirstApproverIDs}
	if r.HolderID != nil {
		c.HolderID = *r.HolderID
	}
	if r.HolderName != nil {
		c.HolderName = *r.HolderName
	}
	if r.HoldUntil != nil {
		c.HoldUntil = *r.HoldUntil
	}
	return c, nil
}

// Claim gives a console user the card of an invocation awaiting approval
// for ClaimHold, unless another user holds it; either way it returns the
// claim in force, so the caller can tell who holds it. Taking a card is
// not a decision: it records no event.
func (s *Service) Claim(ctx context.Context, actor Actor, id string) (Claim, error) {
	if actor.Kind != ActorUser || actor.Role == "customer" {
		return Claim{}, apperr.New(apperr.Forbidden, "Only a support agent, manager or admin can take a card.")
	}
	inv, err := s.Invocation(ctx, id)
	if err != nil {
		return Claim{}, err
	}
	if inv.State != AwaitingApproval {
		return Claim{}, &apperr.Error{Kind: apperr.IllegalTransition, Code: "illegal_transition",
			Message: "This request is " + inv.State.Label() + "; there is nothing to decide."}
	}
	now := s.now()
	c, err := s.store.ClaimCard(ctx, id, actor.UserID, now, now.Add(ClaimHold))
	if errors.Is(err, store.ErrNotFound) {
		return Claim{}, apperr.Wrap(err, apperr.NotFound, "No such request.")
	}
	if err != nil {
		return Claim{}, err
	}
	return Claim(c), nil
}

// PendingCountCap bounds each of PendingCounts' numbers: at the cap the
// badge says "more than", and the count stays cheap however much waits.
const PendingCountCap = store.PendingCountCap

// PendingCounts is the console header's badge: invocations awaiting
// approval and unverified ones, each up to PendingCountCap.
func (s *Service) PendingCounts(ctx context.Context) (awaitingApproval, unverified int, err error) {
	return s.store.CountPending(ctx)
}
