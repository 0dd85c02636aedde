package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// TestPolicyChangeIsAuditedAndAppliesToLaterProposals: a change needs a
// reason, writes its event, shows a what-if first, refuses a stale
// version, routes proposals made after it, and leaves an invocation
// approved before it to be dispatched.
func TestPolicyChangeIsAuditedAndAppliesToLaterProposals(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	ctx := context.Background()
	cust, err := b.Shop.CreateCustomer(ctx, demoshop.CustomerFixture{Name: "Ada Buyer", Email: fmt.Sprintf("ada-%d@example.test", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	delivered := b.Clock.Now().AddDate(0, 0, -3)
	order := func() demoshop.Order {
		o, err := b.Shop.CreateOrder(ctx, demoshop.OrderFixture{CustomerID: cust.ID, DeliveredAt: &delivered, ShippingCents: 650,
			Items: []demoshop.ItemFixture{{Name: "Walnut lamp", UnitPriceCents: 4200, Quantity: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	assistant := controlplane.AssistantActor("asst_test", "Test assistant")
	task, err := b.Control.CreateTask(ctx, assistant, controlplane.NewTask{CustomerRef: cust.Email, ConversationID: "conv-policy",
		AllowedActions: []string{"issue_refund"}, WriteBudget: 10, InflightLimit: 5, RatePerMinute: 60, ExpiresAt: b.Clock.Now().Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	propose := func(o demoshop.Order, cents int64) controlplane.Invocation {
		t.Helper()
		args, _ := json.Marshal(map[string]any{"order_id": o.ID, "amount_cents": cents, "reason_code": "damaged"})
		inv, err := b.Control.Propose(ctx, controlplane.Proposal{TaskID: task.ID, Action: "issue_refund", Args: args, Summary: "Refund $15.00", Actor: assistant})
		if err != nil {
			t.Fatal(err)
		}
		return inv
	}
	before := propose(order(), 1500)
	if before.State != controlplane.AwaitingApproval {
		t.Fatalf("stage 3 proposal is %s", before.State)
	}
	agent := b.Users[accounts.Agent]
	d, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: controlplane.UserActor(agent.ID, "agent", agent.Name), InvocationID: before.ID, Verb: controlplane.StaffApprove, Version: before.Version, ArgsHash: before.ArgsHash})
	if err != nil {
		t.Fatal(err)
	}
	approved := d.Invocation

	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])
	path := "/policies/shop/issue_refund"
	tok := c.CSRF(path)

	// No reason: 422, nothing changes.
	res := c.Post(path, webtest.PolicyForm(b, tok, "1", "5", "  ", "save"))
	if res.StatusCode != http.StatusUnprocessableEntity || res.Doc(t).Find(`#reason[aria-invalid="true"]`).Length() != 1 {
		t.Fatalf("save without a reason: %d", res.StatusCode)
	}
	// The what-if of the draft (stage 5, automatic up to $25) against
	// today's policy (stage 3): the one $15 proposal of the last 30 days
	// went to an agent and would have run automatically.
	res = c.Post(path, webtest.PolicyForm(b, tok, "1", "5", "", "preview"))
	doc := res.Doc(t)
	whatIf := doc.Find(`[data-testid="what-if-table"] tbody tr`)
	if res.StatusCode != http.StatusOK || whatIf.Length() != 4 {
		t.Fatalf("preview: %d with %d rows", res.StatusCode, whatIf.Length())
	}
	cells := func(key string) string {
		row := doc.Find(`[data-testid="what-if-` + key + `"]`)
		return strings.Join(row.Children().Map(func(_ int, s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }), "|")
	}
	for key, want := range map[string]string{
		"auto":         "Runs automatically|0 $0.00|1 $15.00|+1 +$15.00",
		"approval":     "An agent approves|1 $15.00|0 $0.00|−1 −$15.00",
		"confirmation": "The customer confirms|0 $0.00|0 $0.00|no change",
		"refused":      "Refused: action off|0 $0.00|0 $0.00|no change",
	} {
		if got := cells(key); got != want {
			t.Errorf("what-if %s row: %q, want %q", key, got, want)
		}
	}
	if got, want := doc.Find(`[data-testid="what-if-summary"]`).Text(),
		"Against today's policy, 1 more would have run automatically and 1 fewer would have gone to an agent for approval."; got != want {
		t.Errorf("what-if summary: %q, want %q", got, want)
	}
	if p, _ := b.Control.Policy(ctx, "shop", "issue_refund"); p.Version != 1 {
		t.Fatalf("a preview changed the policy to version %d", p.Version)
	}

	res = c.Post(path, webtest.PolicyForm(b, tok, "1", "5", "Refunds under $25 were always approved unchanged.", "save"))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/policies" {
		t.Fatalf("save: %d %s", res.StatusCode, res.Text)
	}
	p, err := b.Control.Policy(ctx, "shop", "issue_refund")
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != 2 || p.Stage != controlplane.StageAutonomous || p.ReviewOn.Format(time.DateOnly) != "2026-07-01" {
		t.Errorf("after the change: %+v", p)
	}
	var audit struct {
		Reason      string `json:"reason"`
		FromVersion int    `json:"from_version"`
		ToVersion   int    `json:"to_version"`
	}
	var actor string
	err = b.Store.Pool().QueryRow(ctx, `SELECT actor_id, data FROM events WHERE action = 'policy.changed'`).Scan(&actor, &audit)
	if err != nil {
		t.Fatal(err)
	}
	if actor != fmt.Sprint(b.Users[accounts.Manager].ID) || audit.Reason != "Refunds under $25 were always approved unchanged." ||
		audit.FromVersion != 1 || audit.ToVersion != 2 {
		t.Errorf("audit event by %s: %+v", actor, audit)
	}

	// The same edit again from the stale form: a conflict, not an overwrite.
	if res := c.Post(path, webtest.PolicyForm(b, tok, "1", "3", "Back to stage 3", "save")); res.StatusCode != http.StatusConflict {
		t.Errorf("stale save: %d, want 409", res.StatusCode)
	}

	// After the change: a new proposal runs on the new policy (within the
	// $25.00 ceiling with the $15.00 approved before: exposure counts it);
	// the one approved before keeps its approval and is dispatched.
	after := propose(order(), 1000)
	if after.State != controlplane.Approved || after.PolicyVersion != 2 {
		t.Errorf("proposal after the change: %s under policy v%d", after.State, after.PolicyVersion)
	}
	if _, err := b.Control.Dispatch(ctx, approved.ID); err != nil {
		t.Fatal(err)
	}
	done, err := b.Control.Invocation(ctx, approved.ID)
	if err != nil {
		t.Fatal(err)
	}
	if done.State != controlplane.Completed || done.PolicyVersion != 1 {
		t.Errorf("invocation approved before the change: %s under policy v%d", done.State, done.PolicyVersion)
	}
}

// TestOverdueReviewsOnManagersHome: a policy whose review date passed is
// flagged on the policies page and on managers' and admins' home pages.
func TestOverdueReviewsOnManagersHome(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])
	if n := c.Get("/").Doc(t).Find(`[data-testid="overdue-reviews"]`).Length(); n != 0 {
		t.Fatalf("fresh policies flagged overdue")
	}
	form := webtest.PolicyForm(b, c.CSRF("/policies/shop/resend_receipt"), "1", "5", "Review it next quarter instead.", "save")
	form.Set("review_on", "2026-03-01")
	if res := c.Post("/policies/shop/resend_receipt", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d %s", res.StatusCode, res.Text)
	}
	home := c.Get("/").Doc(t)
	if got := home.Find(`[data-testid="overdue-reviews"] a`).Text(); got != "shop/resend_receipt" {
		t.Errorf("overdue on home: %q", got)
	}
	if n := c.Get("/policies").Doc(t).Find(`[data-testid="policy-shop-resend_receipt"] [data-testid="review-overdue"]`).Length(); n != 1 {
		t.Errorf("the policies page does not flag the overdue review")
	}
	agent := b.Client(t)
	agent.MustSignIn(b.Users[accounts.Agent])
	if n := agent.Get("/").Doc(t).Find(`[data-testid="overdue-reviews"]`).Length(); n != 0 {
		t.Errorf("an agent's home shows policy reviews")
	}
}

// TestPolicyPageSetsWhoDecides: the policy form shows who decides the
// action's cards, refuses leaving support agents out with a field error
// (422, in the error summary, nothing changed), and saving managers in
// shows on the list and in the policy-change audit, before and after.
func TestPolicyPageSetsWhoDecides(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	ctx := context.Background()
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])
	path := "/policies/shop/issue_refund"
	form := c.Get(path).Doc(t)
	if n := form.Find(`[data-testid="policy-approvers"] input[name="approvers"]`).Length(); n != 3 {
		t.Fatalf("the form offers %d roles to decide, want 3", n)
	}
	if checked := form.Find(`input[name="approvers"][checked]`); checked.Length() != 1 || checked.AttrOr("value", "") != "agent" {
		t.Errorf("a fresh policy's deciders: %d ticked", checked.Length())
	}

	without := webtest.PolicyForm(b, c.CSRF(path), "1", "3", "Managers only.", "save")
	without["approvers"] = []string{"manager"}
	res := c.Post(path, without)
	doc := res.Doc(t)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(doc.Find(`[data-testid="approvers-error"]`).Text(), "support agents always decide") {
		t.Fatalf("leaving agents out: %d %q", res.StatusCode, doc.Find(`[data-testid="approvers-error"]`).Text())
	}
	if ids := webtest.ErrorSummary(t, doc); strings.Join(ids, " ") != "approvers-agent" {
		t.Errorf("the summary links to %v, want [approvers-agent]", ids)
	}
	if p, _ := b.Control.Policy(ctx, "shop", "issue_refund"); p.Version != 1 {
		t.Errorf("the refused save changed the policy to v%d", p.Version)
	}

	with := webtest.PolicyForm(b, c.CSRF(path), "1", "3", "Managers approve refunds too.", "save")
	with["approvers"] = []string{"agent", "manager"}
	if res := c.Post(path, with); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("saving managers in: %d\n%s", res.StatusCode, res.Text)
	}
	if row := c.Get("/policies").Doc(t).Find(`[data-testid="policy-shop-issue_refund"]`).Text(); !strings.Contains(row, "decided by support agents and managers") {
		t.Errorf("the list row says %q", row)
	}
	var before, after []string
	err := b.Store.Pool().QueryRow(ctx, `SELECT ARRAY(SELECT jsonb_array_elements_text(data->'before'->'approver_roles')),
		ARRAY(SELECT jsonb_array_elements_text(data->'after'->'approver_roles')) FROM events WHERE action = 'policy.changed'`).Scan(&before, &after)
	if err != nil || strings.Join(before, ",") != "agent" || strings.Join(after, ",") != "agent,manager" {
		t.Errorf("the audit's deciders: before %v after %v (%v)", before, after, err)
	}
}
