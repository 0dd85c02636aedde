package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/stepup"
	"countersign/internal/tracing"
	"countersign/store"
)

// StaffVerb is what a person of the business's staff decides on a card.
type StaffVerb string

// The staff's decisions on a request awaiting approval. Who may make any
// of them is one rule (approvers.go).
const (
	// StaffApprove approves the arguments the person saw (ArgsHash: after
	// an edit, the edited ones); arguments changed since are refused with
	// apperr.Conflict, code args_changed. Separation of duties applies
	// (duties.go): above the policy's amount the first approval is
	// recorded and a second, different person completes it.
	StaffApprove StaffVerb = "approve"
	// StaffReject refuses the request with a reason the assistant and the
	// customer read: one of the action's RejectReasons or the person's
	// own words.
	StaffReject StaffVerb = "reject"
	// StaffSendBack returns the request to the assistant with a question
	// instead of a decision. It ends this request (the assistant proposes
	// again with the answer): the state is rejected, the decision reason
	// reads "question: …" (IsQuestion) and the event is
	// invocation.sent_back.
	StaffSendBack StaffVerb = "send back"
	// StaffEdit changes the arguments and has the system quote them again;
	// the request stays awaiting approval, and an approval must then name
	// the edited arguments' hash (editLoaded).
	StaffEdit StaffVerb = "edit"
	// StaffRequote quotes the request again with the arguments it has (an
	// edit that changes nothing but the quote).
	StaffRequote StaffVerb = "requote"
)

// OtherReason is the reject reason that says "in my own words": the
// decision's Other then holds them.
const OtherReason = "other"

// StaffDecision is one decision of a person of the staff on one card.
type StaffDecision struct {
	// Actor is the console user deciding (a user, never a customer or an
	// assistant).
	Actor        Actor
	InvocationID string
	Verb         StaffVerb
	// Version is the version of the request the person saw; a request
	// that changed since is a conflict. Zero means any.
	Version int32
	// ArgsHash is the hash of the arguments an approval approves: what
	// the person saw. Required to approve.
	ArgsHash []byte
	// StepUp is the approver's passkey assertion made for this decision
	// (stepup.Challenge of the id, the version and ArgsHash), required to
	// approve when the action's policy asks for it (Policy.NeedsStepUp);
	// nil otherwise.
	StepUp *stepup.Assertion
	// Reason is a rejection's reason — one of the action's RejectReasons,
	// or OtherReason for the words in Other — or a send back's question.
	Reason string
	Other  string
	// Args are an edit's new arguments. When nil, FormArgs, if set, makes
	// them from the request as loaded (the console's form is generated
	// from its action); its apperr.Invalid field errors are the form's.
	Args     json.RawMessage
	FormArgs func(Invocation) (json.RawMessage, error)
}

// StaffDecided is what a staff decision did.
type StaffDecided struct {
	// Invocation is the request as the decision left it or, when the
	// decision was refused after the request was read, as it was read:
	// what a form asked again shows.
	Invocation Invocation
	// Done says the decision was recorded.
	Done bool
}

// StaffDecide is the one call of every staff decision on a card —
// approve, reject, send back, edit, quote again. Anyone but a console
// user is refused before anything is read. It loads the request once in
// its transaction, checks there that the action's policy lets the
// person's role decide it (mayDecideIn: role_may_not_approve), that it
// still awaits approval at the version the person saw (a conflict
// otherwise) and, for an approval, that the arguments still hash to
// ArgsHash (args_changed); then it transitions. An edit dry-runs its
// arguments between the load and the transition, outside any
// transaction, and is recorded only at the version loaded. A refused
// form (apperr.Invalid, with field messages) comes back with the request
// as read, so the page can ask again; an unknown id is apperr.NotFound.
func (s *Service) StaffDecide(ctx context.Context, d StaffDecision) (StaffDecided, error) {
	if err := staffOnCard(d.Actor, string(d.Verb)); err != nil {
		return StaffDecided{}, err
	}
	switch d.Verb {
	case StaffApprove:
		if len(d.ArgsHash) == 0 {
			return StaffDecided{}, apperr.InvalidFields(map[string]string{"args_hash": "the page did not say which arguments you approve; reload it"})
		}
		var out StaffDecided
		inv, err := s.approveAsStaff(ctx, d.Actor, d.InvocationID, d.Version, d.ArgsHash, d.StepUp, &out.Invocation)
		if err != nil {
			return out, err
		}
		return StaffDecided{Invocation: inv, Done: true}, nil
	case StaffReject, StaffSendBack:
		return s.staffDecline(ctx, d)
	case StaffEdit, StaffRequote:
		return s.staffEdit(ctx, d)
	}
	return StaffDecided{}, apperr.New(apperr.Invalid, "A person of the staff approves, rejects, sends back or edits a request.")
}

// staffDecline rejects or sends back: the reason is checked once the
// request is read (a rejection's must be one of its action's, or the
// person's own words), then who may decide, then the transition.
func (s *Service) staffDecline(ctx context.Context, d StaffDecision) (StaffDecided, error) {
	verb, event := "reject", EventInvocationRejected
	if d.Verb == StaffSendBack {
		verb, event = "send back", EventInvocationSentBack
	}
	var out StaffDecided
	began := time.Now()
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		row, _, err := loadRequest(ctx, tx, d.InvocationID, false)
		if err != nil {
			return err
		}
		if out.Invocation, err = fromRow(row); err != nil {
			return err
		}
		reason, err := s.staffReason(d, row)
		if err != nil {
			return err
		}
		if _, _, err := mayDecideIn(ctx, tx, d.Actor, row, verb); err != nil {
			return err
		}
		inv, err := s.declineRow(ctx, tx, d.Actor, row.ID, d.Version, AwaitingApproval, verb, event, reason)
		if err != nil {
			return err
		}
		out.Invocation, out.Done = inv, true
		return nil
	})
	if err != nil {
		if apperr.Is(err, apperr.Invalid) && out.Invocation.ID != "" {
			return StaffDecided{Invocation: out.Invocation}, err
		}
		return StaffDecided{}, err
	}
	tracing.Done(ctx, "decide", out.Invocation.ID, out.Invocation.TaskID, began, "decision", verb, "actor", string(d.Actor.Kind), "state", string(out.Invocation.State))
	return out, nil
}

// staffReason is the text a rejection or a send back records, or the
// field error of a form that must ask again.
func (s *Service) staffReason(d StaffDecision, row store.Invocation) (string, error) {
	if d.Verb == StaffSendBack {
		q := strings.TrimSpace(d.Reason)
		if q == "" {
			return "", apperr.InvalidFields(map[string]string{"question": "ask the assistant what you need to know"})
		}
		return declineReason("question: " + q)
	}
	ownWords := "Write the reason in your own words: the assistant and the customer read it."
	text := d.Reason
	switch {
	case d.Reason == "":
		return "", apperr.InvalidFields(map[string]string{"reason": "Choose the reason the assistant and the customer will read, or choose Other and write it."})
	case d.Reason == OtherReason:
		text = strings.TrimSpace(d.Other)
		if text == "" {
			return "", apperr.InvalidFields(map[string]string{"reason": ownWords})
		}
	case !slices.Contains(s.RejectReasons(row.System, row.Action), d.Reason):
		return "", apperr.InvalidFields(map[string]string{"reason": "Choose one of the reasons shown, or choose Other and write it."})
	}
	text, err := declineReason(text)
	if err != nil {
		return "", apperr.InvalidFields(map[string]string{"reason": ownWords + " Use at most 1000 characters."})
	}
	return text, nil
}

// staffEdit loads the request and checks who may decide it in one
// transaction, makes the arguments (the form's, from the request as
// loaded), and records the edit after its dry run (editLoaded).
func (s *Service) staffEdit(ctx context.Context, d StaffDecision) (StaffDecided, error) {
	var out StaffDecided
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		row, _, err := loadRequest(ctx, tx, d.InvocationID, false)
		if err != nil {
			return err
		}
		if out.Invocation, err = fromRow(row); err != nil {
			return err
		}
		_, _, err = mayDecideIn(ctx, tx, d.Actor, row, "edit")
		return err
	})
	if err != nil {
		return StaffDecided{}, err
	}
	inv := out.Invocation
	if inv.State != AwaitingApproval {
		return StaffDecided{}, &apperr.Error{Kind: apperr.IllegalTransition, Code: "illegal_transition",
			Message: fmt.Sprintf("Only a request pending approval can be edited; this one is %s.", inv.State.Label())}
	}
	raw := d.Args
	switch {
	case d.Verb == StaffRequote:
		raw = inv.Call().Args
	case raw == nil && d.FormArgs != nil:
		if raw, err = d.FormArgs(inv); err != nil {
			return out, err
		}
	}
	edited, err := s.editLoaded(ctx, d.Actor, inv, d.Version, raw)
	if err != nil {
		if apperr.Is(err, apperr.Invalid) {
			return out, err
		}
		return StaffDecided{}, err
	}
	return StaffDecided{Invocation: edited, Done: true}, nil
}
