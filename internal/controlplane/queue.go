package controlplane

import (
	"context"
	"errors"
	"time"

	"countersign/internal/adapter"
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
	// QuotedAt is when the shown quote was made (the proposal, or the last
	// edit, which quotes again).
	QuotedAt time.Time
}

// ClaimHold is how long opening a card for deciding holds it.
const ClaimHold = 5 * time.Minute

// ApprovalQueue lists a page of invocations awaiting approval, soonest
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
		WritesUsed: int(r.WritesUsed), InflightLimit: int(r.InflightLimit), Inflight: int(r.Inflight), FirstApprovers: r.FirstApproverIDs,
		QuotedAt: r.QuotedAt}
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

// PendingCounts counts invocations awaiting approval (what the queue
// shows: the header's badge) and unverified ones, each up to
// PendingCountCap.
func (s *Service) PendingCounts(ctx context.Context) (awaitingApproval, unverified int, err error) {
	return s.store.CountPending(ctx)
}

// CountQueue counts the cards the approval queue shows with this filter
// (its After and Limit aside), up to PendingCountCap.
func (s *Service) CountQueue(ctx context.Context, f QueueFilter) (int, error) {
	return s.store.CountQueue(ctx, store.QueueFilter{System: f.System, Action: f.Action, CustomerRef: f.CustomerRef,
		MinCents: f.MinCents, MaxCents: f.MaxCents, OlderThan: f.OlderThan, ClaimedBy: f.ClaimedBy, Now: s.now()})
}

// TargetChange is another write on a card's object that moved after the
// card's quote was made, so the quote may no longer be true.
type TargetChange struct {
	ID          string
	Action      string
	State       State
	Title       string
	AmountCents *int64
	Currency    string
	// At is when it finished, or when it was sent if it has not.
	At time.Time
}

// TargetChanges returns, per card id, the other writes on the same object
// that moved after the card's quote was made (completed, being sent, or
// with an unknown outcome), oldest first.
func (s *Service) TargetChanges(ctx context.Context, cardIDs []string) (map[string][]TargetChange, error) {
	rows, err := s.store.TargetChanges(ctx, cardIDs)
	if err != nil {
		return nil, err
	}
	out := map[string][]TargetChange{}
	for _, r := range rows {
		out[r.CardID] = append(out[r.CardID], TargetChange{ID: r.ID, Action: r.Action, State: State(r.State), Title: r.Title,
			AmountCents: r.AmountCents, Currency: r.Currency, At: r.At})
	}
	return out, nil
}

// FreshQuote dry-runs a card's arguments again, read-only, and says
// whether the object changed since its quote was made (its version moved).
// Nothing is recorded: an agent who wants the fresh quote to be the one
// approved re-quotes it with EditArgs.
func (s *Service) FreshQuote(ctx context.Context, inv Invocation) (quote adapter.Quote, changed bool, err error) {
	sys, err := s.registry.System(inv.System)
	if err != nil {
		return adapter.Quote{}, false, adapterErr(err)
	}
	principal, err := s.principalOf(ctx, inv.TaskID)
	if err != nil {
		return adapter.Quote{}, false, err
	}
	quote, err = sys.DryRun(ctx, principal, inv.Action, inv.Call().Args)
	if err != nil {
		return adapter.Quote{}, false, adapterErr(err)
	}
	return quote, quote.Target.Version != inv.Quote.Target.Version, nil
}

// WaitingWork is what waits for a person, for the home pages.
type WaitingWork = store.WaitingWork

// WaitingWork counts what waits for a person (approvals, unverified
// results, untaken hand-offs) and lists up to listLimit of the oldest
// unverified results.
func (s *Service) WaitingWork(ctx context.Context, listLimit int) (WaitingWork, error) {
	return s.store.WaitingWork(ctx, listLimit)
}

// ReleaseCard lets go of a user's hold on a card (after their decision,
// the card is held by nobody).
func (s *Service) ReleaseCard(ctx context.Context, id string, userID int64) error {
	return s.store.ReleaseCard(ctx, id, userID)
}
