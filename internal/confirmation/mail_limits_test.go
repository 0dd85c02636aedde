package confirmation_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/confirmation"
)

// TestOneRelayedLinkCannotSilenceTheOtherRequests: whoever holds one
// request's confirmation link (its assistant) can have at most
// RequestMailsPer15Min mails sent for it — links and codes together —
// and the page says that bound; the customer's other requests may still
// ask for theirs, up to the customer's own bound.
func TestOneRelayedLinkCannotSilenceTheOtherRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, now, _ := setupWithMail(t)
	_, relayed := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	_, other := pendingFor(t, links, cp, *now, jordan, "cancel_subscription",
		`{"subscription_id":"Pro plan for acme.example","reason_code":"too_expensive","effective":"end_of_period"}`)
	lim := confirmation.DefaultCodeLimits
	if lim.RequestMailsPer15Min >= lim.MailsPer15Min || lim.RequestMailsPerHour >= lim.MailsPerHour {
		t.Fatalf("a request's bounds %+v do not leave the customer's other requests any", lim)
	}
	for i := range lim.RequestMailsPer15Min {
		if _, err := links.SendLink(ctx, relayed); err != nil {
			t.Fatalf("mail %d on the relayed link: %v", i+1, err)
		}
	}
	_, err := links.SendLink(ctx, relayed)
	if e, ok := apperr.As(err); !ok || e.Code != "too_many_mails" || !strings.Contains(e.Message, "about one request") {
		t.Errorf("one mail more on the relayed link: %v, want too_many_mails naming the request's bound", err)
	}
	if _, err := links.SendCode(ctx, relayed); codeOf(err) != "too_many_codes" {
		t.Errorf("a code on the relayed link past its mails: %v, want too_many_codes", err)
	}
	for i := range lim.MailsPer15Min - lim.RequestMailsPer15Min {
		if _, err := links.SendLink(ctx, other); err != nil {
			t.Errorf("mail %d on the customer's other request: %v", i+1, err)
		}
	}
	if _, err := links.SendLink(ctx, other); codeOf(err) != "too_many_mails" {
		t.Errorf("past the customer's bound: %v, want too_many_mails", err)
	}

	// Past the 15 minutes, the relayed link's hour still bounds it, with
	// the customer's own hour far from full.
	*now = now.Add(16 * time.Minute)
	for i := lim.RequestMailsPer15Min; i < lim.RequestMailsPerHour; i++ {
		if _, err := links.SendLink(ctx, relayed); err != nil {
			t.Fatalf("mail %d on the relayed link in its hour: %v", i+1, err)
		}
	}
	_, err = links.SendLink(ctx, relayed)
	if e, ok := apperr.As(err); !ok || e.Code != "too_many_mails" || !strings.Contains(e.Message, "about one request") {
		t.Errorf("one mail more on the relayed link in its hour: %v, want too_many_mails naming the request's bound", err)
	}
}
