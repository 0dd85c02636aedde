package confirmation_test

import (
	"bytes"
	"context"
	"encoding/json"
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
	"countersign/store"
)

// console is another console instance over the database, the shop and
// the clock of links, mailing into outbox with proofs (nil: setup's) and
// limits (zero: the defaults), logging into log (nil: nowhere).
func console(links *confirmation.Service, cp *controlplane.Service, now *time.Time, outbox *mail.Memory,
	proofs map[string][]confirmation.Proof, limits confirmation.CodeLimits, log *bytes.Buffer) *confirmation.Service {
	if proofs == nil {
		proofs = map[string][]confirmation.Proof{"shop": {confirmation.ProofLink, confirmation.ProofCode, confirmation.ProofAccount}}
	}
	lg := slog.New(slog.DiscardHandler)
	if log != nil {
		lg = slog.New(slog.NewTextHandler(log, nil))
	}
	return confirmation.New(storeOf(links), cp, registryOf(links), confirmation.Config{Mail: outbox, Proofs: proofs, CodeLimits: limits,
		PublicBase: "https://console.test", Log: lg}, func() time.Time { return *now })
}

// mailWaiting runs one pass of the console's customer-mail loop.
func mailWaiting(t *testing.T, links *confirmation.Service) int {
	t.Helper()
	n, err := links.MailWaiting(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestARequestWaitingForItsCustomerIsMailedOnce: a request that starts
// waiting for its customer is mailed, without anyone pressing anything,
// its whole quote and a link that proves the customer for it — once: the
// next passes send nothing more for that version. A request whose
// customer asked for a mail on the page already is not mailed again.
func TestARequestWaitingForItsCustomerIsMailedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, now, outbox := setupWithMail(t)
	inv, _ := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	if n := mailWaiting(t, links); n != 1 || len(outbox.Sent()) != 1 {
		t.Fatalf("first pass: %d sent, %d mails; want one", n, len(outbox.Sent()))
	}
	m := outbox.Sent()[0]
	if m.To != jordan || !strings.Contains(m.Body, inv.Quote.Customer.Title) || !strings.Contains(m.HTML, "Review and decide") {
		t.Errorf("the mail to %s lacks the quote or the button:\n%s", m.To, m.Body)
	}
	for _, l := range inv.Quote.Lines {
		if !strings.Contains(m.Body, l.To) {
			t.Errorf("the mail lacks the line %q", l.To)
		}
	}
	match := mailLinkIn.FindStringSubmatch(m.Body)
	if match == nil {
		t.Fatalf("no link in the mail:\n%s", m.Body)
	}
	*now = now.Add(time.Minute)
	if n := mailWaiting(t, links); n != 0 || len(outbox.Sent()) != 1 {
		t.Fatalf("second pass: %d sent, %d mails; want none more", n, len(outbox.Sent()))
	}
	spent, err := links.SpendMailLink(ctx, match[1])
	if err != nil || spent.InvocationID != inv.ID {
		t.Errorf("the mail's link proves %q, %v; want %s", spent.InvocationID, err, inv.ID)
	}

	_, asked := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	mailedLink(t, links, outbox, asked)
	if n := mailWaiting(t, links); n != 0 || len(outbox.Sent()) != 2 {
		t.Errorf("a request whose customer had a mail sent on the page: %d sent by the loop, %d mails; want none more", n, len(outbox.Sent()))
	}
}

// TestTwoConsolesRacingMailOnce: console instances running the loop at
// the same moment against one database send one mail per request.
func TestTwoConsolesRacingMailOnce(t *testing.T) {
	t.Parallel()
	links, cp, now, outbox := setupWithMail(t)
	a, _ := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	b, _ := pendingFor(t, links, cp, *now, hannah, "reinstate_subscription", hannahReinstate)
	const instances = 8
	consoles := make([]*confirmation.Service, instances)
	for i := range consoles {
		consoles[i] = console(links, cp, now, outbox, nil, confirmation.CodeLimits{}, nil)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, instances)
	for _, c := range consoles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if _, err := c.MailWaiting(context.Background()); err != nil {
				errs <- err
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, m := range outbox.Sent() {
		per[m.To]++
	}
	if len(outbox.Sent()) != 2 || per[jordan] != 1 || per[hannah] != 1 {
		t.Errorf("%d instances racing sent %v (requests %s and %s); want one mail each", instances, per, a.ID, b.ID)
	}
}

// TestASystemWithoutTheMailLinkGetsNoMail: the loop mails only requests
// of systems whose proofs include the mail link, whether the system is
// left out by name or by the default.
func TestASystemWithoutTheMailLinkGetsNoMail(t *testing.T) {
	t.Parallel()
	links, cp, now, _ := setupWithMail(t)
	pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	for _, tc := range []struct {
		name   string
		proofs map[string][]confirmation.Proof
		want   int
	}{
		{"named without the link", map[string][]confirmation.Proof{"*": confirmation.DefaultProofs,
			"shop": {confirmation.ProofCode, confirmation.ProofAccount}}, 0},
		{"the default without the link", map[string][]confirmation.Proof{"*": {confirmation.ProofAccount}}, 0},
		{"the default without, the shop with", map[string][]confirmation.Proof{"*": {confirmation.ProofAccount},
			"shop": {confirmation.ProofLink}}, 1},
	} {
		outbox := &mail.Memory{}
		c := console(links, cp, now, outbox, tc.proofs, confirmation.CodeLimits{}, nil)
		if n := mailWaiting(t, c); n != tc.want || len(outbox.Sent()) != tc.want {
			t.Errorf("%s: %d sent, %d mails; want %d", tc.name, n, len(outbox.Sent()), tc.want)
		}
	}
}

// TestTheLoopsMailsUseNoneOfTheMailsAskedFor: the console's own mail of
// each request version counts against none of the limits on mails people
// ask for: the loop mails every waiting request however many there are,
// and the customer may then still ask for as many mails as the limits
// give, and not one more.
func TestTheLoopsMailsUseNoneOfTheMailsAskedFor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, now, _ := setupWithMail(t)
	outbox := &mail.Memory{}
	c := console(links, cp, now, outbox, nil, confirmation.CodeLimits{MailsPer15Min: 2, MailsPerHour: 10}, nil)
	var toks []string
	for range 3 {
		_, tok := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
		toks = append(toks, tok)
	}
	if n := mailWaiting(t, c); n != 3 || len(outbox.Sent()) != 3 {
		t.Fatalf("three requests waiting: the loop sent %d, %d mails; want three", n, len(outbox.Sent()))
	}
	for i, tok := range toks[:2] {
		if _, err := c.SendLink(ctx, tok); err != nil {
			t.Errorf("the customer's mail %d asked for after the loop's: %v", i+1, err)
		}
	}
	if _, err := c.SendLink(ctx, toks[2]); codeOf(err) != "too_many_mails" {
		t.Errorf("a third mail asked for with two allowed: %v, want too_many_mails", err)
	}
}

// holdingStore is the store, but the first RetireMailLinks — a re-quote
// retiring the old request's links, after its fresh request committed and
// before its mail — first runs beforeRetire.
type holdingStore struct {
	*store.Store
	once         sync.Once
	beforeRetire func()
}

func (h *holdingStore) RetireMailLinks(ctx context.Context, invocationID string, at time.Time) error {
	h.once.Do(h.beforeRetire)
	return h.Store.RetireMailLinks(ctx, invocationID, at)
}

// TestARequoteIsMailedOnceWithTheLoop: when confirming finds the target
// changed, the fresh quote is mailed once, in the same outbox as the
// loop's mails: a pass of the loop landing between the fresh request's
// commit and the re-quote's own mail sends it, and the re-quote then
// sends none; passes after it send none either.
func TestARequoteIsMailedOnceWithTheLoop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	links, cp, now, _ := setupWithMail(t)
	outbox := &mail.Memory{}
	hold := &holdingStore{Store: storeOf(links)}
	c := confirmation.New(hold, cp, registryOf(links), confirmation.Config{Mail: outbox, PublicBase: "https://console.test",
		Log: slog.New(slog.DiscardHandler)}, func() time.Time { return *now })
	loopPasses := 0
	hold.beforeRetire = func() {
		loopPasses++
		if _, err := c.MailWaiting(ctx); err != nil {
			t.Error(err)
		}
	}
	inv, _ := pendingFor(t, c, cp, *now, jordan, "issue_refund", jordanRefund)
	if n := mailWaiting(t, c); n != 1 {
		t.Fatalf("the request's own mail: %d sent", n)
	}
	token := mailLinkIn.FindStringSubmatch(outbox.Sent()[0].Body)[1]
	spent, err := c.SpendMailLink(ctx, token)
	if err != nil {
		t.Fatal(err)
	}

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
	digest, err := consent.QuoteDigest(inv.QuoteJSON)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Decide(ctx, confirmation.ProvedOn(spent.Opened, confirmation.ProofLink), controlplane.CustomerDecision{
		InvocationID: inv.ID, Verb: controlplane.CustomerConfirm, QuoteVersion: inv.Version, QuoteDigest: digest})
	if err != nil || !out.Requoted || loopPasses != 1 {
		t.Fatalf("confirm of a stale quote: requoted %v, %v (the loop held in it %d times)", out.Requoted, err, loopPasses)
	}
	*now = now.Add(time.Minute)
	mailWaiting(t, c)
	sent := outbox.Sent()
	if len(sent) != 2 || !strings.Contains(sent[1].Body, "The details of this request changed") {
		t.Fatalf("%d mails in all; want the request's and one with the fresh quote", len(sent))
	}
	fresh, err := c.SpendMailLink(ctx, mailLinkIn.FindStringSubmatch(sent[1].Body)[1])
	if err != nil || fresh.InvocationID != out.Invocation.ID {
		t.Errorf("the fresh mail's link proves %q, %v; want %s", fresh.InvocationID, err, out.Invocation.ID)
	}
}
