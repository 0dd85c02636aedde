package slackbot

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// Linking limits: one code a Slack user per codeEvery; maxMisses wrong
// codes an account per missWindow.
const (
	codeEvery  = time.Minute
	maxMisses  = 5
	missWindow = 15 * time.Minute
)

// codeAlphabet has no letters that read like digits (no I, L, O, U).
const codeAlphabet = "ABCDEFGHJKMNPQRSTVWXYZ23456789"

// LinkPage is the console page where a person enters their link code.
const LinkPage = "/account/slack"

// slackUser is who clicked, in Slack's terms, and where.
type slackUser struct {
	Team, User, Channel string
}

// actor is the console account a Slack user acts as, or, when they may not
// decide, the sentence that says why (and what to do). An unlinked user
// is sent a link code in a direct message. Whether the account's role may
// decide a given card is its action's policy's rule (mayDecide), asked
// per click as the console asks it.
func (b *Bot) actor(ctx context.Context, who slackUser) (controlplane.Actor, string, error) {
	link, err := b.store.SlackLinkOf(ctx, who.Team, who.User)
	if errors.Is(err, store.ErrNotFound) {
		var match bool
		if match, err = b.store.SlackEmailMatch(ctx); err == nil {
			err = store.ErrNotFound
			if match {
				link, err = b.linkByEmail(ctx, who)
			}
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		return controlplane.Actor{}, b.offerCode(ctx, who), nil
	}
	if err != nil {
		return controlplane.Actor{}, "", err
	}
	u, err := b.accounts.User(ctx, link.UserID)
	if err != nil {
		return controlplane.Actor{}, "", err
	}
	switch {
	case u.Disabled():
		return controlplane.Actor{}, "Your Countersign account is disabled; nothing was changed.", nil
	case u.Role == accounts.Customer:
		return controlplane.Actor{}, "A customer's account decides nothing in Slack; nothing was changed.", nil
	}
	// The click is the Slack user's, whom the link vouches for: the audit
	// trail records the workspace and that user as the identification.
	a := controlplane.UserActor(u.ID, string(u.Role), u.Name).IdentifiedAs(controlplane.Identification{
		Method: controlplane.IdentifiedSlack, Issuer: who.Team, Subject: who.User})
	a.Via = &controlplane.Via{Channel: "slack", Conversation: who.Channel, User: who.Team + "/" + who.User}
	return a, "", nil
}

// linkByEmail links a Slack user whose confirmed e-mail address is a
// console account's; store.ErrNotFound when there is none.
func (b *Bot) linkByEmail(ctx context.Context, who slackUser) (store.SlackLink, error) {
	info, err := b.api.GetUserInfoContext(ctx, who.User)
	if err != nil {
		b.log.Warn("slack: users.info", "error", err)
		return store.SlackLink{}, store.ErrNotFound
	}
	// Only an address the bot's own workspace confirmed links: a user of
	// another organisation in a shared channel has an address its admins
	// manage, which could name anyone.
	if !info.IsEmailConfirmed || info.Profile.Email == "" || info.IsBot || info.TeamID == "" || info.TeamID != b.team(ctx) {
		return store.SlackLink{}, store.ErrNotFound
	}
	id, err := b.accounts.UserIDByEmail(ctx, info.Profile.Email)
	if apperr.Is(err, apperr.NotFound) {
		return store.SlackLink{}, store.ErrNotFound
	}
	if err != nil {
		return store.SlackLink{}, err
	}
	l := store.SlackLink{Team: who.Team, User: who.User, UserID: id, How: "email", LinkedAt: b.now()}
	var linked *store.SlackLinkedError
	if err := b.store.LinkSlackUser(ctx, l); errors.As(err, &linked) {
		// A code was entered meanwhile: that link stands, not the address's.
		return b.store.SlackLinkOf(ctx, who.Team, who.User)
	} else if err != nil {
		return store.SlackLink{}, err
	}
	return l, nil
}

// offerCode sends an unlinked Slack user a one-time code by direct message
// (at most one a minute) and returns what to tell them.
func (b *Bot) offerCode(ctx context.Context, who slackUser) string {
	page := b.link(LinkPage)
	tell := "Link your Slack account to your Countersign account first; nothing was changed. " +
		"I sent you a one-time code in a direct message: enter it at <" + page + "|your Slack page in the console>."
	code := newCode()
	now := b.now()
	err := b.store.IssueSlackLinkCode(ctx, codeHash(code), who.Team, who.User, now, now.Add(b.cfg.CodeTTL), now.Add(-codeEvery))
	if errors.Is(err, store.ErrLimit) {
		return "Link your Slack account to your Countersign account first; nothing was changed. " +
			"I sent you a code less than a minute ago: enter it at <" + page + "|your Slack page in the console>."
	}
	if err == nil {
		text := fmt.Sprintf("Your Countersign link code is *%s*. Enter it at <%s|your Slack page in the console> within %d minutes; it works once.",
			code, page, int(b.cfg.CodeTTL.Minutes()))
		_, _, err = b.api.PostMessageContext(ctx, who.User, slack.MsgOptionText(text, false))
	}
	if err != nil {
		b.log.Warn("slack: link code not sent", "error", err)
		return "Link your Slack account to your Countersign account first; nothing was changed. I could not send you a code; try again in a minute."
	}
	return tell
}

// Link is a Slack user linked to a console account.
type Link struct {
	Team, User string
	// How is "code" (the person entered a code the bot sent them) or
	// "email" (the addresses matched).
	How      string
	LinkedAt time.Time
}

// Redeem links the Slack user a code was sent to with console account
// userID. A wrong, used or expired code is a field error; too many wrong
// codes are apperr.LimitReached. A link never moves: a code for a Slack
// user linked to another account is apperr.Conflict
// ("slack_linked_elsewhere", naming the code field), nothing changes, and
// the Slack user is told by direct message that their link stays and how
// to move it (their account unlinks first, on its Slack page).
func (b *Bot) Redeem(ctx context.Context, userID int64, code string) (Link, error) {
	code = normaliseCode(code)
	if code == "" {
		return Link{}, apperr.InvalidFields(map[string]string{"code": "Enter the code the Countersign bot sent you in Slack."})
	}
	now := b.now()
	l, err := b.store.RedeemSlackLinkCode(ctx, codeHash(code), userID, now, now.Add(-missWindow), maxMisses)
	var linked *store.SlackLinkedError
	switch {
	case errors.As(err, &linked):
		b.tellLinkStays(ctx, linked.User)
		return Link{}, &apperr.Error{Kind: apperr.Conflict, Code: "slack_linked_elsewhere", Err: err,
			Message: "That Slack account is linked to another Countersign account, and stays linked to it; nothing was changed.",
			Hint:    "A link never moves by itself: whoever it is linked to unlinks it on their Slack page first, then enter the code again.",
			Fields: map[string]string{"code": "This code's Slack account is linked to another Countersign account. " +
				"Its owner unlinks it on their Slack page (" + LinkPage + ") first; then enter the code again while it is valid."}}
	case errors.Is(err, store.ErrLimit):
		return Link{}, &apperr.Error{Kind: apperr.LimitReached, Code: "too_many_codes",
			Message:           "Too many wrong codes; wait a quarter of an hour, then try again.",
			RetryAfterSeconds: int(missWindow.Seconds())}
	case errors.Is(err, store.ErrNotFound):
		return Link{}, apperr.InvalidFields(map[string]string{"code": "That code is wrong, used or expired. Click a button in Slack to be sent a new one."})
	case err != nil:
		return Link{}, err
	}
	return Link{Team: l.Team, User: l.User, How: l.How, LinkedAt: l.LinkedAt}, nil
}

// tellLinkStays tells a linked Slack user, by direct message, that a code
// of theirs was entered in another account and changed nothing.
func (b *Bot) tellLinkStays(ctx context.Context, user string) {
	text := "Someone entered a Countersign link code for this Slack account in another Countersign account. " +
		"Nothing was changed: this Slack account stays linked to yours. To link it to the other account instead, " +
		"unlink it on <" + b.link(LinkPage) + "|your Slack page in the console> first."
	if _, _, err := b.api.PostMessageContext(ctx, user, slack.MsgOptionText(text, false)); err != nil {
		b.log.Warn("slack: link-stays notice not sent", "error", err)
	}
}

// Unlink removes the link of Slack user team/user to console account
// userID: their clicks no longer decide as it. apperr.NotFound when there
// is no such link.
func (b *Bot) Unlink(ctx context.Context, userID int64, team, user string) error {
	if err := b.store.UnlinkSlackUser(ctx, team, user, userID); errors.Is(err, store.ErrNotFound) {
		return apperr.Wrap(err, apperr.NotFound, "That Slack account is not linked to yours.")
	} else if err != nil {
		return err
	}
	return nil
}

// EmailMatch reports whether Slack users are linked by their confirmed
// e-mail address (SetEmailMatch).
func (b *Bot) EmailMatch(ctx context.Context) (bool, error) { return b.store.SlackEmailMatch(ctx) }

// SetEmailMatch turns on or off linking a Slack user to the console account
// with the same address, when Slack says the address is confirmed. Only an
// admin may: it lets whoever controls Slack's addresses act as the
// console's accounts.
func (b *Bot) SetEmailMatch(ctx context.Context, admin accounts.User, on bool) error {
	if admin.Role != accounts.Admin || admin.Disabled() {
		return apperr.New(apperr.Forbidden, "Only an admin can change how Slack accounts are linked.")
	}
	return b.store.SetSlackEmailMatch(ctx, on, admin.ID, b.now())
}

// Links lists the Slack users linked to a console account.
func (b *Bot) Links(ctx context.Context, userID int64) ([]Link, error) {
	rows, err := b.store.SlackLinksOfUser(ctx, userID)
	out := make([]Link, 0, len(rows))
	for _, l := range rows {
		out = append(out, Link{Team: l.Team, User: l.User, How: l.How, LinkedAt: l.LinkedAt})
	}
	return out, err
}

// newCode is eight letters of codeAlphabet, drawn without bias, as
// "ABCD-EFGH".
func newCode() string {
	out := make([]byte, 0, 9)
	var b [1]byte
	for len(out) < 9 {
		if len(out) == 4 {
			out = append(out, '-')
		}
		_, _ = rand.Read(b[:])
		if int(b[0]) >= 256/len(codeAlphabet)*len(codeAlphabet) {
			continue
		}
		out = append(out, codeAlphabet[int(b[0])%len(codeAlphabet)])
	}
	return string(out)
}

// normaliseCode reads a code as typed: case, spaces and dashes aside.
func normaliseCode(s string) string {
	s = strings.ToUpper(strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, s))
	if len(s) != 8 {
		return strings.TrimSpace(s)
	}
	return s[:4] + "-" + s[4:]
}

func codeHash(code string) []byte {
	h := sha256.Sum256([]byte("countersign slack link " + normaliseCode(code)))
	return h[:]
}

// team is the bot's own workspace (auth.test), asked once; "" when Slack
// did not say, which links nobody by e-mail.
func (b *Bot) team(ctx context.Context) string {
	b.teamOnce.Do(func() {
		if r, err := b.api.AuthTestContext(ctx); err == nil {
			b.teamID = r.TeamID
		} else {
			b.log.Warn("slack: auth.test", "error", err)
		}
	})
	return b.teamID
}
