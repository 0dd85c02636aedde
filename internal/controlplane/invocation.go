package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/store"
)

// Invocation is one proposed write and everything that happened to it.
type Invocation struct {
	ID             string
	TaskID         string
	ConversationID string
	System         string
	Action         string
	Target         adapter.Target
	State          State
	Version        int32
	// Args keeps the three records: what the assistant proposed, what a
	// person approved (possibly edited), and what was sent.
	Args Args
	// ArgsHash is the hash of the arguments an approval binds to: the
	// approved (possibly edited) ones when set, else the proposed ones.
	ArgsHash []byte
	Quote    adapter.Quote
	// QuoteJSON is the quote as stored: what a customer's page renders
	// Quote from, and what its digest (consent.QuoteDigest) is taken of.
	QuoteJSON        json.RawMessage
	Summary          string
	SummaryDisagrees bool
	IdempotencyKey   string
	// Deduplicated is set on an answer that returned an existing invocation.
	Deduplicated        bool
	AmountCents         *int64
	PolicyStage         int
	PolicyVersion       int32
	RouteReason         string
	DeadlineAt          *time.Time
	ApprovedAt          *time.Time
	PermitAt            *time.Time
	FinishedAt          *time.Time
	Result              *adapter.Result
	Error               *adapter.Error
	Verification        *adapter.Verification
	NotDispatchedReason NotDispatchedReason
	DecisionReason      string
	CompensatesID       string
	SupersedesID        string
	// ExposureCents is what moved or was pending on the same customer or
	// target and action before it, when it was last routed: thresholds
	// compare AmountCents plus this (RouteExposure).
	ExposureCents int64
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Args are the three argument records of an invocation.
type Args struct {
	Proposed  json.RawMessage `json:"proposed"`
	Approved  json.RawMessage `json:"approved,omitempty"`
	Effective json.RawMessage `json:"effective,omitempty"`
}

// Call is the adapter call this invocation makes: approved arguments, its
// own key, and the quote that was confirmed.
func (inv Invocation) Call() adapter.Call {
	args := inv.Args.Approved
	if args == nil {
		args = inv.Args.Proposed
	}
	return adapter.Call{Action: inv.Action, Args: args, IdempotencyKey: inv.IdempotencyKey, Quote: inv.Quote}
}

func fromRow(r store.Invocation) (Invocation, error) {
	inv := Invocation{
		ID: r.ID, TaskID: r.TaskID, ConversationID: r.ConversationID, System: r.System, Action: r.Action,
		Target: adapter.Target{System: r.System, Kind: r.TargetKind, ID: r.TargetID, Display: r.TargetDisplay, Version: r.TargetVersion},
		State:  State(r.State), Version: r.Version,
		Args:    Args{Proposed: r.ProposedArgs, Approved: r.ApprovedArgs, Effective: r.EffectiveArgs},
		Summary: r.Summary, SummaryDisagrees: r.SummaryDisagrees, IdempotencyKey: r.IdempotencyKey,
		AmountCents: r.AmountCents, PolicyStage: int(r.PolicyStage), PolicyVersion: r.PolicyVersion, RouteReason: r.RouteReason, ExposureCents: r.ExposureCents,
		DeadlineAt: r.DeadlineAt, ApprovedAt: r.ApprovedAt, PermitAt: r.PermitAt, FinishedAt: r.FinishedAt,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	inv.ArgsHash = r.ApprovedArgsHash
	if inv.ArgsHash == nil {
		inv.ArgsHash = r.ArgsHash
	}
	inv.QuoteJSON = r.Quote
	if err := json.Unmarshal(r.Quote, &inv.Quote); err != nil {
		return inv, fmt.Errorf("controlplane: decode quote of %s: %w", r.ID, err)
	}
	for _, field := range []struct {
		raw json.RawMessage
		dst any
	}{{r.Result, &inv.Result}, {r.Error, &inv.Error}, {r.Verification, &inv.Verification}} {
		if len(field.raw) > 0 && string(field.raw) != "null" {
			if err := json.Unmarshal(field.raw, field.dst); err != nil {
				return inv, fmt.Errorf("controlplane: decode %s: %w", r.ID, err)
			}
		}
	}
	if r.NotDispatchedReason != nil {
		inv.NotDispatchedReason = NotDispatchedReason(*r.NotDispatchedReason)
	}
	if r.DecisionReason != nil {
		inv.DecisionReason = *r.DecisionReason
	}
	if r.CompensatesID != nil {
		inv.CompensatesID = *r.CompensatesID
	}
	if r.SupersedesID != nil {
		inv.SupersedesID = *r.SupersedesID
	}
	return inv, nil
}

// Invocation returns an invocation by id, or apperr.NotFound.
func (s *Service) Invocation(ctx context.Context, id string) (Invocation, error) {
	row, err := s.store.Invocation(ctx, id)
	if err != nil {
		return Invocation{}, err
	}
	return fromRow(row)
}

// Invocations lists a task's invocations, oldest first.
func (s *Service) Invocations(ctx context.Context, taskID string) ([]Invocation, error) {
	rows, err := s.store.InvocationsForTask(ctx, taskID)
	if err != nil {
		return nil, err
	}
	return InvocationsFromRows(rows)
}

// InvocationsFromRows is invocations as the database keeps them, in the
// control plane's terms; it fails on a quote or arguments that do not
// decode. The console's lists (internal/lists) read invocations through it.
func InvocationsFromRows(rows []store.Invocation) ([]Invocation, error) {
	out := make([]Invocation, 0, len(rows))
	for _, r := range rows {
		inv, err := fromRow(r)
		if err != nil {
			return nil, err
		}
		out = append(out, inv)
	}
	return out, nil
}

// Event is one line of an audit timeline.
type Event struct {
	ID           int64
	At           time.Time
	ActorKind    ActorKind
	ActorID      string
	Action       EventAction
	TaskID       string
	InvocationID string
	Data         map[string]any
}

// Timeline lists every event of a task and its invocations, oldest first.
func (s *Service) Timeline(ctx context.Context, taskID string) ([]Event, error) {
	rows, err := s.store.EventsForTask(ctx, taskID)
	if err != nil {
		return nil, err
	}
	out := make([]Event, 0, len(rows))
	for _, r := range rows {
		e := Event{ID: r.ID, At: r.At, ActorKind: ActorKind(r.ActorKind), ActorID: r.ActorID, Action: EventAction(r.Action)}
		if r.TaskID != nil {
			e.TaskID = *r.TaskID
		}
		if r.InvocationID != nil {
			e.InvocationID = *r.InvocationID
		}
		_ = json.Unmarshal(r.Data, &e.Data)
		out = append(out, e)
	}
	return out, nil
}

// transitionErr turns a guarded transition that matched no row into an
// error that says whether the version was stale or the state forbade it.
func (s *Service) transitionErr(ctx context.Context, tx *store.Tx, id string, expectedVersion int32, want string, err error) error {
	if !errors.Is(err, store.ErrConflict) {
		return err
	}
	row, lerr := tx.Invocation(ctx, id)
	if lerr != nil {
		return lerr
	}
	if expectedVersion != 0 && row.Version != expectedVersion {
		return &apperr.Error{Kind: apperr.Conflict, Code: "stale_version", Err: err,
			Message: fmt.Sprintf("The invocation changed since you read it (version %d, now %d).", expectedVersion, row.Version),
			Hint:    "Read it again and decide on what it says now."}
	}
	return &apperr.Error{Kind: apperr.IllegalTransition, Code: "illegal_transition", Err: err,
		Message: fmt.Sprintf("Cannot %s an invocation that is %s.", want, State(row.State).Label()),
		Hint:    "Read the invocation to see where it stands."}
}
