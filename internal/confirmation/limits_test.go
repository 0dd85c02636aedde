package confirmation_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/text/language"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/mail"
)

// pendingFor puts action on stage 4 (once) and proposes it for customer in
// a task of its own; it returns the invocation and its link's token.
func pendingFor(t *testing.T, links *confirmation.Service, cp *controlplane.Service, now time.Time, customer, action, args string) (controlplane.Invocation, string) {
	t.Helper()
	ctx := context.Background()
	policy, err := cp.Policy(ctx, "shop", action)
	if err != nil {
		t.Fatal(err)
	}
	if policy.Stage != controlplane.StageAssisted {
		policy.Stage, policy.ConfirmationWindow = controlplane.StageAssisted, 24*time.Hour
		if _, err := cp.ChangePolicy(ctx, controlplane.UserActor(1, "manager", "Priya Raman"), policy, policy.Version, "customers confirm"); err != nil {
			t.Fatal(err)
		}
	}
	task, err := cp.CreateTask(ctx, controlplane.AssistantActor("bot", "Bot"), controlplane.NewTask{CustomerRef: customer,
		ConversationID: fmt.Sprintf("c-%s-%d", customer, time.Now().UnixNano()), Systems: []string{"shop"}, AllowedActions: []string{action},
		WriteBudget: 10, InflightLimit: 2, RatePerMinute: 10, ExpiresAt: now.Add(7 * 24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := cp.Propose(ctx, controlplane.Proposal{TaskID: task.ID, System: "shop", Action: action,
		Args: []byte(args), Summary: action, Actor: controlplane.AssistantActor("bot", "Bot")})
	if err != nil || inv.State != controlplane.AwaitingConfirmation {
		t.Fatalf("propose %s: %s, %v", action, inv.State, err)
	}
	path, err := links.Link(ctx, inv, customer)
	if err != nil {
		t.Fatal(err)
	}
	return inv, strings.TrimPrefix(path, confirmation.PathPrefix)
}

const (
	hannah          = "hannah.weiss@example.de"
	jordanRefund    = `{"order_id":"walnut lamp","amount_cents":4210,"reason_code":"damaged"}`
	hannahReinstate = `{"subscription_id":"my Pro plan"}`
)

// lastCode reads the code from the newest mail to addr.
func lastCode(t *testing.T, outbox *mail.Memory, addr string) string {
	t.Helper()
	sent := outbox.Sent()
	for i := len(sent) - 1; i >= 0; i-- {
		if strings.EqualFold(sent[i].To, addr) {
			body := sent[i].Body
			at := strings.Index(body, "Your code is ")
			return body[at+len("Your code is ") : at+len("Your code is ")+confirmation.CodeDigits]
		}
	}
	t.Fatalf("no mail to %s", addr)
	return ""
}

func wrongFor(code string) string {
	if code == "000000" {
		return "111111"
	}
	return "000000"
}

// guess tries code on each token from n goroutines at once and counts the
// answers: compared and wrong (422), refused uncompared (429), right.
func guess(t *testing.T, links *confirmation.Service, n int, tokenOf func(i int) string, code string) (wrong, refused, right int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := links.CheckCode(context.Background(), tokenOf(i), code)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				right++
			case apperr.Is(err, apperr.Invalid):
				wrong++
			case apperr.Is(err, apperr.LimitReached):
				refused++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	return wrong, refused, right
}

// TestCodeGuessesAreBoundedPerCustomerUnderARace: links cost nothing, so
// the bound is the customer's, across all their links. 64 concurrent wrong
// guesses spread over four of the customer's links get exactly
// MissesPerHour compared; after that the right code is not compared
// either, on any of their links, until the window passes.
func TestCodeGuessesAreBoundedPerCustomerUnderARace(t *testing.T) {
	t.Parallel()
	links, cp, now, outbox := setupWithMail(t)
	ctx := context.Background()
	var tokens []string
	for range 4 {
		_, tok := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
		if _, err := links.SendCode(ctx, tok); err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, tok)
	}
	code := lastCode(t, outbox, jordan)
	lim := confirmation.DefaultCodeLimits
	wrong, refused, right := guess(t, links, 64, func(i int) string { return tokens[i%len(tokens)] }, wrongFor(code))
	if wrong != lim.MissesPerHour || refused != 64-lim.MissesPerHour || right != 0 {
		t.Fatalf("64 concurrent wrong guesses: %d compared, %d refused, %d right; want %d, %d, 0",
			wrong, refused, right, lim.MissesPerHour, 64-lim.MissesPerHour)
	}
	if _, err := links.CheckCode(ctx, tokens[len(tokens)-1], code); !apperr.Is(err, apperr.LimitReached) {
		t.Errorf("the right code after the bound: %v, want refused uncompared", err)
	}
	// The window slides: an hour later the customer's own code (a new one)
	// works again.
	*now = now.Add(61 * time.Minute)
	if _, err := links.SendCode(ctx, tokens[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := links.CheckCode(ctx, tokens[0], lastCode(t, outbox, jordan)); err != nil {
		t.Errorf("the right code an hour later: %v", err)
	}
}

// TestCodeGuessesAreBoundedGloballyUnderARace: spraying many customers
// meets a ceiling on everyone's wrong codes together. With the global
// bound below the customers' sum, 64 concurrent guesses over two customers
// get exactly the global bound compared, and then nobody's code is.
func TestCodeGuessesAreBoundedGloballyUnderARace(t *testing.T) {
	t.Parallel()
	lim := confirmation.CodeLimits{MailsPer15Min: 5, MailsPerHour: 10, MissesPerHour: 10, MissesPerDay: 20, GlobalMissesPerHour: 15}
	links, cp, now, outbox := setupWithLimits(t, lim)
	ctx := context.Background()
	_, jt := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	_, ht := pendingFor(t, links, cp, *now, hannah, "reinstate_subscription", hannahReinstate)
	for _, tok := range []string{jt, ht} {
		if _, err := links.SendCode(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	jc, hc := lastCode(t, outbox, jordan), lastCode(t, outbox, hannah)
	guessed := "123456"
	if jc == guessed || hc == guessed {
		guessed = "654321" // a guess neither code is, so every try is wrong
	}
	wrong, refused, right := guess(t, links, 64, func(i int) string { return []string{jt, ht}[i%2] }, guessed)
	if wrong != lim.GlobalMissesPerHour || refused != 64-lim.GlobalMissesPerHour || right != 0 {
		t.Fatalf("64 concurrent wrong guesses over two customers: %d compared, %d refused, %d right; want %d, %d, 0",
			wrong, refused, right, lim.GlobalMissesPerHour, 64-lim.GlobalMissesPerHour)
	}
	for tok, code := range map[string]string{jt: jc, ht: hc} {
		if _, err := links.CheckCode(ctx, tok, code); !apperr.Is(err, apperr.LimitReached) {
			t.Errorf("a right code past the global bound: %v, want refused uncompared", err)
		}
	}
}

// TestCodeMailsAreBoundedPerCustomer: 200 concurrent requests for codes
// over the customer's links send exactly MailsPer15Min mails.
func TestCodeMailsAreBoundedPerCustomer(t *testing.T) {
	t.Parallel()
	links, cp, now, outbox := setupWithMail(t)
	ctx := context.Background()
	_, a := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	_, b := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	var wg sync.WaitGroup
	var mu sync.Mutex
	limited := 0
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := links.SendCode(ctx, []string{a, b}[i%2])
			if apperr.Is(err, apperr.LimitReached) {
				mu.Lock()
				limited++
				mu.Unlock()
			} else if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	lim := confirmation.DefaultCodeLimits
	if n := len(outbox.Sent()); n != lim.MailsPer15Min || limited != 200-lim.MailsPer15Min {
		t.Errorf("200 concurrent code requests: %d mails, %d refused; want %d and %d", n, limited, lim.MailsPer15Min, 200-lim.MailsPer15Min)
	}
	// Every code sent is still live: a later one retired none.
	sent := outbox.Sent()
	first := sent[0]
	at := strings.Index(first.Body, "Your code is ")
	code := first.Body[at+13 : at+13+confirmation.CodeDigits]
	_, errA := links.CheckCode(ctx, a, code)
	_, errB := links.CheckCode(ctx, b, code)
	if errA != nil && errB != nil {
		t.Errorf("the first code after four more: %v / %v, want it still working on its link", errA, errB)
	}
}

// TestCodeIsSentOnlyWhileTheRequestAwaits: a decided request's link sends
// no code (there is nothing to decide), nor does an expired one's.
func TestCodeIsSentOnlyWhileTheRequestAwaits(t *testing.T) {
	t.Parallel()
	links, cp, now, outbox := setupWithMail(t)
	ctx := context.Background()
	inv, tok := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	decline, err := controlplane.CustomerDecision{Actor: controlplane.CustomerActor(jordan, "account"), InvocationID: inv.ID, Verb: controlplane.CustomerDecline}.Showing(inv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cp.CustomerDecide(ctx, decline); err != nil {
		t.Fatal(err)
	}
	_, err = links.SendCode(ctx, tok)
	if e, ok := apperr.As(err); !ok || e.Kind != apperr.IllegalTransition || e.Code != "nothing_to_decide" {
		t.Errorf("a code for a declined request: %v, want nothing_to_decide", err)
	}
	if n := len(outbox.Sent()); n != 0 {
		t.Errorf("%d mails for a declined request", n)
	}
}

// TestCodeMailNamesTheRequestAndWarns: the mail names exactly the request
// the code decides — its title in the customer's words, its short
// reference, the system — says it confirms only that, and that nobody, the
// assistant included, will ask for it.
func TestCodeMailNamesTheRequestAndWarns(t *testing.T) {
	t.Parallel()
	links, cp, now, outbox := setupWithMail(t)
	inv, tok := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	if _, err := links.SendCode(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	m := outbox.Sent()[0]
	if inv.Quote.Customer == nil || inv.Quote.Customer.Title == "" || inv.Quote.Customer.Reference == "" {
		t.Fatalf("the refund's quote has no customer title or reference: %+v", inv.Quote.Customer)
	}
	for _, want := range []string{
		"This code confirms only this request:\n\n    " + inv.Quote.Customer.Title + "\n    " + inv.Quote.Customer.Reference + "\n    at Harbour & Pine\n",
		"Nobody — not our team and not the assistant you are chatting with — will ever ask you for this code. Do not read it out or paste it into a chat.",
	} {
		if !strings.Contains(m.Body, want) {
			t.Errorf("the code mail lacks %q:\n%s", want, m.Body)
		}
	}
	if codeIn(m.Subject) {
		t.Errorf("subject %q carries the code", m.Subject)
	}
	// The shop names itself: a code from an unknown sender looks like
	// phishing. The subject is words, never the target's id.
	if m.FromName != "Harbour & Pine via Countersign" || m.Subject != "Your code to confirm a request with Harbour & Pine" {
		t.Errorf("the code mail comes from %q with subject %q, want the shop's name in both", m.FromName, m.Subject)
	}
	if strings.Contains(m.Subject, inv.Target.ID) || strings.Contains(m.Subject, "ord_") {
		t.Errorf("the subject %q carries a raw id", m.Subject)
	}
	plain := confirmation.CodeMail(locale.Shipped().For(language.English), adapter.Contact{Email: "a@b.example"}, "123456",
		controlplane.Invocation{System: "shop-eu", Quote: adapter.Quote{Title: "Refund $1.00"}}, adapter.Brand{Name: "shop-eu"}, *now)
	if !strings.Contains(plain.Body, "    Refund $1.00\n    at shop-eu\n") {
		t.Errorf("a quote without customer words names it by its title:\n%s", plain.Body)
	}
}

func codeIn(s string) bool {
	for i := 0; i+confirmation.CodeDigits <= len(s); i++ {
		if strings.Trim(s[i:i+confirmation.CodeDigits], "0123456789") == "" {
			return true
		}
	}
	return false
}

// pendingOfAssistant is pendingFor in a task the assistant assistantID
// opened, so a wrong code on its link counts against that assistant too.
func pendingOfAssistant(t *testing.T, links *confirmation.Service, cp *controlplane.Service, now time.Time, assistantID, customer, action, args string) string {
	t.Helper()
	ctx := context.Background()
	if _, tok := pendingFor(t, links, cp, now, customer, action, args); tok == "" {
		t.Fatal("no link") // sets the stage once, as pendingFor does
	}
	actor := controlplane.AssistantActor(assistantID, assistantID)
	task, err := cp.CreateTask(ctx, actor, controlplane.NewTask{CustomerRef: customer, AssistantID: assistantID,
		Vouch:          controlplane.Vouch{Kind: controlplane.VouchAnyCustomer},
		ConversationID: fmt.Sprintf("c-%s-%s-%d", assistantID, customer, time.Now().UnixNano()), Systems: []string{"shop"},
		AllowedActions: []string{action}, WriteBudget: 10, InflightLimit: 2, RatePerMinute: 10, ExpiresAt: now.Add(7 * 24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := cp.Propose(ctx, controlplane.Proposal{TaskID: task.ID, System: "shop", Action: action, Args: []byte(args), Summary: action, Actor: actor})
	if err != nil || inv.State != controlplane.AwaitingConfirmation {
		t.Fatalf("propose %s: %s, %v", action, inv.State, err)
	}
	path, err := links.Link(ctx, inv, customer)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(path, confirmation.PathPrefix)
}

// TestCodeGuessesAreBoundedPerAssistantUnderARace: the links of one
// assistant's tasks share one bound across its customers, so an assistant
// guessing on every link it holds gets AssistantMissesPerHour compared in
// all, and then uses up only its own links' tries: another assistant's
// link to the same customer still takes the right code, as the global
// bound is far away.
func TestCodeGuessesAreBoundedPerAssistantUnderARace(t *testing.T) {
	t.Parallel()
	lim := confirmation.CodeLimits{MailsPer15Min: 5, MailsPerHour: 10, MissesPerHour: 10, MissesPerDay: 20,
		AssistantMissesPerHour: 6, GlobalMissesPerHour: 500}
	links, cp, now, outbox := setupWithLimits(t, lim)
	ctx := context.Background()
	jt := pendingOfAssistant(t, links, cp, *now, "asst_guesser", jordan, "issue_refund", jordanRefund)
	ht := pendingOfAssistant(t, links, cp, *now, "asst_guesser", hannah, "reinstate_subscription", hannahReinstate)
	for _, tok := range []string{jt, ht} {
		if _, err := links.SendCode(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	jc, hc := lastCode(t, outbox, jordan), lastCode(t, outbox, hannah)
	guessed := "123456"
	if jc == guessed || hc == guessed {
		guessed = "654321"
	}
	wrong, refused, right := guess(t, links, 64, func(i int) string { return []string{jt, ht}[i%2] }, guessed)
	if wrong != lim.AssistantMissesPerHour || refused != 64-lim.AssistantMissesPerHour || right != 0 {
		t.Fatalf("64 concurrent wrong guesses on one assistant's links: %d compared, %d refused, %d right; want %d, %d, 0",
			wrong, refused, right, lim.AssistantMissesPerHour, 64-lim.AssistantMissesPerHour)
	}
	if _, err := links.CheckCode(ctx, jt, jc); !apperr.Is(err, apperr.LimitReached) {
		t.Errorf("the right code on the guessing assistant's link: %v, want refused uncompared", err)
	}
	other := pendingOfAssistant(t, links, cp, *now, "asst_other", hannah, "reinstate_subscription", hannahReinstate)
	if _, err := links.SendCode(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, err := links.CheckCode(ctx, other, lastCode(t, outbox, hannah)); err != nil {
		t.Errorf("the right code on another assistant's link to the same customer: %v, want it to work", err)
	}
}
