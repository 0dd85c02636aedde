package slackbot_test

import (
	"context"
	"strings"
	"testing"

	"countersign/internal/controlplane"
	"countersign/internal/fakeslack"
)

// requireStepUp makes every approval above aboveCents need a passkey.
func (b *testBundle) requireStepUp(aboveCents int64) {
	b.t.Helper()
	if _, err := b.store.Pool().Exec(context.Background(), `UPDATE policies SET step_up_above_cents = $1`, aboveCents); err != nil {
		b.t.Fatal(err)
	}
}

// TestStepUpCardIsApprovedInTheConsole: a card whose approval needs a
// passkey has no Approve button in Slack but a link to its step-up page
// in the console, and the message says why; Reject stays.
func TestStepUpCardIsApprovedInTheConsole(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.requireStepUp(1000)
	// The small one first: the big one counts it as exposure, not the
	// other way round.
	small, big := b.refund("", 800), b.refund("", 4200)
	b.sync()
	m := b.message(big.ID)
	blocks := string(m.Blocks)
	for _, w := range []string{"Approve in the console (passkey)", "https://console.example/queue/" + big.ID + "/step-up", "Approving needs your passkey"} {
		if !strings.Contains(blocks, jsonText(w)) {
			t.Errorf("the message of a card that needs a passkey does not carry %q:\n%s", w, blocks)
		}
	}
	if _, ok := b.slack.Click(fakeslack.User{}, m, "approve"); ok {
		t.Error("the message of a card that needs a passkey has an Approve button")
	}
	if _, ok := b.slack.Click(fakeslack.User{}, m, "reject"); !ok {
		t.Error("the message of a card that needs a passkey has no Reject button")
	}
	if plain := b.message(small.ID); strings.Contains(string(plain.Blocks), "step-up") {
		t.Errorf("a card below the step-up amount links to a step-up page:\n%s", plain.Blocks)
	}
}

// TestApproveClickOnAStepUpCardApprovesNothing: a message posted before
// the policy asked for a passkey still has Approve; its click approves
// nothing and answers with the card's step-up page.
func TestApproveClickOnAStepUpCardApprovesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, sam := b.agent("Sam Agent")
	inv := b.refund("", 4200)
	b.sync()
	old := b.message(inv.ID)
	b.requireStepUp(1000)
	b.click(sam, old, "approve")
	if got := b.state(inv.ID); got != controlplane.AwaitingApproval {
		t.Fatalf("an Approve click on a card that needs a passkey left it %s", got)
	}
	if len(b.decisions(inv)) != 0 {
		t.Fatal("an Approve click on a card that needs a passkey recorded a decision")
	}
	if e := b.lastEphemeral(sam); !strings.Contains(e, "https://console.example/queue/"+inv.ID+"/step-up") || !strings.Contains(e, "passkey") {
		t.Fatalf("the clicker was told %q, want the step-up page", e)
	}
}
