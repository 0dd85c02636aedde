package confirmation_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"testing"

	"countersign/internal/confirmation"
	"countersign/internal/consent"
	"countersign/internal/controlplane"
)

// TestAMailLinkIsBoundToTheDecisionsDigest: the digest a mail link is
// bound to is the one the decision checks, consent.QuoteDigest of the
// quote as stored — also for a stored quote the console's struct does not
// re-encode byte for byte (a key it does not know) — so the link's proof
// decides on the quote the mail showed.
func TestAMailLinkIsBoundToTheDecisionsDigest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, now, outbox := setupWithMail(t)
	inv, tok := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	if _, err := storeOf(links).Pool().Exec(ctx, `UPDATE invocations SET quote = quote || '{"shown_by": "an adapter of a newer version"}'
		WHERE id = $1`, inv.ID); err != nil {
		t.Fatal(err)
	}
	inv, err := cp.Invocation(ctx, inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	decision, err := consent.QuoteDigest(inv.QuoteJSON)
	if err != nil {
		t.Fatal(err)
	}
	_, token := mailedLink(t, links, outbox, tok)
	sum := sha256.Sum256([]byte(token))
	row, err := storeOf(links).MailLinkByHash(ctx, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(row.QuoteDigest, decision) {
		t.Fatalf("the mail link is bound to the digest %x, the decision checks %x", row.QuoteDigest, decision)
	}
	spent, err := links.SpendMailLink(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	out, err := links.Decide(ctx, confirmation.ProvedOn(spent.Opened, confirmation.ProofLink), controlplane.CustomerDecision{
		InvocationID: inv.ID, Verb: controlplane.CustomerDecline, QuoteVersion: row.Version, QuoteDigest: row.QuoteDigest})
	if err != nil || out.Invocation.State != controlplane.Rejected {
		t.Errorf("declining with the link's version and digest: %s, %v", out.Invocation.State, err)
	}
}
