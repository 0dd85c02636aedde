package handoffs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// Draft is the write an assistant prepared in a hand-off and did not
// propose: a person may send it on as their own proposal or discard it.
type Draft struct {
	Action string          `json:"action"`
	Args   json.RawMessage `json:"args"`
}

// PreparedDraft is a hand-off's draft exactly as sending it on would
// propose it: on TaskID, to System (the one system offering Action that
// the task may use it on, as a proposal naming no system resolves it;
// empty when none or several are, and then it is not sent), with the
// hand-off's own Summary. Digest binds the page that showed it to
// the send: the form carries it, and a send whose digest differs is
// refused.
type PreparedDraft struct {
	HandoffID int64
	TaskID    string
	System    string
	Action    string
	Args      json.RawMessage
	Summary   string
	Digest    string
	// Candidates names the systems offering Action that the task may use
	// it on, when System is empty.
	Candidates []string
}

// PrepareDraft reads the draft of hand-off id, whose data is the
// hand-off event's, as it would be sent on task (the zero Task when the
// conversation has none: then no system takes it); ok is false when the
// assistant prepared none.
func (s *Service) PrepareDraft(id int64, task controlplane.Task, data json.RawMessage) (d PreparedDraft, ok bool) {
	var ev struct {
		Summary      string `json:"summary"`
		WouldPropose *Draft `json:"would_propose"`
	}
	if json.Unmarshal(data, &ev) != nil || ev.WouldPropose == nil || ev.WouldPropose.Action == "" {
		return PreparedDraft{}, false
	}
	d = PreparedDraft{HandoffID: id, TaskID: task.ID, Action: ev.WouldPropose.Action, Args: ev.WouldPropose.Args, Summary: ev.Summary}
	// A draft names no system: it is bound to the one offering the action
	// that the task may use, as a proposal naming none is, never guessed
	// among several.
	found := controlplane.SystemsFor(s.registry, task, d.Action)
	if len(found) == 1 {
		d.System = found[0]
	} else {
		d.Candidates = found
	}
	d.Digest = draftDigest(d)
	return d, true
}

// draftDigest is the sha256 of the canonical {handoff_id, task_id, system,
// action, args} of a draft.
func draftDigest(d PreparedDraft) string {
	var args any
	dec := json.NewDecoder(bytes.NewReader(d.Args))
	dec.UseNumber()
	if len(d.Args) == 0 || dec.Decode(&args) != nil {
		args = string(d.Args)
	}
	b, _ := json.Marshal(map[string]any{"handoff_id": d.HandoffID, "task_id": d.TaskID, "system": d.System, "action": d.Action, "args": args})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// SendDraft proposes the write the assistant prepared in hand-off
// id as actor's own proposal on the task the page showed (the hand-off's,
// else the conversation's newest). digest is the draft's as the page
// showed it (PreparedDraft.Digest): a hand-off that is no longer the
// conversation's latest open one, or a draft or task that changed since,
// is refused. A draft is sent once, and never after it was discarded: the
// send is recorded under the conversation's lock before the proposal. It
// goes the normal route: the adapter's dry-run quote, then the action's
// policy — a customer's confirmation where the policy asks for one, an
// approval in the queue where it asks for that — so a person sending it
// on decides nothing the rules leave to someone else. The proposal's
// summary is the assistant's own, so a summary that disagrees with the
// quote is flagged as an assistant's would be.
func (s *Service) SendDraft(ctx context.Context, actor controlplane.Actor, id int64, digest string) (controlplane.Invocation, error) {
	draft, err := s.heldDraft(ctx, actor, id, digest, "sent")
	if err != nil {
		return controlplane.Invocation{}, err
	}
	inv, err := s.control.Propose(ctx, controlplane.Proposal{TaskID: draft.TaskID, System: draft.System, Action: draft.Action, Args: draft.Args,
		Actor: actor, Summary: draft.Summary})
	if err != nil {
		// Refused before anything was proposed: the draft may be sent
		// again once the reason is dealt with.
		if rerr := s.store.InTx(ctx, func(tx *store.Tx) error { return tx.ReleaseHandoffDraft(ctx, id) }); rerr != nil {
			return controlplane.Invocation{}, errors.Join(err, rerr)
		}
		return controlplane.Invocation{}, err
	}
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.SetHandoffDraftInvocation(ctx, id, inv.ID); err != nil {
			return err
		}
		return s.record(ctx, tx, actor, controlplane.EventHandoffDraftSent, draft.TaskID, inv.ID, map[string]any{"handoff_id": id, "action": draft.Action,
			"system": draft.System, "note": "Sent on by " + actor.Name + " from the assistant's hand-off."})
	})
	return inv, err
}

// DiscardDraft records that the person holding the conversation
// set the assistant's prepared write aside (the one the page showed, by
// digest); nothing is proposed, and it can no longer be sent.
func (s *Service) DiscardDraft(ctx context.Context, actor controlplane.Actor, id int64, digest string) error {
	_, err := s.heldDraft(ctx, actor, id, digest, "discarded")
	return err
}

// errHandedOffAgain refuses a form posted for a hand-off that is no longer
// the conversation's latest open one, or a draft that is not the one the
// page showed.
func errHandedOffAgain() error {
	return &apperr.Error{Kind: apperr.Conflict, Code: "handoff_changed",
		Message: "The assistant handed off again since you opened this page; read it again. Nothing was changed."}
}

// latestOpen refuses a form posted for hand-off id when the conversation
// has open hand-offs and id is not the newest of them: the person decided
// on a page that no longer shows what is open.
func latestOpen(h store.HandoffHold, id int64) error {
	if h.Open > 0 && (h.LatestID == nil || *h.LatestID != id) {
		return errHandedOffAgain()
	}
	return nil
}

// heldDraft decides hand-off id's draft for actor ("sent" or "discarded"),
// under the conversation's lock: actor must hold the open conversation, id
// must be its latest open hand-off, the draft not yet sent or discarded and
// digest its own. It returns the draft as it is to be proposed.
func (s *Service) heldDraft(ctx context.Context, actor controlplane.Actor, id int64, digest, outcome string) (draft PreparedDraft, err error) {
	if err := staffOnly(actor, "send on an assistant's draft"); err != nil {
		return PreparedDraft{}, err
	}
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		h, err := tx.LockHandoffs(ctx, id)
		if err != nil {
			return err
		}
		switch {
		case h.Open == 0:
			return apperr.New(apperr.IllegalTransition, "This conversation's hand-off is over already; its draft can no longer be sent.")
		case latestOpen(h, id) != nil:
			return latestOpen(h, id)
		case h.HolderID == nil:
			return apperr.New(apperr.IllegalTransition, "Take the conversation first: only the person holding it sends its draft on.")
		case *h.HolderID != actor.UserID:
			return apperr.New(apperr.Forbidden, "%s holds this conversation; only they can send its draft on.", h.HolderName)
		}
		data, task, err := tx.HandoffData(ctx, id)
		if err != nil {
			return err
		}
		taskID := deref(task)
		if taskID == "" {
			taskID, err = tx.ConversationTask(ctx, h.ConversationID)
			if errors.Is(err, store.ErrNotFound) {
				return apperr.New(apperr.IllegalTransition, "The assistant opened no task for this conversation, so there is no customer to act for: reply to the customer yourself.")
			}
			if err != nil {
				return err
			}
		}
		row, err := tx.Task(ctx, taskID)
		if err != nil {
			return err
		}
		d, ok := s.PrepareDraft(id, controlplane.TaskFromRow(row), data)
		if !ok {
			return apperr.New(apperr.NotFound, "The assistant prepared no write in this hand-off.")
		}
		switch done, err := tx.HandoffDraftOutcome(ctx, id); {
		case err == nil && done.Outcome == "discarded":
			return &apperr.Error{Kind: apperr.Conflict, Code: "draft_discarded", Message: "This draft was discarded; it can no longer be sent. Nothing was changed."}
		case err == nil:
			return &apperr.Error{Kind: apperr.Conflict, Code: "draft_sent", Message: "This draft was sent on already; it is not sent twice. Nothing was changed."}
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		if digest != d.Digest {
			return errHandedOffAgain()
		}
		if outcome == "sent" && d.System == "" {
			return &apperr.Error{Kind: apperr.IllegalTransition, Code: "draft_system_unknown",
				Message: "The assistant's draft names no system, and " + SystemsWords(d.Candidates) + ": it is not sent to a guessed one. Make the request yourself.",
				Details: map[string]any{"systems": d.Candidates}}
		}
		draft = d
		if err := tx.DecideHandoffDraft(ctx, id, outcome, actor.UserID, s.now()); err != nil {
			return err
		}
		if outcome == "discarded" {
			return s.record(ctx, tx, actor, controlplane.EventHandoffDraftDiscarded, taskID, "", map[string]any{"handoff_id": id, "action": d.Action})
		}
		return nil
	})
	return draft, err
}

// SystemsWords says why a draft naming no system has none: no system
// the task may use offers its action, or several do (named).
func SystemsWords(candidates []string) string {
	if len(candidates) == 0 {
		return "no system this task may use offers this action"
	}
	return "this task may use this action on several systems (" + strings.Join(candidates, ", ") + ")"
}
