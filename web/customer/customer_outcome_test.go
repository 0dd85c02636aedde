package customer_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
)

// everyShopAction is a request of each of the demo shop's write actions,
// made by a customer the seeded shop knows.
var everyShopAction = []struct {
	customer string
	action   string
	args     map[string]any
}{
	{webtest.Jordan, "cancel_subscription", map[string]any{"subscription_id": "Pro plan for acme.example", "reason_code": "too_expensive", "effective": "end_of_period"}},
	{"hannah.weiss@example.de", "reinstate_subscription", map[string]any{"subscription_id": "my Pro plan"}},
	{webtest.Jordan, "issue_refund", map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}},
	{webtest.Jordan, "resend_receipt", map[string]any{"invoice_id": "paid Pro invoice"}},
	{webtest.Jordan, "update_product_description", map[string]any{"product_id": "LAMP-WAL-01", "description": "Solid walnut base, linen shade."}},
	{webtest.Jordan, "change_shipping_address", map[string]any{"order_id": "standing desk mat", "address": webtest.JordanAddress}},
}

// situation is one way an invocation can stand, written straight into its
// row: the page is a reading of the row, whichever path led there.
type situation struct {
	name          string
	state         controlplane.State
	route         string // route_reason; the customer's stage unless set
	decision      string
	notDispatched string
	result        string
	err           string
}

const customerRoute = "Its policy has the customer confirm every request of this kind."

// situations covers every invocation state, and each way of ending that
// reads differently to the customer.
var situations = []situation{
	{name: "awaiting confirmation", state: controlplane.AwaitingConfirmation},
	{name: "awaiting approval", state: controlplane.AwaitingApproval, route: "amount above the approval threshold"},
	{name: "proposed", state: controlplane.Proposed},
	{name: "approved", state: controlplane.Approved},
	{name: "dispatching", state: controlplane.Dispatching},
	{name: "completed", state: controlplane.Completed, result: `{"reference":"ref_test_abc123","short_reference":"#ABC123"}`},
	{name: "failed", state: controlplane.Failed, err: `{"code":"limit_one_per_day","message":"Only once a day.","retryable":false,"outcome":"refused"}`},
	{name: "unverified", state: controlplane.Unverified, err: `{"code":"timeout","message":"No answer.","retryable":false,"outcome":"unknown"}`},
	{name: "not dispatched", state: controlplane.NotDispatched, notDispatched: "task_paused"},
	{name: "declined", state: controlplane.Rejected, decision: "Not now."},
	{name: "rejected by an agent", state: controlplane.Rejected, route: "amount above the approval threshold", decision: "The order was refunded already"},
	{name: "superseded", state: controlplane.Rejected, decision: "superseded: the order changed after the quote was shown"},
	{name: "expired", state: controlplane.Expired},
	{name: "approval expired", state: controlplane.Expired, route: "amount above the approval threshold"},
	{name: "reversed", state: controlplane.Reversed, result: `{"reference":"ref_test_abc123","short_reference":"#ABC123"}`},
}

// put writes sit into the invocation's row.
func put(t *testing.T, b *webtest.Stack, id string, sit situation) {
	t.Helper()
	null := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	route := sit.route
	if route == "" {
		route = customerRoute
	}
	_, err := b.Store.Pool().Exec(context.Background(), `UPDATE invocations SET state = $2, route_reason = $3,
		decision_reason = $4, not_dispatched_reason = $5, result = $6::jsonb, error = $7::jsonb, deadline_at = $8 WHERE id = $1`,
		id, string(sit.state), route, null(sit.decision), null(sit.notDispatched), null(sit.result), null(sit.err),
		b.Clock.Now().Add(30*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoEndStateButCompletedShowsConsequencesAsFacts holds every
// invocation state, on a real quote of every shop action, to the rule:
// what the change means for the customer (its consequences, when the money
// arrives, when it takes effect) is stated as a fact only when it is
// completed; a pending request says what will happen if it goes ahead; any
// other end state shows at most the consequences, folded away under "what
// would have happened".
func TestNoEndStateButCompletedShowsConsequencesAsFacts(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	covered := map[controlplane.State]bool{}
	for _, sit := range situations {
		covered[sit.state] = true
	}
	for _, st := range controlplane.States {
		if !covered[st] {
			t.Fatalf("no situation puts an invocation in state %s", st)
		}
	}
	cased := map[string]bool{}
	for _, a := range everyShopAction {
		cased[a.action] = true
	}
	sys, err := b.Web.Registry().System("shop")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range sys.Actions() {
		if !cased[spec.Name] {
			t.Fatalf("shop action %s has no request in everyShopAction", spec.Name)
		}
	}
	for _, a := range everyShopAction {
		inv := b.ProposeFor(t, b.CustomerTask(t, a.customer), a.action, a.args, "")
		c := b.Client(t)
		c.Open(b.Link(t, inv, a.customer))
		q := inv.Quote
		var facts []string // what must not read as a fact before it is
		facts = append(facts, q.Consequences...)
		if q.Customer != nil && q.Customer.MoneyArrives != "" {
			facts = append(facts, q.Customer.MoneyArrives)
		}
		for _, sit := range situations {
			t.Run(a.action+"/"+sit.name, func(t *testing.T) {
				put(t, b, inv.ID, sit)
				res := c.Get("/requests/" + inv.ID)
				if res.StatusCode != http.StatusOK {
					t.Fatalf("request page: %d\n%s", res.StatusCode, res.Text)
				}
				doc := res.Doc(t)
				blocks := doc.Find(`[data-testid="consequences-block"]`)
				mode := blocks.AttrOr("data-mode", "")
				if blocks.Length() > 1 {
					t.Fatalf("%d consequence blocks", blocks.Length())
				}
				switch sit.state {
				case controlplane.Completed:
					if mode != "fact" || blocks.Find(`[data-testid="consequence"]`).Length() != len(q.Consequences) {
						t.Errorf("completed: mode %q with %d consequences, want them all as facts", mode, blocks.Find(`[data-testid="consequence"]`).Length())
					}
					return
				case controlplane.AwaitingConfirmation, controlplane.AwaitingApproval, controlplane.Proposed,
					controlplane.Approved, controlplane.Dispatching:
					if mode != "if" {
						t.Errorf("pending: mode %q, want what will happen if it goes ahead", mode)
					}
					return
				}
				if mode != "" && mode != "would" {
					t.Errorf("%s: the consequences are shown in mode %q", sit.name, mode)
				}
				if mode == "would" && !strings.HasPrefix(strings.TrimSpace(blocks.Find("summary").Text()), "What would have happened") {
					t.Errorf("%s: the folded consequences are headed %q", sit.name, blocks.Find("summary").Text())
				}
				blocks.Remove()
				page := doc.Find("main").Text()
				for _, f := range append(facts, "When the money arrives", "Effective:", "takes effect", "What this means for you") {
					if strings.Contains(page, f) {
						t.Errorf("%s: the page states %q as a fact:\n%s", sit.name, f, webtest.Squash(page))
					}
				}
			})
		}
	}
}

// TestCustomerPageSaysWhoDecided ends requests in each way a person or
// the clock can, through the control plane, and checks the customer is
// told who decided and why, in their own words: their decline as theirs,
// the agent's reason as written, a deadline nobody met, and who stopped the
// work.
func TestCustomerPageSaysWhoDecided(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	ctx := context.Background()
	agent := b.Users[accounts.Agent]
	agentActor := controlplane.UserActor(agent.ID, "agent", agent.Name)
	cases := []struct {
		name                   string
		end                    func(t *testing.T, c *webtest.Client, inv controlplane.Invocation)
		by, badge, headline    string
		detailHas              string
		agentNameMustNotAppear bool
	}{
		{name: "declined by the customer", by: "you", badge: "You declined", headline: "You declined this request.",
			detailHas: "Your reason: “I'd rather keep it.”",
			end: func(t *testing.T, c *webtest.Client, inv controlplane.Invocation) {
				if _, err := decideShown(ctx, b.Control, controlplane.CustomerDecision{Actor: controlplane.CustomerProvedOn(webtest.Jordan, "code", inv.ID), InvocationID: inv.ID, Verb: controlplane.CustomerDecline, Reason: "I'd rather keep it."}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "rejected by an agent", by: "our_team", badge: "Declined by our team",
			headline: "Our team declined this request: This order was refunded in full last week.", agentNameMustNotAppear: true,
			end: func(t *testing.T, c *webtest.Client, inv controlplane.Invocation) {
				put(t, b, inv.ID, situation{state: controlplane.AwaitingApproval, route: "amount above the approval threshold"})
				if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: agentActor, InvocationID: inv.ID, Verb: controlplane.StaffReject, Version: 0, Reason: controlplane.OtherReason, Other: "This order was refunded in full last week"}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "expired", by: "nobody", badge: "Expired", headline: "Nobody confirmed this in time, so it expired and nothing has changed.",
			end: func(t *testing.T, c *webtest.Client, inv controlplane.Invocation) {
				// The customer stays active (their session lasts while
				// they are) as the request's 30 minutes run out.
				b.Clock.Advance(20 * time.Minute)
				c.Get("/requests/" + inv.ID)
				b.Clock.Advance(11 * time.Minute)
				if _, err := b.Control.Sweep(ctx); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "stopped by our team", by: "our_team", badge: "Not carried out", headline: "This was not carried out, so nothing has changed.",
			detailHas: "Our team paused the conversation this came from",
			end: func(t *testing.T, c *webtest.Client, inv controlplane.Invocation) {
				if _, err := decideShown(ctx, b.Control, controlplane.CustomerDecision{Actor: controlplane.CustomerProvedOn(webtest.Jordan, "code", inv.ID), InvocationID: inv.ID, Verb: controlplane.CustomerConfirm}); err != nil {
					t.Fatal(err)
				}
				if _, err := b.Control.ChangeTask(ctx, agentActor, inv.TaskID, controlplane.TaskPause, 0); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv, link := b.PendingRefund(t)
			c := b.Client(t)
			c.Open(link)
			tc.end(t, c, b.Invocation(t, inv.ID))
			res := c.Get("/requests/" + inv.ID)
			status := res.Doc(t).Find(`[data-testid="status"]`)
			if got := status.AttrOr("data-decided-by", ""); got != tc.by {
				t.Errorf("decided by %q, want %q", got, tc.by)
			}
			if got := strings.TrimSpace(status.Find(`[data-testid="status-badge"]`).Text()); got != tc.badge {
				t.Errorf("badge %q, want %q", got, tc.badge)
			}
			if got := webtest.Squash(status.Find(`[data-testid="status-headline"]`).Text()); got != tc.headline {
				t.Errorf("headline %q, want %q", got, tc.headline)
			}
			if detail := status.Find(`[data-testid="status-detail"]`).Text(); !strings.Contains(detail, tc.detailHas) {
				t.Errorf("detail %q lacks %q", detail, tc.detailHas)
			}
			if tc.agentNameMustNotAppear && strings.Contains(res.Doc(t).Find("main").Text(), agent.Name) {
				t.Errorf("the customer's page names the agent")
			}
		})
	}
}

// TestSayAndCustomerPageGiveTheSameReference carries a request of every
// shop action through the API to completion, confirmed by the customer on
// their page, and checks the assistant is given the reference the
// customer's page shows: in say and as result.short_reference.
func TestSayAndCustomerPageGiveTheSameReference(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	b.StageForCustomer(t, webtest.CustomerActions...)
	ctx := context.Background()
	for i, a := range everyShopAction {
		t.Run(a.action, func(t *testing.T) {
			task := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": a.customer,
				"conversation_id": "conv-ref-" + strconv.Itoa(i), "allowed_actions": []string{a.action}, "write_budget": 2,
				"inflight_limit": 1, "rate_per_minute": 30}).Want(t, http.StatusCreated)
			inv := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+task.JSON["id"].(string)+"/invocations",
				map[string]any{"action": a.action, "args": a.args}).Want(t, http.StatusCreated)
			id := inv.JSON["id"].(string)
			link := strings.TrimPrefix(inv.JSON["next"].(map[string]any)["url"].(string), b.Server.URL)
			c := b.Client(t)
			tok := c.PageCSRF(c.Open(link))
			if res := c.Post("/requests/"+id+"/confirm", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("confirm: %d\n%s", res.StatusCode, res.Text)
			}
			if _, err := b.Control.Dispatch(ctx, id); err != nil {
				t.Fatal(err)
			}
			done := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id, nil).Want(t, http.StatusOK)
			if done.JSON["state"] != "completed" {
				t.Fatalf("after dispatch: %s", done.Body)
			}
			page := webtest.TextByTestID(c.Get("/requests/"+id), t, "reference")
			result, _ := done.JSON["result"].(map[string]any)
			if page == "" || result["short_reference"] != page {
				t.Errorf("the page shows reference %q, the API's short_reference is %v", page, result["short_reference"])
			}
			if say := done.JSON["say"].(string); !strings.HasSuffix(say, " Reference: "+page+".") {
				t.Errorf("say %q does not give the customer's reference %q", say, page)
			}
		})
	}
}

// decideShown is the customer's decision d on the request as its page
// shows it now.
func decideShown(ctx context.Context, cp *controlplane.Service, d controlplane.CustomerDecision) (controlplane.CustomerDecided, error) {
	inv, err := cp.Invocation(ctx, d.InvocationID)
	if err != nil {
		return controlplane.CustomerDecided{}, err
	}
	if d, err = d.Showing(inv); err != nil {
		return controlplane.CustomerDecided{}, err
	}
	return cp.CustomerDecide(ctx, d)
}
