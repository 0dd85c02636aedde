package slackbot

import (
	"context"
	"errors"
	"fmt"

	"countersign/store"
)

// syncBatch bounds how many posts and updates one Sync makes.
const syncBatch = 50

// Sync posts the cards that entered the queue since the lookback and have
// no message yet, and updates every open message whose card moved (held,
// let go, approved once of twice, decided — in Slack or in the console).
// Each post and update is claimed in PostgreSQL first, so several console
// instances make it once. A failure of one message is logged and does not
// stop the others.
func (b *Bot) Sync(ctx context.Context) error {
	now := b.now()
	ids, err := b.store.SlackCardsToPost(ctx, now.Add(-b.cfg.Lookback), now, syncBatch)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := b.post(ctx, id); err != nil {
			b.log.Warn("slack: card not posted", "invocation", id, "error", err)
		}
	}
	stale, err := b.store.StaleSlackMessages(ctx, b.now(), syncBatch)
	if err != nil {
		return err
	}
	for _, m := range stale {
		if err := b.update(ctx, m); err != nil {
			b.log.Warn("slack: message not updated", "invocation", m.InvocationID, "error", err)
		}
	}
	return nil
}

// post makes a card's message in the channel, unless another instance does.
func (b *Bot) post(ctx context.Context, id string) error {
	ok, err := b.store.ClaimSlackPost(ctx, id, b.cfg.Channel, b.now())
	if err != nil || !ok {
		return err
	}
	card, err := b.control.Card(ctx, id)
	if err != nil {
		return errors.Join(err, b.store.DropSlackPost(ctx, id))
	}
	msg, err := b.message(ctx, card)
	if err != nil {
		return errors.Join(err, b.store.DropSlackPost(ctx, id))
	}
	channel, ts, err := b.api.PostMessageContext(ctx, b.cfg.Channel, msg.options()...)
	if err != nil {
		return errors.Join(fmt.Errorf("slackbot: post %s: %w", id, err), b.store.DropSlackPost(ctx, id))
	}
	return b.store.SlackPosted(ctx, id, channel, ts, shown(card), open(card), b.now())
}

// update redraws a message whose card moved.
func (b *Bot) update(ctx context.Context, m store.SlackMessage) error {
	card, err := b.control.Card(ctx, m.InvocationID)
	if err != nil {
		return err
	}
	now := shown(card)
	if now == m.Shown {
		return nil
	}
	ok, err := b.store.ClaimSlackUpdate(ctx, m.InvocationID, m.Shown, now, open(card), b.now())
	if err != nil || !ok {
		return err
	}
	msg, err := b.message(ctx, card)
	if err != nil {
		return err
	}
	if _, _, _, err := b.api.UpdateMessageContext(ctx, m.Channel, m.TS, msg.options()...); err != nil {
		// Shown again as it was, so the next Sync tries again.
		_, uerr := b.store.ClaimSlackUpdate(ctx, m.InvocationID, now, m.Shown, true, b.now())
		return errors.Join(fmt.Errorf("slackbot: update %s: %w", m.InvocationID, err), uerr)
	}
	return nil
}

// Refresh updates one card's message now, when it has one (after a
// decision made in Slack, so the clicker sees it at once).
func (b *Bot) Refresh(ctx context.Context, id string) error {
	m, err := b.store.SlackMessageOf(ctx, id, b.now())
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return b.update(ctx, m)
}
