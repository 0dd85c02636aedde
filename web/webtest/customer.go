package webtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/locale"
)

// ShopName is the demo shop's name to its customers.
const ShopName = "Harbour & Pine"

// ProposeAny proposes as the test assistant and returns the invocation in
// whatever state it was routed to.
func (b *Stack) ProposeAny(t *testing.T, task controlplane.Task, action string, args map[string]any) controlplane.Invocation {
	t.Helper()
	raw, _ := json.Marshal(args)
	inv, err := b.Control.Propose(context.Background(), controlplane.Proposal{TaskID: task.ID, System: "shop", Action: action, Args: raw,
		Actor: controlplane.AssistantActor("asst_test", "Test assistant")})
	if err != nil {
		t.Fatalf("propose %s: %v", action, err)
	}
	return inv
}

// Squash keeps a page's text readable in a failure message.
func Squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// CustomerAccount makes a console account for the customer whose e-mail is
// ref.
func (b *Stack) CustomerAccount(t *testing.T, ref string) User {
	t.Helper()
	const pw = "correct horse customer"
	u, err := b.Accounts.Create(context.Background(), accounts.NewUser{Email: ref, Name: "Customer", Role: accounts.Customer, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	return User{User: u, Password: pw}
}

// Jordan is the seeded shop's demo customer.
const Jordan = "customer@demo.countersign.test"

// JordanAddress is the shipping address the tests change Jordan Lee's to.
var JordanAddress = map[string]any{"name": "Jordan Lee", "line1": "1 Harbour Way", "city": "Oakland", "postal_code": "94607", "country": "US"}

// CustomerActions are the actions put on stage 4 in these tests.
var CustomerActions = []string{"cancel_subscription", "reinstate_subscription", "issue_refund", "resend_receipt",
	"update_product_description", "change_shipping_address"}

// StageForCustomer has the stack's manager put actions of the shop on
// stage 4 (the customer confirms) with a 30-minute confirmation window, as
// on the policies page; an action there already is left alone.
func (b *Stack) StageForCustomer(t *testing.T, actions ...string) {
	t.Helper()
	ctx := context.Background()
	m := b.Users[accounts.Manager]
	manager := controlplane.UserActor(m.ID, string(accounts.Manager), m.Name)
	for _, a := range actions {
		p, err := b.Control.Policy(ctx, "shop", a)
		if err != nil {
			t.Fatal(err)
		}
		if p.Stage == controlplane.StageAssisted && p.ConfirmationWindow == 30*time.Minute {
			continue
		}
		p.Stage, p.ConfirmationWindow = controlplane.StageAssisted, 30*time.Minute
		if _, err := b.Control.ChangePolicy(ctx, manager, p, p.Version, "customers confirm in this test"); err != nil {
			t.Fatal(err)
		}
	}
}

// CustomerTask opens a task of the test assistant for customerRef that
// allows CustomerActions.
func (b *Stack) CustomerTask(t *testing.T, customerRef string) controlplane.Task {
	t.Helper()
	task, err := b.Control.CreateTask(context.Background(), controlplane.AssistantActor("asst_test", "Test assistant"), controlplane.NewTask{
		CustomerRef: customerRef, ConversationID: fmt.Sprintf("conv-%d", time.Now().UnixNano()), AllowedActions: CustomerActions,
		WriteBudget: 10, InflightLimit: 2, RatePerMinute: 100, ExpiresAt: b.Clock.Now().Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// ProposeFor proposes action in task as the test assistant and fails the
// test unless the request waits for the customer's confirmation.
func (b *Stack) ProposeFor(t *testing.T, task controlplane.Task, action string, args map[string]any, summary string) controlplane.Invocation {
	t.Helper()
	raw, _ := json.Marshal(args)
	inv, err := b.Control.Propose(context.Background(), controlplane.Proposal{TaskID: task.ID, System: "shop", Action: action, Args: raw,
		Summary: summary, Actor: controlplane.AssistantActor("asst_test", "Test assistant")})
	if err != nil {
		t.Fatalf("propose %s: %v", action, err)
	}
	if inv.State != controlplane.AwaitingConfirmation {
		t.Fatalf("propose %s: %s, want awaiting confirmation", action, inv.State)
	}
	return inv
}

// Link is the confirmation link of inv for customerRef.
func (b *Stack) Link(t *testing.T, inv controlplane.Invocation, customerRef string) string {
	t.Helper()
	path, err := b.Links.Link(context.Background(), inv, customerRef)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// PendingRefund proposes a $42.10 refund of Jordan's damaged walnut lamp
// and returns it with its link.
func (b *Stack) PendingRefund(t *testing.T) (controlplane.Invocation, string) {
	t.Helper()
	inv := b.ProposeFor(t, b.CustomerTask(t, Jordan), "issue_refund",
		map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}, "Refund $42.10 for the lamp.")
	return inv, b.Link(t, inv, Jordan)
}

// ShopEffects returns the shop's ledger, optionally for one request id.
func (b *Stack) ShopEffects(t *testing.T, requestID string) []demoshop.LedgerEntry {
	t.Helper()
	u := b.ShopURL + "/_ledger"
	if requestID != "" {
		u += "?request_id=" + url.QueryEscape(requestID)
	}
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer "+b.Shop.Token())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out []demoshop.LedgerEntry
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Open follows a confirmation link and proves the customer the default
// way: it has the request mailed to the contact on file, opens the mail's
// "Review and decide" link and presses its button; it returns the request
// page it leads to.
func (c *Client) Open(link string) Response {
	c.T.Helper()
	res := c.Get(link)
	if res.StatusCode != http.StatusOK || res.Doc(c.T).Find(`[data-testid="send-link-form"]`).Length() != 1 {
		c.T.Fatalf("open %s: %d without the form to mail a link\n%s", link, res.StatusCode, res.Text)
	}
	return c.SpendMailLink(c.MailLink(link, res))
}

// OpenWithCode follows a confirmation link of a system with typed codes
// turned on, proves the customer with the code e-mailed to the contact on
// file, and returns the request page it leads to.
func (c *Client) OpenWithCode(link string) Response {
	c.T.Helper()
	res := c.Get(link)
	if res.StatusCode != http.StatusOK || res.Doc(c.T).Find(`[data-testid="send-code-form"]`).Length() != 1 {
		c.T.Fatalf("open %s: %d without the form to send a code\n%s", link, res.StatusCode, res.Text)
	}
	return c.Prove(link, c.SendCode(link, res))
}

// MailLink asks the link page to mail the request to the contact on file
// and returns the path of the mail's link ("/m/…"), read from the mail.
func (c *Client) MailLink(link string, page Response) string {
	c.T.Helper()
	tok, _ := page.Doc(c.T).Find(`[data-testid="send-link-form"] input[name="_csrf"]`).Attr("value")
	before := len(c.Stack.Mail.Sent())
	if res := c.Post(link+"/mail", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		c.T.Fatalf("mail a link: %d, want 303\n%s", res.StatusCode, res.Text)
	}
	sent := c.Stack.Mail.Sent()
	if len(sent) != before+1 {
		c.T.Fatalf("%d mails sent, want 1", len(sent)-before)
	}
	path := MailLinkIn.FindString(sent[len(sent)-1].Body)
	if path == "" {
		c.T.Fatalf("no link in the mail:\n%s", sent[len(sent)-1].Body)
	}
	return path
}

// MailLinkIn finds a mail link's path in a message.
var MailLinkIn = regexp.MustCompile(`/m/[A-Za-z0-9_-]{43}`)

// SpendMailLink opens a mail link's page and presses its button, as the
// customer does in their browser, and follows it to the request page.
func (c *Client) SpendMailLink(path string) Response {
	c.T.Helper()
	res := c.TrySpend(path)
	to := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(to, "/requests/") {
		c.T.Fatalf("spend the mail link: %d to %q, want 303 to the request\n%s", res.StatusCode, to, res.Text)
	}
	return c.Get(to)
}

// TrySpend opens a mail link's page and posts its button, returning the
// answer to the post (without following it).
func (c *Client) TrySpend(path string) Response {
	c.T.Helper()
	page := c.Get(path)
	tok, _ := page.Doc(c.T).Find(`[data-testid="mail-link-form"] input[name="_csrf"]`).Attr("value")
	if tok == "" {
		c.T.Fatalf("no button on the mail link's page %s (status %d)\n%s", path, page.StatusCode, page.Text)
	}
	return c.Post(path, url.Values{"_csrf": {tok}})
}

// SendCode asks the link page for a code and returns it, read from the mail
// sent to the customer's contact on file.
func (c *Client) SendCode(link string, page Response) string {
	c.T.Helper()
	tok, _ := page.Doc(c.T).Find(`[data-testid="send-code-form"] input[name="_csrf"]`).Attr("value")
	before := len(c.Stack.Mail.Sent())
	if res := c.Post(link+"/code", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		c.T.Fatalf("send code: %d, want 303\n%s", res.StatusCode, res.Text)
	}
	sent := c.Stack.Mail.Sent()
	if len(sent) != before+1 {
		c.T.Fatalf("%d mails sent, want 1", len(sent)-before)
	}
	code := CodeIn.FindString(sent[len(sent)-1].Body)
	if code == "" {
		c.T.Fatalf("no code in the mail:\n%s", sent[len(sent)-1].Body)
	}
	return code
}

// CodeIn finds the six-digit code in a message (after "Your code is",
// in any shipped language: the quote above it has numbers of its own,
// an order's reference).
var CodeIn codeFinder

type codeFinder struct{}

// codeAfter matches the code mail's sentence with its code (the message
// mail.code.is) in every shipped language, the code isolated or not.
var codeAfter = func() *regexp.Regexp {
	var before []string
	for _, tag := range locale.Supported() {
		s, _, _ := strings.Cut(locale.Shipped().For(tag).T("mail.code.is", locale.Params{"Code": "\x00"}), "\x00")
		before = append(before, regexp.QuoteMeta(s))
	}
	return regexp.MustCompile(`(?:` + strings.Join(before, "|") + `)\x{2068}?(\d{6})\b`)
}()

// FindString returns the code in s, or "".
func (codeFinder) FindString(s string) string {
	if m := codeAfter.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// Prove enters code on the link page and follows it to the request page.
func (c *Client) Prove(link, code string) Response {
	c.T.Helper()
	res := c.TryCode(link, code)
	to := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(to, "/requests/") {
		c.T.Fatalf("verify code: %d to %q, want 303 to the request\n%s", res.StatusCode, to, res.Text)
	}
	return c.Get(to)
}

// TryCode posts code on the link page's code form.
func (c *Client) TryCode(link, code string) Response {
	c.T.Helper()
	page := c.Get(link)
	tok, _ := page.Doc(c.T).Find(`[data-testid="code-form"] input[name="_csrf"]`).Attr("value")
	if tok == "" {
		c.T.Fatalf("no code form on %s (status %d)\n%s", link, page.StatusCode, page.Text)
	}
	return c.Post(link+"/verify", url.Values{"_csrf": {tok}, "code": {code}})
}

// PageCSRF is the CSRF token of the request page's forms.
func (c *Client) PageCSRF(res Response) string {
	c.T.Helper()
	tok, _ := res.Doc(c.T).Find(`[data-testid="request"] input[name="_csrf"]`).Attr("value")
	if tok == "" {
		c.T.Fatalf("no CSRF token on the request page (status %d)", res.StatusCode)
	}
	return tok
}

// TextByTestID is the trimmed text of the first element of the page marked
// data-testid=testid.
func TextByTestID(res Response, t *testing.T, testid string) string {
	t.Helper()
	return strings.TrimSpace(res.Doc(t).Find(`[data-testid="` + testid + `"]`).First().Text())
}
