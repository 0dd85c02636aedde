package confirmation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/confirmation"
	"countersign/internal/consent"
	"countersign/internal/controlplane"
	"countersign/internal/mail"
)

// errMailDown is a mail server that is down.
var errMailDown = errors.New("mail server down")

// TestAMailThatFailedKeepsNoRow: a mail someone asked for that could not
// be sent — a link or a code — leaves nothing behind: it counts against
// no limit, and the console's own mail of that version still goes.
func TestAMailThatFailedKeepsNoRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, now, outbox := setupWithMail(t)
	inv, tok := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	outbox.Fail(errMailDown)
	if _, err := links.SendLink(ctx, tok); codeOf(err) != "mail_failed" {
		t.Fatalf("a link with the mail server down: %v, want mail_failed", err)
	}
	outbox.Fail(nil)
	if n := mailWaiting(t, links); n != 1 {
		t.Errorf("after a mail asked for failed, the loop sent %d mails of the version; want its own", n)
	}
	if got, err := links.MailOf(ctx, inv); err != nil || got != confirmation.MailSent {
		t.Errorf("the version's mail: %q, %v; want sent", got, err)
	}

	outbox.Fail(errMailDown)
	lim := confirmation.DefaultCodeLimits
	for range lim.RequestMailsPer15Min + 1 {
		if _, err := links.SendLink(ctx, tok); codeOf(err) != "mail_failed" {
			t.Fatalf("a link with the mail server down: %v, want mail_failed", err)
		}
		if _, err := links.SendCode(ctx, tok); codeOf(err) != "mail_failed" {
			t.Fatalf("a code with the mail server down: %v, want mail_failed", err)
		}
	}
	outbox.Fail(nil)
	for i := range lim.RequestMailsPer15Min {
		if _, err := links.SendLink(ctx, tok); err != nil {
			t.Errorf("mail %d asked for once the server is back: %v; failed mails count against the limits", i+1, err)
		}
	}
}

// gatedMail is a mail server whose Send, once gated, waits until the
// gate opens (or its context ends); every mail it takes is also put on
// sent.
type gatedMail struct {
	mail.Memory
	mu   sync.Mutex
	gate chan struct{}
	sent chan mail.Message
}

func (g *gatedMail) Send(ctx context.Context, m mail.Message) error {
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := g.Memory.Send(ctx, m); err != nil {
		return err
	}
	g.sent <- m
	return nil
}

// TestARequoteHandsItsMailToTheOutbox: a confirmation that re-quotes
// returns at once while the mail server is stalled — it does not send the
// fresh quote's mail itself — and wakes the console's mail loop, which
// sends it (the loop's interval is an hour: only the wake brings it). The
// old mail's link meanwhile says the mail is on its way.
func TestARequoteHandsItsMailToTheOutbox(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	links, cp, now, _ := setupWithMail(t)
	outbox := &gatedMail{sent: make(chan mail.Message, 16)}
	c := confirmation.New(storeOf(links), cp, registryOf(links), confirmation.Config{Mail: outbox, PublicBase: "https://console.test",
		Log: slog.New(slog.DiscardHandler)}, func() time.Time { return *now })
	inv, link := pendingFor(t, c, cp, *now, jordan, "issue_refund", jordanRefund)
	if n := mailWaiting(t, c); n != 1 {
		t.Fatalf("the request's own mail: %d sent", n)
	}
	spent, err := c.SpendMailLink(ctx, mailLinkIn.FindStringSubmatch((<-outbox.sent).Body)[1])
	if err != nil {
		t.Fatal(err)
	}
	// Another mail's link, unspent: the one that later says what changed
	// (a spent one says only that it was used).
	if _, err := c.SendLink(ctx, link); err != nil {
		t.Fatal(err)
	}
	token := mailLinkIn.FindStringSubmatch((<-outbox.sent).Body)[1]

	// The loop's first pass mails another request; then it waits for an
	// hour, or to be woken.
	pendingFor(t, c, cp, *now, hannah, "reinstate_subscription", hannahReinstate)
	go c.RunMailWaiting(ctx, time.Hour)
	if m := <-outbox.sent; m.To != hannah {
		t.Fatalf("the loop's first pass mailed %s", m.To)
	}

	changeTheOrder(t, links, inv)
	outbox.mu.Lock()
	outbox.gate = make(chan struct{})
	outbox.mu.Unlock()
	digest, err := consent.QuoteDigest(inv.QuoteJSON)
	if err != nil {
		t.Fatal(err)
	}
	decided := make(chan controlplane.CustomerDecided, 1)
	go func() {
		out, err := c.Decide(ctx, confirmation.ProvedOn(spent.Opened, confirmation.ProofLink), controlplane.CustomerDecision{
			InvocationID: inv.ID, Verb: controlplane.CustomerConfirm, QuoteVersion: inv.Version, QuoteDigest: digest})
		if err != nil {
			t.Error(err)
		}
		decided <- out
	}()
	var out controlplane.CustomerDecided
	select {
	case out = <-decided:
	case <-time.After(10 * time.Second):
		t.Fatal("the confirmation that re-quoted waited on the stalled mail server")
	}
	if !out.Requoted {
		t.Fatalf("the confirmation did not re-quote: %+v", out.Invocation.State)
	}
	if _, err := c.OpenMailLink(ctx, token); !isMail(err, confirmation.MailChanged) {
		t.Errorf("the old mail's link: %v, want changed", err)
	} else if me, _ := confirmation.AsMailLinkError(err); me.NowMail != confirmation.MailQueued {
		t.Errorf("the old mail's link says the fresh quote's mail is %q, want queued", me.NowMail)
	}
	outbox.mu.Lock()
	close(outbox.gate)
	outbox.mu.Unlock()
	select {
	case m := <-outbox.sent:
		if m.To != jordan || !strings.Contains(m.Body, "The details of this request changed") {
			t.Errorf("the woken loop mailed %s:\n%s", m.To, m.Body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the fresh quote's mail was not sent: the re-quote did not wake the loop")
	}
}

// changeTheOrder refunds inv's order in the shop behind the console's
// back, so confirming inv finds the target changed.
func changeTheOrder(t *testing.T, links *confirmation.Service, inv controlplane.Invocation) {
	t.Helper()
	shop, _ := shops.Load(links)
	body, _ := json.Marshal(map[string]any{"order_id": inv.Target.ID, "amount_cents": 500, "reason": "goodwill, in another tab"})
	req, _ := http.NewRequest(http.MethodPost, shop.([2]string)[0]+"/refunds", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+shop.([2]string)[1])
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}
