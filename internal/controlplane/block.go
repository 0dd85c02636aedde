package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/store"
)

// LiftBlock lets the task's customer propose on a target again after a
// policy refusal blocked it (in this task or another of theirs). Only a
// support agent or an admin may, with a reason; the event that records who
// and why commits with the change. Errors: Forbidden, Invalid (reason),
// NotFound when no block is in force.
func (s *Service) LiftBlock(ctx context.Context, actor Actor, taskID, system, targetID, reason string) error {
	if actor.Kind != ActorUser || (actor.Role != "agent" && actor.Role != "admin") {
		return apperr.New(apperr.Forbidden, "Only a support agent or an admin can lift a block.")
	}
	reason = strings.TrimSpace(reason)
	switch {
	case reason == "":
		return apperr.InvalidFields(map[string]string{"reason": "say why the target may be tried again; the audit trail keeps it"})
	case len(reason) > 1000:
		return apperr.InvalidFields(map[string]string{"reason": "use at most 1000 characters"})
	}
	task, err := s.Task(ctx, taskID)
	if err != nil {
		return err
	}
	return s.store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.LiftBlock(ctx, task.CustomerRef, system, targetID, actor.UserID, s.now()); errors.Is(err, store.ErrNotFound) {
			return apperr.Wrap(err, apperr.NotFound, "No block is in force on that target.")
		} else if err != nil {
			return err
		}
		return s.record(ctx, tx, actor, EventTargetUnblocked, taskID, "", map[string]any{"system": system, "target_id": targetID, "reason": reason})
	})
}

// Block is a target a policy refusal closed to the customer's further
// proposals, in every one of their tasks, until a person lifts it.
type Block struct {
	// TaskID is the task the refusal happened in.
	TaskID   string
	System   string
	TargetID string
	// Action is the action the policy refused.
	Action string
	// Code and Message are the refusal's.
	Code      string
	Message   string
	CreatedAt time.Time
}

// CustomerBlocks lists the blocks in force on this customer's targets,
// oldest first: a task's page shows those made in it and those made in
// the customer's other tasks, which hold there too.
func (s *Service) CustomerBlocks(ctx context.Context, customerRef string) ([]Block, error) {
	rows, err := s.store.BlocksForCustomer(ctx, customerRef)
	if err != nil {
		return nil, err
	}
	out := make([]Block, 0, len(rows))
	for _, r := range rows {
		var refusal adapter.Error
		_ = json.Unmarshal(r.Error, &refusal)
		out = append(out, Block{TaskID: r.TaskID, System: r.System, TargetID: r.TargetID, Action: r.Action,
			Code: refusal.Code, Message: refusal.Message, CreatedAt: r.CreatedAt})
	}
	return out, nil
}

// checkBlock refuses a proposal on a target that a policy refused earlier
// for this customer, in this task or another, recording the attempt (a
// model guessing around a refusal is a failure the metrics count).
// The block is the target's (system and object) for the customer, whatever
// the action, arguments or task: another reason code, amount or a new task
// is the same second try.
func (s *Service) checkBlock(ctx context.Context, task Task, system, action string, target adapter.Target, actor Actor) error {
	o := objectOf(system, target)
	// Most proposals meet no block: one read, no transaction. (The
	// proposal's own transaction looks again under its locks.)
	if _, err := s.store.ActiveBlock(ctx, task.CustomerRef, system, target.ID, o.key.Name, o.key.Value); errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	var blocked *adapter.Error
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		b, err := tx.ActiveBlock(ctx, task.CustomerRef, system, target.ID, o.key.Name, o.key.Value)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		blocked = &adapter.Error{}
		if err := json.Unmarshal(b.Error, blocked); err != nil {
			return err
		}
		return s.record(ctx, tx, actor, EventProposalBlockedAfterRefusal, task.ID, "", map[string]any{
			"system": system, "action": action, "target_id": target.ID, "target": target.Display, "original_code": blocked.Code,
			"original_message": blocked.Message, "blocked_in": b.TaskID, "blocked_system": b.System})
	})
	if err != nil || blocked == nil {
		return err
	}
	return blockedErr(target.Kind, blocked)
}

// blockedErr is the answer to a proposal on a blocked target.
func blockedErr(kind string, refusal *adapter.Error) error {
	return &apperr.Error{Kind: apperr.IllegalTransition, Code: "blocked_after_refusal", Retryable: false,
		Message: "A policy already refused an action on this " + kind + " for this customer: " + refusal.Message,
		Hint:    "Do not try again with another reason, amount, action or task. Tell the customer what the policy allows and hand the case to a person, who can lift the block.",
		Details: map[string]any{"original_code": refusal.Code, "original_hint": refusal.Hint}}
}

// refused records a dry-run refusal; a policy refusal blocks the target.
func (s *Service) refused(ctx context.Context, task Task, system, action string, target adapter.Target, actor Actor, cause error) error {
	ae, ok := adapter.AsError(cause)
	if !ok {
		return cause
	}
	raw, _ := json.Marshal(ae)
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		if ae.PolicyRefusal {
			// The customer's proposal lock: a proposal that committed
			// before the block was legitimately first; any after it sees it.
			o := objectOf(system, target)
			if err := lockExposure(ctx, tx, o, action, task.CustomerRef, true); err != nil {
				return err
			}
			keyName, keyValue := o.blockKey()
			if err := tx.BlockTarget(ctx, store.TargetBlock{CustomerRef: task.CustomerRef, TaskID: task.ID, System: system,
				TargetID: target.ID, Action: action, Error: raw, CreatedAt: s.now(), KeyName: keyName, KeyValue: keyValue}); err != nil {
				return err
			}
		}
		// "blocked" says a block was made by this refusal: the timeline
		// says the target is blocked only when it was.
		return s.record(ctx, tx, actor, EventProposalRefused, task.ID, "", map[string]any{
			"system": system, "action": action, "target_id": target.ID, "target": target.Display, "code": ae.Code,
			"message": ae.Message, "policy": ae.PolicyRefusal, "blocked": ae.PolicyRefusal})
	})
	if err != nil {
		return err
	}
	return adapterErr(cause)
}
