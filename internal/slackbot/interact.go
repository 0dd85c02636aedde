package slackbot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/slack-go/slack"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
)

// Reply is the answer to one interaction: its status and, for a modal
// submission that is refused, the JSON Slack shows in the modal.
type Reply struct {
	Status int
	Body   any
}

var ok = Reply{Status: http.StatusOK}

// HandleInteraction answers a request of Slack's interactivity URL: a
// click on a card's message, or the submission of the reject modal. The
// request is verified first (Verify); a click then decides only as the
// clicker's linked console account, only when the action's policy lets
// that account's role decide its cards, and only what the message showed.
// Whatever is refused is said to the clicker alone (an ephemeral
// message, or an error in the modal) and changes nothing.
func (b *Bot) HandleInteraction(ctx context.Context, h http.Header, body []byte) (Reply, error) {
	if err := b.Verify(ctx, h, body); err != nil {
		return Reply{}, err
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return Reply{}, apperr.Wrap(err, apperr.BadRequest, "The interaction is not a form.")
	}
	var cb slack.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
		return Reply{}, apperr.Wrap(err, apperr.BadRequest, "The interaction's payload is not Slack's JSON.")
	}
	who := slackUser{Team: cb.Team.ID, User: cb.User.ID, Channel: cb.Channel.ID}
	if who.Team == "" {
		who.Team = cb.User.TeamID
	}
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		if len(cb.ActionCallback.BlockActions) == 0 {
			return ok, nil
		}
		a := cb.ActionCallback.BlockActions[0]
		if a.ActionID != actionApprove && a.ActionID != actionReject {
			return ok, nil // the console link opens in the browser
		}
		var d decision
		if err := json.Unmarshal([]byte(a.Value), &d); err != nil || d.ID == "" {
			return Reply{}, apperr.New(apperr.BadRequest, "The button does not name a request.")
		}
		// Only a button on the request's own message decides: the one this
		// console posted, in its channel (not a copy shared elsewhere).
		if m, err := b.store.SlackMessageOf(ctx, d.ID, b.now()); err != nil || m.Channel != cb.Channel.ID || m.TS != cb.Message.Timestamp {
			b.tell(ctx, who, "This button is not on the request's message in the approvals channel; nothing was changed.")
			return ok, nil
		}
		return ok, b.onClick(ctx, who, a.ActionID, d, cb.TriggerID)
	case slack.InteractionTypeViewSubmission:
		if cb.View.CallbackID != modalReject {
			return ok, nil
		}
		return b.onRejectSubmit(ctx, who, cb.View)
	case slack.InteractionTypeViewClosed:
		// The reject form was cancelled: the hold its click took goes.
		var d decision
		if cb.View.CallbackID == modalReject && json.Unmarshal([]byte(cb.View.PrivateMetadata), &d) == nil && d.ID != "" {
			if actor, refusal, err := b.actor(ctx, who); err == nil && refusal == "" {
				b.release(ctx, d.ID, actor)
			}
		}
	}
	return ok, nil
}

// onClick answers Approve or Reject on a card's message.
func (b *Bot) onClick(ctx context.Context, who slackUser, action string, d decision, triggerID string) error {
	actor, refusal, err := b.actor(ctx, who)
	if err != nil {
		return err
	}
	if refusal != "" {
		b.tell(ctx, who, refusal)
		return nil
	}
	card, err := b.control.Card(ctx, d.ID)
	if err != nil {
		return err
	}
	if card.State != controlplane.AwaitingApproval {
		b.tell(ctx, who, "This request is no longer waiting for approval (now: "+card.State.Label()+"); nothing was changed.")
		return b.Refresh(ctx, d.ID)
	}
	if card.Version != d.Version || hex.EncodeToString(card.ArgsHash) != d.Hash {
		b.tell(ctx, who, "This message was out of date: the request changed after it was posted, and nothing was decided. "+
			"The message now shows the request as it stands; decide on that.")
		return b.Refresh(ctx, d.ID)
	}
	// Who may decide is the action's policy's one rule, as in the console;
	// a person it leaves out takes no hold and opens no form.
	if may, p, err := b.control.MayDecide(ctx, actor, card.System, card.Action); err != nil {
		return err
	} else if !may {
		b.tell(ctx, who, fmt.Sprintf("Only %s decide requests of %s/%s, by its policy; your role (%s) is not one of them. Nothing was changed.",
			p.DecidersWords(), card.System, card.Action, actor.Role))
		return nil
	}
	// An approval that needs a passkey is never made here, whatever an
	// older message still offers (one posted before the policy asked for
	// it): the click is answered with the step-up page.
	if action == actionApprove {
		if stepUp, err := b.needsStepUp(ctx, card.Invocation); err != nil {
			return err
		} else if stepUp {
			b.tellStepUp(ctx, who, d.ID)
			return nil
		}
	}
	claim, err := b.control.Claim(ctx, actor, d.ID)
	if err != nil {
		b.tellErr(ctx, who, err)
		return nil
	}
	if claim.UserID != actor.UserID {
		name := "Another agent"
		if u, err := b.accounts.User(ctx, claim.UserID); err == nil {
			name = lit(u.Name)
		}
		b.tell(ctx, who, name+" is deciding this request (held until "+claim.ExpiresAt.UTC().Format("15:04 UTC")+"). Nothing was changed.")
		return nil
	}
	if action == actionReject {
		if err := b.openReject(ctx, card, d, who, triggerID); err != nil {
			b.release(ctx, d.ID, actor)
			return err
		}
		return b.Refresh(ctx, d.ID)
	}
	return b.approve(ctx, who, actor, card, d)
}

// approve checks the quote again (the console does when a card opens) and
// approves what the message showed, through the console's own call.
func (b *Bot) approve(ctx context.Context, who slackUser, actor controlplane.Actor, card controlplane.QueueCard, d decision) error {
	defer b.release(ctx, d.ID, actor)
	console := b.link("/queue/" + url.PathEscape(d.ID))
	_, changed, err := b.control.FreshQuote(ctx, card.Invocation)
	if e, isApp := apperr.As(err); isApp && e.Kind == apperr.Invalid {
		b.tell(ctx, who, "The system now refuses this request: "+lit(e.Message)+" Nothing was approved; <"+console+"|open it in the console>.")
		return nil
	}
	if err == nil && changed {
		b.tell(ctx, who, "The "+card.Target.Kind+" changed in "+card.System+" since this quote was made, so nothing was approved: "+
			"quote again in the console (<"+console+"|open it>), then decide on the new quote.")
		return nil
	}
	// A quote that could not be checked is left to the agent, as in the
	// console: the permit still refuses a changed object.
	hash, _ := hex.DecodeString(d.Hash)
	out, err := b.control.StaffDecide(ctx, controlplane.StaffDecision{Actor: actor, InvocationID: d.ID, Verb: controlplane.StaffApprove,
		Version: d.Version, ArgsHash: hash})
	if e, isApp := apperr.As(err); isApp && e.Code == controlplane.ErrStepUpRequired.Code {
		b.tellStepUp(ctx, who, d.ID)
		return nil
	}
	if err != nil {
		b.tellErr(ctx, who, err)
		return nil
	}
	if out.Invocation.State == controlplane.AwaitingApproval {
		b.tell(ctx, who, "Your approval is recorded. A second, different person must approve it before it can be sent.")
	}
	return nil
}

// tellStepUp answers an approval that needs a passkey with the console's
// step-up page of the request.
func (b *Bot) tellStepUp(ctx context.Context, who slackUser, id string) {
	b.tell(ctx, who, "Approving this request needs your passkey, so it cannot be approved in Slack; nothing was changed. "+
		"<"+b.stepUpLink(id)+"|Approve it in the console with your passkey>.")
}

// release lets go of the clicker's hold once their click is answered, and
// shows the card as it stands now.
func (b *Bot) release(ctx context.Context, id string, actor controlplane.Actor) {
	if err := b.control.ReleaseCard(ctx, id, actor.UserID); err != nil {
		b.log.Warn("slack: release a card", "invocation", id, "error", err)
	}
	if err := b.Refresh(ctx, id); err != nil {
		b.log.Warn("slack: refresh a card", "invocation", id, "error", err)
	}
}

// maxOptionText is the most a Slack option's text may hold.
const maxOptionText = 75

// reasonValue is a reject reason's option value: a digest of its text.
func reasonValue(reason string) string {
	sum := sha256.Sum256([]byte(reason))
	return "r" + hex.EncodeToString(sum[:12])
}

// openReject opens the modal that asks for the reason: the action's own
// reasons, none chosen, or the agent's own words.
func (b *Bot) openReject(ctx context.Context, card controlplane.QueueCard, d decision, who slackUser, triggerID string) error {
	d.Channel = who.Channel
	if _, err := b.api.OpenViewContext(ctx, triggerID, b.rejectView(card, d)); err != nil {
		return apperr.Wrap(err, apperr.Upstream, "Slack did not open the reject form.")
	}
	return nil
}

// rejectView is the reject modal of card, carrying d.
func (b *Bot) rejectView(card controlplane.QueueCard, d decision) slack.ModalViewRequest {
	var options []*slack.OptionBlockObject
	for _, r := range b.control.RejectReasons(card.System, card.Action) {
		if text := visible(r); len([]rune(text)) <= maxOptionText {
			// Only a reason shown whole is offered: the one sent is the one
			// read (a longer one is the console's, or Other's).
			options = append(options, slack.NewOptionBlockObject(reasonValue(r), plain(text), nil))
		}
	}
	options = append(options, slack.NewOptionBlockObject("other", plain("Other: in my own words"), nil))
	other := slack.NewInputBlock("other", plain("Your own words"), plain("The assistant and the customer read this."),
		slack.NewPlainTextInputBlockElement(plain("Say why, for the assistant and the customer"), "other"))
	other.Optional = true
	return slack.ModalViewRequest{Type: slack.VTModal, CallbackID: modalReject, PrivateMetadata: d.value(),
		Title: plain("Reject"), Submit: plain("Reject"), Close: plain("Cancel"), NotifyOnClose: true,
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewSectionBlock(mrkdwn(lit(clip(card.Quote.Title, 2900))), nil, nil),
			slack.NewInputBlock("reason", plain("Why? The assistant and the customer read it."), nil,
				slack.NewRadioButtonsBlockElement("reason", options...)),
			other,
		}}}
}

// onRejectSubmit rejects with the reason chosen in the modal, through the
// console's own call; a missing or unknown reason, or a refusal, is shown
// in the modal and changes nothing.
func (b *Bot) onRejectSubmit(ctx context.Context, who slackUser, view slack.View) (Reply, error) {
	var d decision
	if err := json.Unmarshal([]byte(view.PrivateMetadata), &d); err != nil || d.ID == "" {
		return Reply{}, apperr.New(apperr.BadRequest, "The form does not name a request.")
	}
	who.Channel = d.Channel
	refuse := func(block, msg string) (Reply, error) {
		return Reply{Status: http.StatusOK, Body: slack.NewErrorsViewSubmissionResponse(map[string]string{block: msg})}, nil
	}
	actor, refusal, err := b.actor(ctx, who)
	if err != nil {
		return Reply{}, err
	}
	if refusal != "" {
		return refuse("reason", refusal)
	}
	inv, err := b.control.Invocation(ctx, d.ID)
	if err != nil {
		return Reply{}, err
	}
	var chosen, own string
	if view.State != nil {
		chosen = view.State.Values["reason"]["reason"].SelectedOption.Value
		own = view.State.Values["other"]["other"].Value
	}
	reasons := b.control.RejectReasons(inv.System, inv.Action)
	var text string
	switch {
	case chosen == "":
		return refuse("reason", "Choose the reason the assistant and the customer will read, or choose Other and write it.")
	case chosen == controlplane.OtherReason:
		if text = own; text == "" {
			return refuse("other", "Write the reason in your own words: the assistant and the customer read it.")
		}
	default:
		// The option names its reason's text (reasonValue), so a list that
		// changed while the form was open sends nothing it did not show.
		for _, r := range reasons {
			if reasonValue(r) == chosen {
				text = r
			}
		}
		if text == "" {
			return refuse("reason", "The reasons for this action changed while the form was open: close it and choose again.")
		}
	}
	defer b.release(ctx, d.ID, actor)
	reject := controlplane.StaffDecision{Actor: actor, InvocationID: d.ID, Verb: controlplane.StaffReject, Version: d.Version, Reason: text}
	if chosen == controlplane.OtherReason {
		reject.Reason, reject.Other = controlplane.OtherReason, own
	}
	if _, err := b.control.StaffDecide(ctx, reject); err != nil {
		e, isApp := apperr.As(err)
		if !isApp {
			return Reply{}, err
		}
		msg := e.Message
		if e.Hint != "" {
			msg += " " + e.Hint
		}
		return refuse("reason", clip(msg, 150))
	}
	return ok, nil
}

// tell answers the clicker alone.
func (b *Bot) tell(ctx context.Context, who slackUser, text string) {
	if _, err := b.api.PostEphemeralContext(ctx, who.Channel, who.User, slack.MsgOptionText(text, false)); err != nil {
		b.log.Warn("slack: ephemeral answer", "error", err)
	}
}

// tellErr tells the clicker why the control plane refused, in its words,
// shown literally: a refusal may carry a connected system's message or
// hint (an adapter's error) or other outside text, and nothing tells
// which part is which.
func (b *Bot) tellErr(ctx context.Context, who slackUser, err error) {
	e, isApp := apperr.As(err)
	if !isApp {
		b.log.Warn("slack: decision", "error", err)
		b.tell(ctx, who, "Something went wrong; nothing was changed. Try again, or decide in the console.")
		return
	}
	msg := e.Message
	if e.Hint != "" {
		msg += " " + e.Hint
	}
	b.tell(ctx, who, lit(msg)+" Nothing was changed.")
}
