// Package slackbot puts the approval queue's cards in a Slack channel and
// lets the people who may decide them (support agents, and whoever else
// the action's policy adds) decide them there. Each card that enters the queue
// is posted as a message carrying what the console's card carries (the
// quote's lines from → to, the amount, why a person decides, the deadline,
// the second approver, who holds it), with Approve, Reject and a link to
// edit in the console; the message is updated when the card is held or
// decided, wherever that happened. A card whose approval needs the
// approver's passkey (its policy asks for step-up) is never approved in
// Slack: its message has no Approve but a link to the card's step-up page
// in the console, and an Approve click on an older message answers with
// that link.
//
// A click is a request Slack signs with the app's signing secret; it is
// verified (HMAC-SHA256, a five-minute window, each signature taken once)
// before anything is read. A Slack user decides only as the console
// account linked to them, and only where the action's policy lets that
// account's role decide (controlplane/approvers.go, the console's one
// rule; anyone else is told so on the press): a decision goes through the
// console's one door (controlplane.StaffDecide: an approval with the
// arguments' hash and the version the message showed, a rejection with one
// of the action's reasons or the agent's words), so every guard of the
// console holds, and its audit event names the channel
// and the Slack user.
package slackbot

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/store"
)

// Config connects the bot to a Slack workspace.
type Config struct {
	// Token is the bot's OAuth token (xoxb-…): chat:write, users:read and,
	// for the e-mail match, users:read.email.
	Token string
	// SigningSecret is the app's signing secret, which signs every
	// interaction Slack sends.
	SigningSecret string
	// Channel is where cards are posted (an ID such as C0123, or a name).
	Channel string
	// APIURL is Slack's Web API address, ending in "/"; empty means
	// Slack's own. Tests and the demo point it at a fake.
	APIURL string
	// BaseURL is the console's public address, for links.
	BaseURL string
	// Lookback bounds which cards are posted: older arrivals (at a first
	// start) are not. One hour when zero.
	Lookback time.Duration
	// CodeTTL is how long a link code is good for; 15 minutes when zero.
	CodeTTL time.Duration
	// HTTP is the client for Slack's API; nil means one with a 10 second
	// timeout.
	HTTP *http.Client
}

// Store is what the bot keeps in PostgreSQL (*store.Store): links and
// their codes, the requests already taken, and each card's message.
type Store interface {
	SlackLinkOf(ctx context.Context, team, user string) (store.SlackLink, error)
	SlackLinksOfUser(ctx context.Context, userID int64) ([]store.SlackLink, error)
	LinkSlackUser(ctx context.Context, l store.SlackLink) error
	UnlinkSlackUser(ctx context.Context, team, user string, userID int64) error
	IssueSlackLinkCode(ctx context.Context, hash []byte, team, user string, now, expires, notBefore time.Time) error
	RedeemSlackLinkCode(ctx context.Context, hash []byte, userID int64, now, missesSince time.Time, maxMisses int) (store.SlackLink, error)
	SeeSlackRequest(ctx context.Context, signature []byte, sentAt, forgetBefore time.Time) (bool, error)
	SlackCardsToPost(ctx context.Context, since, now time.Time, limit int) ([]string, error)
	ClaimSlackPost(ctx context.Context, invocationID, channel string, now time.Time) (bool, error)
	DropSlackPost(ctx context.Context, invocationID string) error
	SlackPosted(ctx context.Context, invocationID, channel, ts, shown string, open bool, now time.Time) error
	SlackMessageOf(ctx context.Context, invocationID string, now time.Time) (store.SlackMessage, error)
	StaleSlackMessages(ctx context.Context, now time.Time, limit int) ([]store.SlackMessage, error)
	ClaimSlackUpdate(ctx context.Context, invocationID, was, shown string, open bool, now time.Time) (bool, error)
	SlackEmailMatch(ctx context.Context) (bool, error)
	SetSlackEmailMatch(ctx context.Context, on bool, by int64, at time.Time) error
}

// Accounts finds the console accounts Slack users act as (*accounts.Service).
type Accounts interface {
	User(ctx context.Context, id int64) (accounts.User, error)
	UserIDByEmail(ctx context.Context, email string) (int64, error)
}

// Bot posts the cards and answers the clicks.
type Bot struct {
	cfg      Config
	api      *slack.Client
	control  *controlplane.Service
	store    Store
	accounts Accounts
	now      func() time.Time
	log      *slog.Logger
	// teamOnce and teamID hold the bot's own workspace (team).
	teamOnce sync.Once
	teamID   string
}

// New builds a bot; now and log may be nil.
func New(cfg Config, cp *controlplane.Service, st Store, acc Accounts, now func() time.Time, log *slog.Logger) *Bot {
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Lookback <= 0 {
		cfg.Lookback = time.Hour
	}
	if cfg.CodeTTL <= 0 {
		cfg.CodeTTL = 15 * time.Minute
	}
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	opts := []slack.Option{slack.OptionHTTPClient(cfg.HTTP)}
	if cfg.APIURL != "" {
		u := cfg.APIURL
		if !strings.HasSuffix(u, "/") {
			u += "/"
		}
		opts = append(opts, slack.OptionAPIURL(u))
	}
	return &Bot{cfg: cfg, api: slack.New(cfg.Token, opts...), control: cp, store: st, accounts: acc, now: now, log: log}
}

// Run posts new cards and updates the messages of cards that moved every
// interval until ctx ends.
func (b *Bot) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := b.Sync(ctx); err != nil && ctx.Err() == nil {
			b.log.Warn("slack", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (b *Bot) link(path string) string { return b.cfg.BaseURL + path }
