package slackbot

import (
	"context"

	"github.com/slack-go/slack"

	"countersign/internal/controlplane"
)

// MessageOf is what the bot would post for card: its notification text
// and its blocks.
func (b *Bot) MessageOf(ctx context.Context, card controlplane.QueueCard) (string, []slack.Block, error) {
	m, err := b.message(ctx, card)
	return m.text, m.blocks, err
}

// RejectViewOf is the reject modal the bot would open for card.
func (b *Bot) RejectViewOf(card controlplane.QueueCard) slack.ModalViewRequest {
	return b.rejectView(card, decisionOf(card.Invocation))
}
