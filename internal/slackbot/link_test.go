package slackbot_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/fakeslack"
	"countersign/store"
)

// twoCodes makes a Slack user who clicks twice, a minute apart, while
// unlinked, and returns them with the two codes they were sent.
func (b *testBundle) twoCodes(id string, m fakeslack.Message) (fakeslack.User, [2]string) {
	b.t.Helper()
	u := b.slack.AddUser(fakeslack.User{ID: id, Name: id})
	var codes [2]string
	for i := range codes {
		before := len(b.slack.DMs())
		b.click(u, m, "approve")
		dms := b.slack.DMs()
		if len(dms) != before+1 {
			b.t.Fatalf("click %d of %s: %d direct messages, want one more", i+1, id, len(dms)-before)
		}
		codes[i] = codeIn(b.t, dms[len(dms)-1].Text)
		b.clock.Advance(time.Minute + time.Second)
	}
	return u, codes
}

// TestALinkNeverMoves: a Slack user linked to one account whose other
// code is entered in another account stays linked where they were: the
// second account is refused (conflict, slack_linked_elsewhere, on the
// code field, saying how to move it), the Slack user is told by direct
// message, and the code links the second account only once the first
// unlinked.
func TestALinkNeverMoves(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := b.refund("", 4200)
	b.sync()
	kimSlack, codes := b.twoCodes("U0KIM", b.message(inv.ID))
	kim := b.user(accounts.Agent, "Kim Agent")
	other := b.user(accounts.Agent, "Other Agent")
	if _, err := b.bot.Redeem(b.ctx, kim.ID, codes[0]); err != nil {
		t.Fatalf("the first code: %v", err)
	}
	before := len(b.slack.DMs())
	_, err := b.bot.Redeem(b.ctx, other.ID, codes[1])
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.Conflict || e.Code != "slack_linked_elsewhere" || !strings.Contains(e.Fields["code"], "unlinks it") {
		t.Fatalf("a code of a Slack user linked elsewhere: %v, want conflict slack_linked_elsewhere naming the code field", err)
	}
	if l, err := b.store.SlackLinkOf(b.ctx, kimSlack.Team, kimSlack.ID); err != nil || l.UserID != kim.ID {
		t.Fatalf("the link after the refused code: %+v %v, want still Kim's (%d)", l, err, kim.ID)
	}
	dms := b.slack.DMs()
	if len(dms) != before+1 || dms[len(dms)-1].Channel != kimSlack.ID || !strings.Contains(dms[len(dms)-1].Text, "stays linked to yours") ||
		!strings.Contains(dms[len(dms)-1].Text, "unlink it") {
		t.Fatalf("the linked Slack user was not told: %+v", dms[before:])
	}

	if err := b.bot.Unlink(b.ctx, kim.ID, kimSlack.Team, kimSlack.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.bot.Redeem(b.ctx, other.ID, codes[1]); err != nil {
		t.Fatalf("the same code after Kim unlinked: %v", err)
	}
	if l, err := b.store.SlackLinkOf(b.ctx, kimSlack.Team, kimSlack.ID); err != nil || l.UserID != other.ID {
		t.Fatalf("the link after the unlink and the code: %+v %v, want the other account's (%d)", l, err, other.ID)
	}
}

// TestTwoAccountsRedeemAtOnce: two accounts entering, at the same moment,
// two codes of one unlinked Slack user: exactly one links, the other is
// refused, and the link is the winner's — in every round.
func TestTwoAccountsRedeemAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inv := b.refund("", 4200)
	b.sync()
	m := b.message(inv.ID)
	for round := range 4 {
		su, codes := b.twoCodes(fmt.Sprintf("U0RACE%d", round), m)
		ids := [2]int64{b.user(accounts.Agent, "Ana").ID, b.user(accounts.Agent, "Ben").ID}
		var errs [2]error
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				<-start
				_, errs[i] = b.bot.Redeem(b.ctx, ids[i], codes[i])
			})
		}
		close(start)
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won == -1:
				won = i
			case err == nil:
				t.Fatalf("round %d: both accounts linked the same Slack user", round)
			case apperr.KindOf(err) != apperr.Conflict:
				t.Fatalf("round %d: %v, want a conflict", round, err)
			}
		}
		if won == -1 {
			t.Fatalf("round %d: neither account linked (%v)", round, errs)
		}
		l, err := b.store.SlackLinkOf(b.ctx, su.Team, su.ID)
		if err != nil || l.UserID != ids[won] {
			t.Fatalf("round %d: link %+v %v, want the winner's (%d)", round, l, err, ids[won])
		}
		if !errors.Is(errs[1-won], store.ErrConflict) {
			t.Errorf("round %d: the loser's error %v does not wrap store.ErrConflict", round, errs[1-won])
		}
	}
}
