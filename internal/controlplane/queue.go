package controlplane

import (
	"context"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/tracing"
	"countersign/store"
)

// Claim is who holds a card of the approval queue, and until when (the
// store's row).
type Claim = store.Claim

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

// Card returns one card, whatever its invocation's state now, or
// apperr.NotFound.
func (s *Service) Card(ctx context.Context, id string) (QueueCard, error) {
	r, err := s.store.QueueItem(ctx, id, s.now())
	if err != nil {
		return QueueCard{}, err
	}
	return CardFromRow(r)
}

// CardFromRow is a card of the approval queue as the database keeps it, in
// the control plane's terms; it fails on an invocation that does not
// decode. The console's lists (internal/lists) read the queue through it.
func CardFromRow(r store.QueueItem) (QueueCard, error) {
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
// not a decision: it records no event. Only a person who may decide the
// card (approvers.go) takes it: a hold by anyone else would keep it from
// those who may.
func (s *Service) Claim(ctx context.Context, actor Actor, id string) (Claim, error) {
	if err := staffOnCard(actor, "take"); err != nil {
		return Claim{}, err
	}
	inv, err := s.Invocation(ctx, id)
	if err != nil {
		return Claim{}, err
	}
	if may, p, err := s.MayDecide(ctx, actor, inv.System, inv.Action); err != nil {
		return Claim{}, err
	} else if !may {
		return Claim{}, refuseRole(p, actor, "take")
	}
	if inv.State != AwaitingApproval {
		return Claim{}, &apperr.Error{Kind: apperr.IllegalTransition, Code: "illegal_transition",
			Message: "This request is " + inv.State.Label() + "; there is nothing to decide."}
	}
	now := s.now()
	c, err := s.store.ClaimCard(ctx, id, actor.UserID, now, now.Add(ClaimHold))
	if err != nil {
		return Claim{}, err
	}
	return c, nil
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
// approved re-quotes it (StaffRequote).
func (s *Service) FreshQuote(ctx context.Context, inv Invocation) (quote adapter.Quote, changed bool, err error) {
	sys, err := s.registry.System(inv.System)
	if err != nil {
		return adapter.Quote{}, false, adapterErr(err)
	}
	principal, err := s.principalOf(ctx, inv.TaskID)
	if err != nil {
		return adapter.Quote{}, false, err
	}
	ctx, span := tracing.Stage(ctx, "quote", inv.ID, inv.TaskID, "fresh", "true")
	defer span.End()
	quote, err = sys.DryRun(ctx, principal, inv.Action, inv.Call().Args)
	if err != nil {
		return adapter.Quote{}, false, adapterErr(err)
	}
	return quote, quote.Target.Version != inv.Quote.Target.Version, nil
}

// ReleaseCard lets go of a user's hold on a card (after their decision,
// the card is held by nobody).
func (s *Service) ReleaseCard(ctx context.Context, id string, userID int64) error {
	return s.store.ReleaseCard(ctx, id, userID)
}
