package console_test

import (
	"bufio"
	"context"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"countersign/store/dbtest"
	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

func TestTaskViewSaysWhereEachRequestStandsAndPauseIsAControl(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	// A pause in the middle of work: A completes, B's acknowledgement is
	// lost, the task is paused, C is approved but never gets a permit.
	a := f.Refund(t, f.Order, 500)
	f.ApproveAndDispatch(t, a)
	if err := b.Shop.SetFault(demoshop.FaultRule{Route: "POST /refunds", DropAfterCommit: 1}); err != nil {
		t.Fatal(err)
	}
	bInv := f.Refund(t, f.NewOrder(t), 600)
	f.ApproveAndDispatch(t, bInv)
	b.Shop.ClearFaults()
	cInv := f.Refund(t, f.NewOrder(t), 700)

	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	page := c.Get("/tasks/" + f.Task.ID)
	if page.StatusCode != http.StatusOK {
		t.Fatalf("GET task: %d", page.StatusCode)
	}
	tok := c.CSRF("/tasks/" + f.Task.ID)
	if res := c.Post("/tasks/"+f.Task.ID+"/pause", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("pause: %d\n%s", res.StatusCode, res.Text)
	}
	agent := b.Users[accounts.Agent]
	if _, err := b.Control.StaffDecide(context.Background(), controlplane.StaffDecision{Actor: controlplane.UserActor(agent.ID, "agent", agent.Name), InvocationID: cInv.ID, Verb: controlplane.StaffApprove, Version: 0, ArgsHash: b.Invocation(t, cInv.ID).ArgsHash}); err != nil {
		t.Fatal(err)
	}
	if sent, err := b.Control.Dispatch(context.Background(), cInv.ID); err != nil || sent {
		t.Fatalf("dispatch: sent %v, %v; want not sent", sent, err)
	}
	doc := c.Get("/tasks/" + f.Task.ID).Doc(t)
	notice := doc.Find(`[data-testid="paused-notice"]`)
	if got := notice.Text(); got != "Further dispatch is paused. One earlier request still needs checking." {
		t.Errorf("paused notice = %q", got)
	}
	if notice.HasClass("bad") || notice.HasClass("flash") || !notice.HasClass("notice") {
		t.Errorf("a pause is a normal state, shown as a neutral notice, not an error banner: class %q", notice.AttrOr("class", ""))
	}
	for id, want := range map[string]string{a.ID: "Completed", bInv.ID: "Result needs checking", cInv.ID: "Not dispatched"} {
		if got := strings.TrimSpace(doc.Find(`[data-testid="inv-` + id + `"] [data-testid="inv-state"]`).Text()); got != want {
			t.Errorf("%s shows %q, want %q", id, got, want)
		}
	}
	if !strings.Contains(doc.Find(`[data-testid="inv-`+cInv.ID+`"]`).Text(), "paused") {
		t.Errorf("the not-dispatched request does not say why")
	}
	timeline := doc.Find(`[data-testid="timeline"]`).Text()
	if !strings.Contains(timeline, b.Users[accounts.Agent].Name+" (password) paused the task") {
		t.Errorf("the timeline does not say who paused the task, in a sentence:\n%s", timeline)
	}
	for _, want := range []string{"proposed “Refund $6.00 on order ", "Awaiting approval by a support agent for it: its policy has an agent approve every request of this kind.",
		"No confirmation came back for it: the result needs checking. Nothing was re-sent.",
		"The shop confirmed it by reading it back: completed (reference ", "approved “Refund $7.00 on order ",
		"It was not sent: The task was paused before this could be sent."} {
		if !strings.Contains(timeline, want) {
			t.Errorf("the timeline lacks %q:\n%s", want, timeline)
		}
	}
	// No event names, no hashes, no raw data in the timeline.
	for _, code := range []string{"invocation.", "task.paused", "task.created", "permit.", "args_hash", "{", hex.EncodeToString(b.Invocation(t, a.ID).ArgsHash)} {
		if strings.Contains(timeline, code) {
			t.Errorf("the timeline shows %q:\n%s", code, timeline)
		}
	}

	// Inspect B read-only, then reconcile it from the shop's evidence.
	before, _ := dbtest.CountEvents(context.Background(), b.Store.Pool(), "invocation.reconciled", &f.Task.ID)
	ins := c.Get("/tasks/" + f.Task.ID + "?inspect=" + bInv.ID)
	panel := ins.Doc(t).Find(`[data-testid="inspect-panel"]`)
	if !strings.Contains(panel.Find(`[data-testid="tech-key"]`).Text(), bInv.IdempotencyKey) {
		t.Fatalf("inspection lacks the idempotency key:\n%s", panel.Text())
	}
	// The evidence is a comparison with the request, and says what
	// reconciling will do; the key and hash wait under Technical details.
	if ev := panel.Find(`[data-testid="evidence"]`).Text(); !strings.Contains(ev, "The shop shows a matching $6.00 refund created at ") ||
		!strings.Contains(ev, "with this request's key") {
		t.Errorf("the evidence is not a comparison with the request: %q", ev)
	}
	if out := panel.Find(`[data-testid="outlook"]`).Text(); !strings.Contains(out, "Reconcile will read the object back and mark it completed") {
		t.Errorf("the panel does not say what Reconcile will do: %q", out)
	}
	if panel.Find(`[data-testid="technical-details"] [data-testid="tech-key"]`).Length() != 1 {
		t.Errorf("the idempotency key is not under Technical details")
	}
	args := map[string][]string{}
	panel.Find(`[data-testid="inspect-arg"]`).Each(func(_ int, r *goquery.Selection) {
		var cells []string
		r.Children().Each(func(_ int, c *goquery.Selection) { cells = append(cells, strings.TrimSpace(c.Text())) })
		args[cells[0]] = cells[1:]
	})
	if got := args["Amount"]; len(got) != 3 || got[0] != "$6.00" || got[2] != "$6.00" {
		t.Errorf("the amount is not shown as money, proposed/approved/sent: %v (all: %v)", got, args)
	}
	if got := args["Reason"]; len(got) != 3 || got[0] != "Damaged" {
		t.Errorf("the reason code is not in words: %v", got)
	}
	if txt := panel.Text(); strings.Contains(txt, "amount_cents") || strings.Contains(txt, "Request ledger: unknown") ||
		strings.Contains(txt, `{"`) {
		t.Errorf("the inspect panel shows raw JSON or codes:\n%s", txt)
	}
	if after, _ := dbtest.CountEvents(context.Background(), b.Store.Pool(), "invocation.reconciled", &f.Task.ID); after != before {
		t.Fatalf("inspecting changed something")
	}
	if got := b.Invocation(t, bInv.ID).State; got != controlplane.Unverified {
		t.Fatalf("inspection moved the request to %s", got)
	}
	res := c.Post("/invocations/"+bInv.ID+"/reconcile", url.Values{"_csrf": {tok}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reconcile: %d\n%s", res.StatusCode, res.Text)
	}
	if got := b.Invocation(t, bInv.ID).State; got != controlplane.Completed {
		t.Fatalf("after reconcile: %s, want completed (the shop committed it)", got)
	}
	doc = c.Get("/tasks/" + f.Task.ID).Doc(t)
	if got := doc.Find(`[data-testid="paused-notice"]`).Text(); got != "Further dispatch is paused." {
		t.Errorf("paused notice after reconciling = %q", got)
	}

	// Resume, then cancel; a second cancel is a conflict that says why.
	if res := c.Post("/tasks/"+f.Task.ID+"/resume", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("resume: %d", res.StatusCode)
	}
	if res := c.Post("/tasks/"+f.Task.ID+"/cancel", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d", res.StatusCode)
	}
	if res := c.Post("/tasks/"+f.Task.ID+"/cancel", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusConflict {
		t.Fatalf("cancel twice: %d, want 409", res.StatusCode)
	}
	if res := c.Post("/tasks/"+f.Task.ID+"/pause", url.Values{}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("pause without CSRF: %d, want 403", res.StatusCode)
	}
}

func TestTaskLiveAnswersNoContentUntilSomethingChanges(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	inv := f.Refund(t, f.Order, 500)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	live := c.Get("/tasks/" + f.Task.ID).Doc(t).Find(`[data-mark]`)
	mark, _ := live.Attr("data-mark")
	if res := c.Get("/tasks/" + f.Task.ID + "/live?mark=" + url.QueryEscape(mark)); res.StatusCode != http.StatusNoContent {
		t.Fatalf("unchanged: %d, want 204", res.StatusCode)
	}
	f.ApproveAndDispatch(t, inv)
	res := c.Get("/tasks/" + f.Task.ID + "/live?mark=" + url.QueryEscape(mark))
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Doc(t).Find(`[data-testid="inv-`+inv.ID+`"]`).Text(), "Completed") {
		t.Fatalf("after dispatch: %d\n%s", res.StatusCode, res.Text)
	}
}

func TestReversalNeedsAnotherApproverThroughTheConsole(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	ctx := context.Background()
	sub, err := b.Shop.CreateSubscription(ctx, demoshop.SubscriptionFixture{CustomerID: f.Customer.ID, Plan: "Pro"})
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(`{"subscription_id":"` + sub.ID + `","reason_code":"switching","effective":"end_of_period"}`)
	inv, err := b.Control.Propose(ctx, controlplane.Proposal{TaskID: f.Task.ID, Action: "cancel_subscription", Args: raw,
		Actor: controlplane.AssistantActor("asst_test", "Test assistant")})
	if err != nil {
		t.Fatal(err)
	}
	f.ApproveAndDispatch(t, inv)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	doc := c.Get("/tasks/" + f.Task.ID).Doc(t)
	if doc.Find(`[data-testid="inv-`+inv.ID+`"] [data-testid="reverse"]`).Length() != 1 {
		t.Fatalf("a completed, reversible request offers no reversal")
	}
	tok := c.CSRF("/tasks/" + f.Task.ID)
	if res := c.Post("/invocations/"+inv.ID+"/reverse", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reverse: %d\n%s", res.StatusCode, res.Text)
	}
	invs, _ := b.Control.Invocations(ctx, f.Task.ID)
	var rev controlplane.Invocation
	for _, x := range invs {
		if x.CompensatesID == inv.ID {
			rev = x
		}
	}
	if rev.ID == "" {
		t.Fatalf("no invocation compensates %s", inv.ID)
	}
	form := webtest.CardForm(t, c.Get("/queue/"+rev.ID), "approve-form")
	if res := c.Post("/queue/"+rev.ID+"/approve", form); res.StatusCode != http.StatusForbidden {
		t.Fatalf("the original approver approving the reversal: %d, want 403", res.StatusCode)
	}
	m := b.Client(t)
	m.MustSignIn(b.CreateUser(t, accounts.Agent))
	form = webtest.CardForm(t, m.Get("/queue/"+rev.ID), "approve-form")
	if res := m.Post("/queue/"+rev.ID+"/approve", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("another person approving the reversal: %d", res.StatusCode)
	}
}

func TestGlobalStopIsForAdmins(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	admin := b.Client(t)
	admin.MustSignIn(b.Users[accounts.Admin])
	doc := admin.Get("/tasks/" + f.Task.ID).Doc(t)
	if doc.Find(`[data-testid="global-stop-form"]`).Length() != 1 {
		t.Fatalf("an admin sees no global stop switch")
	}
	tok := admin.CSRF("/tasks/" + f.Task.ID)
	if res := admin.Post("/controls/global-stop", url.Values{"_csrf": {tok}, "stopped": {"true"}, "back": {"/tasks/" + f.Task.ID}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("global stop: %d", res.StatusCode)
	}
	if stopped, _ := b.Control.GlobalStopped(context.Background()); !stopped {
		t.Fatalf("the switch did not stop dispatch")
	}
	agent := b.Client(t)
	agent.MustSignIn(b.Users[accounts.Agent])
	if agent.Get("/tasks/"+f.Task.ID).Doc(t).Find(`[data-testid="global-stop-form"]`).Length() != 0 {
		t.Errorf("an agent sees the global stop switch")
	}
	if res := agent.Post("/controls/global-stop", url.Values{"_csrf": {agent.CSRF("/tasks")}, "stopped": {"false"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("agent lifting the global stop: %d, want 403", res.StatusCode)
	}
}

func TestTaskListPutsWorkThatNeedsCheckingFirst(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	res := c.Get("/tasks?q=" + url.QueryEscape(f.Customer.Email))
	if res.Doc(t).Find(`[data-testid="task-`+f.Task.ID+`"]`).Length() != 1 {
		t.Fatalf("search by customer does not find the task")
	}
	if n := c.Get("/tasks?q=nobody-at-all").Doc(t).Find(`[data-testid="no-tasks"]`).Length(); n != 1 {
		t.Fatalf("a search matching nothing does not say so")
	}
}

func TestHandoffsShowWhatTheAssistantPreparedAndTakingAssigns(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	ctx := context.Background()
	pool := b.Store.Pool()
	if _, err := pool.Exec(ctx, `INSERT INTO assistants (id, name, created_at) VALUES ('asst_h', 'Helper', now())`); err != nil {
		t.Fatal(err)
	}
	var id int64
	err := pool.QueryRow(ctx, `INSERT INTO conversation_events (conversation_id, assistant_id, intent, mode, at, data)
		VALUES ('conv-h1', 'asst_h', 'ambiguous', 'handed_off', now(),
		'{"summary":"Wants a refund for a lamp; two orders match.","facts":["order A: walnut lamp","order B: desk lamp"],
		  "would_propose":{"action":"issue_refund","args":{"amount_cents":4200}}}') RETURNING id`).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := b.Client(t), b.Client(t)
	c1.MustSignIn(b.Users[accounts.Agent])
	c2.MustSignIn(b.Users[accounts.Manager])
	page := c1.Get("/handoffs")
	if page.StatusCode != http.StatusOK {
		t.Fatalf("GET /handoffs: %d\n%s", page.StatusCode, page.Text)
	}
	card := page.Doc(t).Find(`[data-testid="handoff-` + webtest.Itoa64(id) + `"]`)
	for _, want := range []string{"two orders match", "order B: desk lamp", "Refund an order", "$42.00", "Unclear what the customer wants"} {
		if !strings.Contains(card.Text(), want) {
			t.Errorf("hand-off lacks %q:\n%s", want, card.Text())
		}
	}
	if res := c1.Post("/handoffs/"+webtest.Itoa64(id)+"/take", url.Values{"_csrf": {c1.CSRF("/handoffs")}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("take: %d", res.StatusCode)
	}
	c2.Post("/handoffs/"+webtest.Itoa64(id)+"/take", url.Values{"_csrf": {c2.CSRF("/handoffs")}})
	var holder int64
	if err := pool.QueryRow(ctx, `SELECT user_id FROM handoff_assignments WHERE conversation_event_id = $1`, id).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	if holder != b.Users[accounts.Agent].ID {
		t.Fatalf("hand-off held by %d, want the first taker", holder)
	}
	if got := c2.Get("/handoffs").Doc(t).Find(`[data-testid="taken-by"]`).Text(); !strings.Contains(got, b.Users[accounts.Agent].Name) {
		t.Errorf("the second person is not told who took it: %q", got)
	}
	if n, err := dbtest.CountEvents(ctx, b.Store.Pool(), "handoff.taken", nil); err != nil || n != 1 {
		t.Errorf("handoff.taken events = %d (%v), want 1: the taker is audited, the one too late is not", n, err)
	}
}

func TestTaskEventsStreamSaysChangeWhenTheTaskChanges(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.Server.URL+"/tasks/"+f.Task.ID+"/events", nil)
	res, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	lines := bufio.NewReader(res.Body)
	// The stream opens, once LISTEN is in force, with a catch-up change (a
	// change committed since the page was rendered would otherwise be
	// lost), then its first comment.
	var opening []string
	for {
		l, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(l, ": watching") {
			break
		}
		opening = append(opening, strings.TrimSpace(l))
	}
	if !slices.Contains(opening, "event: change") {
		t.Errorf("the stream opened with %q, want a catch-up change before \": watching\"", opening)
	}
	// A change through the control plane (as another console instance
	// would make it) reaches this stream through NOTIFY.
	if _, err := b.Control.ChangeTask(context.Background(), controlplane.AssistantActor("asst_test", "Test assistant"), f.Task.ID, controlplane.TaskPause, 0); err != nil {
		t.Fatal(err)
	}
	for {
		l, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended without a change: %v", err)
		}
		if strings.TrimSpace(l) == "event: change" {
			return
		}
	}
}
