package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demo"
	"countersign/internal/demoshop"
)

// LockedBuffer is a log sink safe for the server's goroutines.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p under the lock.
func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// HandoffPath is the console's address of hand-off id, or of one of its
// actions when action is not empty.
func HandoffPath(id int64, action string) string {
	p := fmt.Sprintf("/handoffs/%d", id)
	if action != "" {
		p += "/" + action
	}
	return p
}

// RefreshMetrics folds what was reported into the roll-ups, as the
// console's refresher does every -metrics-refresh.
func (b *Stack) RefreshMetrics(t *testing.T) {
	t.Helper()
	if _, err := b.Store.RefreshMetrics(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Report posts one conversation event with the key and wants 201.
func (b *Stack) Report(t *testing.T, key, conversation, intent, mode string) {
	t.Helper()
	b.Call(t, key, http.MethodPost, "/api/v1/conversations/"+url.PathEscape(conversation)+"/events",
		map[string]any{"intent": intent, "mode": mode}).Want(t, http.StatusCreated)
}

// LoadHistory bulk-loads synthetic history ending at the stack's clock and
// folds it into the roll-ups.
func LoadHistory(t *testing.T, b *Stack, invocations, conversations int) {
	t.Helper()
	ctx := context.Background()
	err := demo.LoadHistory(ctx, b.Store, demo.HistorySpec{Prefix: "h", Invocations: invocations, Conversations: conversations,
		Days: 40, End: b.Clock.Now(), AssistantID: "asst_hist"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.RefreshMetrics(ctx); err != nil {
		t.Fatal(err)
	}
}

// ShownMetrics reads each metric card's number and detail from the page.
func ShownMetrics(t *testing.T, doc *goquery.Document) map[string][2]string {
	t.Helper()
	out := map[string][2]string{}
	doc.Find(`section.metric[data-testid^="metric-"]`).Each(func(_ int, s *goquery.Selection) {
		id := strings.TrimPrefix(s.AttrOr("data-testid", ""), "metric-")
		if id == "unverified" {
			return
		}
		out[id] = [2]string{strings.TrimSpace(s.Find(`[data-testid="metric-value"]`).Text()), strings.TrimSpace(s.Find(`[data-testid="metric-detail"]`).Text())}
	})
	return out
}

// PolicyForm is the edit form of issue_refund as a manager would post it.
func PolicyForm(b *Stack, csrf, version, stage, reason, intent string) url.Values {
	return url.Values{"owner": {fmt.Sprint(b.Users[accounts.Manager].ID)}, "_csrf": {csrf}, "version": {version}, "stage": {stage}, "enabled": {"on"}, "currency": {"USD"}, "auto_max": {"25.00"},
		"approval_above": {"200.00"}, "second_approver_above": {"500.00"}, "approval_window": {"24"}, "confirmation_window": {"30"},
		"review_on": {"2026-07-01"}, "approvers": {"agent"}, "reason": {reason}, "intent": {intent}}
}

// MarkUnverified stands in for a dispatch whose outcome was lost: the
// request is approved, then recorded as unverified.
func MarkUnverified(t *testing.T, b *Stack, id string) {
	t.Helper()
	_, err := b.Store.Pool().Exec(context.Background(),
		`UPDATE invocations SET state = 'unverified', version = version + 1, updated_at = $2 WHERE id = $1`, id, b.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
}

// Shopper is a customer of the demo shop with a delivered order
// ($42.00 lamp, $8.00 bulb, $6.50 shipping) and a task allowing refunds.
type Shopper struct {
	Stack    *Stack
	Customer demoshop.Customer
	Order    demoshop.Order
	Task     controlplane.Task
}

// NewShopper adds a customer to the stack's shop (WithShop) with a
// delivered order, and an open task of the test assistant for them.
func NewShopper(t *testing.T, b *Stack) *Shopper {
	t.Helper()
	ctx := context.Background()
	cust, err := b.Shop.CreateCustomer(ctx, demoshop.CustomerFixture{Name: "Ada Buyer", Email: fmt.Sprintf("ada-%d@example.test", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	f := &Shopper{Stack: b, Customer: cust}
	f.Order = f.NewOrder(t)
	f.Task, err = b.Control.CreateTask(ctx, controlplane.AssistantActor("asst_test", "Test assistant"), controlplane.NewTask{
		CustomerRef: cust.Email, ConversationID: fmt.Sprintf("conv-%d", time.Now().UnixNano()),
		AllowedActions: []string{"issue_refund", "cancel_subscription", "update_product_description"}, WriteBudget: 50, InflightLimit: 2, RatePerMinute: 600,
		ExpiresAt: b.Now().Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// NewOrder adds a delivered order (a walnut lamp and a bulb) of the
// shopper's.
func (f *Shopper) NewOrder(t *testing.T) demoshop.Order {
	t.Helper()
	at := f.Stack.Now().AddDate(0, 0, -4)
	o, err := f.Stack.Shop.CreateOrder(context.Background(), demoshop.OrderFixture{CustomerID: f.Customer.ID, DeliveredAt: &at, ShippingCents: 650,
		Items: []demoshop.ItemFixture{{Name: "Walnut lamp", UnitPriceCents: 4200, Quantity: 1}, {Name: "Bulb", UnitPriceCents: 800, Quantity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// Refund proposes a refund of the order as the assistant; it lands in the
// approval queue.
func (f *Shopper) Refund(t *testing.T, order demoshop.Order, cents int64) controlplane.Invocation {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"order_id": order.ID, "amount_cents": cents, "reason_code": "damaged"})
	inv, err := f.Stack.Control.Propose(context.Background(), controlplane.Proposal{TaskID: f.Task.ID, Action: "issue_refund", Args: raw,
		Summary: fmt.Sprintf("Refund $%d.%02d for the damaged lamp", cents/100, cents%100), Actor: controlplane.AssistantActor("asst_test", "Test assistant")})
	if err != nil {
		t.Fatal(err)
	}
	if inv.State != controlplane.AwaitingApproval {
		t.Fatalf("proposal is %s, want awaiting approval", inv.State)
	}
	return inv
}

// Describe proposes a new description of a new product (reversible, no
// amount: low-risk).
func (f *Shopper) Describe(t *testing.T, text string) controlplane.Invocation {
	t.Helper()
	p, err := f.Stack.Shop.CreateProduct(context.Background(), demoshop.ProductFixture{Name: "Desk lamp", Description: "A lamp.", PriceCents: 3900, Stock: 5})
	if err != nil {
		t.Fatal(err)
	}
	return f.DescribeProduct(t, p.ID, text)
}

// DescribeProduct proposes a new description of productID, as the
// assistant in the fixture's task; it must wait in the queue.
func (f *Shopper) DescribeProduct(t *testing.T, productID, text string) controlplane.Invocation {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"product_id": productID, "description": text})
	inv, err := f.Stack.Control.Propose(context.Background(), controlplane.Proposal{TaskID: f.Task.ID, Action: "update_product_description", Args: raw,
		Actor: controlplane.AssistantActor("asst_test", "Test assistant")})
	if err != nil {
		t.Fatal(err)
	}
	if inv.State != controlplane.AwaitingApproval {
		t.Fatalf("proposal is %s, want awaiting approval", inv.State)
	}
	return inv
}

// Invocation reads an invocation from the control plane.
func (b *Stack) Invocation(t *testing.T, id string) controlplane.Invocation {
	t.Helper()
	inv, err := b.Control.Invocation(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// CardForm reads a form of the card page: its action's hidden fields.
func CardForm(t *testing.T, res Response, testid string) url.Values {
	t.Helper()
	form := res.Doc(t).Find(`[data-testid="` + testid + `"]`)
	if form.Length() == 0 {
		t.Fatalf("no form %s on the page (status %d)", testid, res.StatusCode)
	}
	v := url.Values{}
	form.Find(`input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		n, _ := s.Attr("name")
		val, _ := s.Attr("value")
		v.Set(n, val)
	})
	return v
}

// InvocationState reads the state of an invocation.
func (b *Stack) InvocationState(t *testing.T, id string) controlplane.State {
	t.Helper()
	inv, err := b.Control.Invocation(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return inv.State
}

// ErrorSummary checks a page that refused a form: one error summary at
// the top of the main content (role=alert, focusable, focused on load by
// autofocus), headed "There is a problem", whose links point at fields
// that are on the page, marked invalid and described by their message.
// It returns the links' targets in order.
func ErrorSummary(t *testing.T, doc *goquery.Document) []string {
	t.Helper()
	s := doc.Find(`main [data-testid="error-summary"]`)
	if s.Length() != 1 {
		t.Fatalf("%d error summaries on the page, want 1", s.Length())
	}
	if first := doc.Find(`main`).Children().Not(`.flash`).First(); first.AttrOr("data-testid", "") != "error-summary" {
		t.Errorf("the error summary is not at the top of the main content: first is <%s class=%q>", goquery.NodeName(first), first.AttrOr("class", ""))
	}
	for attr, want := range map[string]string{"role": "alert", "tabindex": "-1"} {
		if got := s.AttrOr(attr, ""); got != want {
			t.Errorf("error summary %s=%q, want %q", attr, got, want)
		}
	}
	if _, ok := s.Attr("autofocus"); !ok {
		t.Errorf("the error summary takes no focus on load (no autofocus)")
	}
	if h := strings.TrimSpace(s.Find("h2").Text()); h != "There is a problem" {
		t.Errorf("error summary heading %q", h)
	}
	var ids []string
	s.Find(`a[data-testid="error-summary-link"]`).Each(func(_ int, a *goquery.Selection) {
		id := strings.TrimPrefix(a.AttrOr("href", ""), "#")
		ids = append(ids, id)
		field := doc.Find(`[id="` + id + `"]`)
		if field.Length() != 1 {
			t.Errorf("error summary links to #%s, which is not on the page once", id)
			return
		}
		if strings.TrimSpace(a.Text()) == "" {
			t.Errorf("the link to #%s says nothing", id)
		}
		if field.AttrOr("aria-invalid", "") != "true" {
			t.Errorf("#%s is not marked aria-invalid", id)
		}
	})
	if len(ids) == 0 {
		t.Errorf("the error summary lists nothing")
	}
	return ids
}

// AddressChange proposes, as the assistant in a task of its own, a new
// shipping address for a new order of the fixture's customer; the policy
// is set to stage 3, so it waits in the queue.
func (f *Shopper) AddressChange(t *testing.T) controlplane.Invocation {
	t.Helper()
	b, ctx := f.Stack, context.Background()
	if _, err := b.Store.Pool().Exec(ctx, `UPDATE policies SET stage = 3, version = version + 1 WHERE action = 'change_shipping_address'`); err != nil {
		t.Fatal(err)
	}
	task, err := b.Control.CreateTask(ctx, controlplane.AssistantActor("asst_test", "Test assistant"), controlplane.NewTask{
		CustomerRef: f.Customer.Email, ConversationID: fmt.Sprintf("conv-addr-%d", time.Now().UnixNano()),
		AllowedActions: []string{"change_shipping_address"}, WriteBudget: 5, InflightLimit: 1, RatePerMinute: 60,
		ExpiresAt: b.Clock.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	order, err := b.Shop.CreateOrder(ctx, demoshop.OrderFixture{CustomerID: f.Customer.ID,
		Items: []demoshop.ItemFixture{{Name: "Walnut lamp", UnitPriceCents: 4200, Quantity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"order_id": order.ID, "address": map[string]any{"name": "Ada Buyer",
		"line1": "1 Main St", "city": "Springfield", "postal_code": "12345", "country": "US"}})
	inv, err := b.Control.Propose(ctx, controlplane.Proposal{TaskID: task.ID, Action: "change_shipping_address", Args: raw,
		Actor: controlplane.AssistantActor("asst_test", "Test assistant")})
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// InsertHandoff records a hand-off as the assistant would, at a time.
func InsertHandoff(t *testing.T, b *Stack, conversation, taskID, intent, data string, at time.Time) int64 {
	t.Helper()
	ctx := context.Background()
	if _, err := b.Store.Pool().Exec(ctx, `INSERT INTO assistants (id, name, created_at) VALUES ('asst_h', 'Helper', now()) ON CONFLICT DO NOTHING`); err != nil {
		t.Fatal(err)
	}
	var task any
	if taskID != "" {
		task = taskID
	}
	var id int64
	if err := b.Store.Pool().QueryRow(ctx, `INSERT INTO conversation_events (conversation_id, assistant_id, task_id, intent, mode, at, data)
		VALUES ($1, 'asst_h', $2, $3, 'handed_off', $4, $5) RETURNING id`, conversation, task, intent, at, data).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TimelineRows reads the task page's timeline: each event's kind and the
// sentence it reads as.
func TimelineRows(t *testing.T, c *Client, taskID string) (kinds, lines []string) {
	t.Helper()
	c.Get("/tasks/" + taskID).Doc(t).Find(`[data-testid="timeline"] [data-testid="event"]`).Each(func(_ int, s *goquery.Selection) {
		kinds = append(kinds, s.AttrOr("data-event", ""))
		lines = append(lines, Squash(s.Text()))
	})
	return kinds, lines
}

// ApproveAndDispatch approves an invocation as the stack's agent and
// dispatches it (Dispatch, the production door for one invocation); the
// caller reads the outcome on the invocation.
func (f *Shopper) ApproveAndDispatch(t *testing.T, inv controlplane.Invocation) {
	t.Helper()
	ctx := context.Background()
	agent := f.Stack.Users[accounts.Agent]
	if _, err := f.Stack.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: controlplane.UserActor(agent.ID, "agent", agent.Name),
		InvocationID: inv.ID, Verb: controlplane.StaffApprove, ArgsHash: f.Stack.Invocation(t, inv.ID).ArgsHash}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stack.Control.Dispatch(ctx, inv.ID); err != nil {
		t.Fatal(err)
	}
}

// Itoa64 writes n in decimal.
func Itoa64(n int64) string { return strconv.FormatInt(n, 10) }
