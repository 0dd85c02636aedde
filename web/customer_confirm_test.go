package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/controlplane"
)

// TestConfirmWithoutJavaScript confirms with plain form posts: the page
// then shows the work in progress (refreshing itself), and the outcome with
// its reference once dispatched.
func TestConfirmWithoutJavaScript(t *testing.T) {
	t.Parallel()
	b := setupCustomer(t)
	inv, link := b.pendingRefund(t)
	c := b.client(t)
	tok := c.pageCSRF(c.open(link))
	res := c.post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {tok}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/requests/"+inv.ID {
		t.Fatalf("confirm: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	res = c.get("/requests/" + inv.ID)
	if got, _ := res.doc(t).Find(`[data-testid="status"]`).Attr("data-pending"); got != "true" {
		t.Errorf("after confirming, status pending = %q, want true", got)
	}
	if !strings.Contains(res.doc(t).Find("head noscript").Text(), "refresh") {
		t.Error("a pending page without JavaScript does not refresh itself")
	}
	if res.doc(t).Find(`[data-testid="confirm"]`).Length() != 0 {
		t.Error("the confirm button is still there after confirming")
	}
	if _, err := b.cp.DispatchOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := b.inv(t, inv.ID)
	if done.State != controlplane.Completed || done.Result == nil {
		t.Fatalf("after dispatch: %s (%+v)", done.State, done.Error)
	}
	res = c.get("/requests/" + inv.ID)
	// The customer reads the shop's short reference, never its refund id.
	if got := text(res, t, "reference"); got == "" || got != done.Result.ShortReference || strings.Contains(res.body, done.Result.Reference) {
		t.Errorf("reference %q, want %q and no %q on the page", got, done.Result.ShortReference, done.Result.Reference)
	}
	if got, _ := res.doc(t).Find(`[data-testid="status"]`).Attr("data-pending"); got != "false" {
		t.Errorf("a completed request still pending: %q", got)
	}
	// A retried POST after the fact is answered with the outcome.
	if res := c.post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("retried confirm: %d, want 303 to the outcome", res.StatusCode)
	}
	if n := len(b.shopEffects(t, done.IdempotencyKey)); n != 1 {
		t.Errorf("%d effects in the shop, want 1", n)
	}
}

// TestDeclineRecordsTheReason declines with a reason: nothing is sent and
// the reason is on the invocation and in its timeline.
func TestDeclineRecordsTheReason(t *testing.T) {
	t.Parallel()
	b := setupCustomer(t)
	inv, link := b.pendingRefund(t)
	c := b.client(t)
	tok := c.pageCSRF(c.open(link))
	res := c.post("/requests/"+inv.ID+"/decline", url.Values{"_csrf": {tok}, "reason": {"I'd rather have a replacement."}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("decline: %d\n%s", res.StatusCode, res.body)
	}
	got := b.inv(t, inv.ID)
	if got.State != controlplane.Rejected || got.DecisionReason != "I'd rather have a replacement." {
		t.Errorf("after decline: %s with reason %q", got.State, got.DecisionReason)
	}
	// The customer's own decline is theirs, in their words: not a
	// "Declined" that reads as if someone else decided.
	if badge := text(c.get("/requests/"+inv.ID), t, "status-badge"); badge != "You declined" {
		t.Errorf("badge %q, want the customer's words for their own decline", badge)
	}
	events, err := b.cp.Timeline(context.Background(), inv.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	var declined bool
	for _, e := range events {
		declined = declined || (e.Action == "invocation.declined" && e.ActorKind == controlplane.ActorCustomer && e.ActorID == jordan)
	}
	if !declined {
		t.Error("no invocation.declined event by the customer")
	}
	// Too long a reason is refused with the field marked, and the text kept.
	inv2, link2 := b.pendingRefundAgain(t)
	c2 := b.client(t)
	tok2 := c2.pageCSRF(c2.open(link2))
	long := strings.Repeat("x", 1001)
	res = c2.post("/requests/"+inv2.ID+"/decline", url.Values{"_csrf": {tok2}, "reason": {long}})
	if res.StatusCode != http.StatusUnprocessableEntity || res.doc(t).Find(`[data-testid="reason-error"]`).Length() != 1 {
		t.Errorf("too long a reason: %d, want 422 with the field's error", res.StatusCode)
	}
}

// pendingRefundAgain proposes a different refund, so that it is not a
// duplicate of pendingRefund's.
func (b *testBundle) pendingRefundAgain(t *testing.T) (controlplane.Invocation, string) {
	t.Helper()
	inv := b.proposeFor(t, b.customerTask(t, jordan), "issue_refund",
		map[string]any{"order_id": "walnut lamp", "amount_cents": 1000, "reason_code": "damaged"}, "")
	return inv, b.link(t, inv, jordan)
}

// TestConfirmAfterTheTargetChangedAsksAgain refunds part of the order at
// the shop between the quote and the confirmation: the confirmation
// re-quotes, the old request never executes, and the customer is asked
// again with what changed.
func TestConfirmAfterTheTargetChangedAsksAgain(t *testing.T) {
	t.Parallel()
	b := setupCustomer(t)
	inv, link := b.pendingRefund(t)
	c := b.client(t)
	tok := c.pageCSRF(c.open(link))

	body, _ := json.Marshal(map[string]any{"order_id": inv.Target.ID, "amount_cents": 500, "reason": "goodwill, in another tab"})
	shopRes, err := b.shopPost("/refunds", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	shopRes.Body.Close()
	if shopRes.StatusCode >= 300 {
		t.Fatalf("refund at the shop: %d", shopRes.StatusCode)
	}

	res := c.post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {tok}})
	next := strings.TrimPrefix(res.Header.Get("Location"), "/requests/")
	if res.StatusCode != http.StatusSeeOther || next == inv.ID || next == "" {
		t.Fatalf("confirm of a stale quote: %d to %q, want a redirect to a fresh request", res.StatusCode, res.Header.Get("Location"))
	}
	old := b.inv(t, inv.ID)
	if old.State != controlplane.Rejected || !strings.HasPrefix(old.DecisionReason, "superseded: ") {
		t.Errorf("old request: %s (%q), want rejected as superseded", old.State, old.DecisionReason)
	}
	fresh := b.inv(t, next)
	if fresh.State != controlplane.AwaitingConfirmation || fresh.SupersedesID != inv.ID || fresh.IdempotencyKey == inv.IdempotencyKey ||
		fresh.Quote.Target.Version == inv.Quote.Target.Version || fresh.TaskID != inv.TaskID {
		t.Errorf("fresh request %+v does not replace the old one", fresh)
	}
	page := c.get("/requests/" + next)
	if page.doc(t).Find(`[data-testid="changed"] [data-testid="change"]`).Length() == 0 {
		t.Error("the fresh request does not say what changed")
	}
	// The old page sends the customer to the fresh one.
	if res := c.get("/requests/" + inv.ID); res.Header.Get("Location") != "/requests/"+next {
		t.Errorf("old request page: %d to %q, want the fresh one", res.StatusCode, res.Header.Get("Location"))
	}
	if _, err := b.cp.DispatchOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(b.shopEffects(t, inv.IdempotencyKey)); n != 0 {
		t.Errorf("the stale request reached the shop: %d effects", n)
	}
	res = c.post("/requests/"+next+"/confirm", url.Values{"_csrf": {c.pageCSRF(page)}})
	if res.Header.Get("Location") != "/requests/"+next {
		t.Fatalf("confirm of the fresh quote: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if _, err := b.cp.DispatchOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.inv(t, next); got.State != controlplane.Completed {
		t.Errorf("fresh request after dispatch: %s", got.State)
	}
}

// TestFiftyConcurrentConfirmsMakeOneEffect sends 50 confirmations of one
// request at once from one customer session: every answer is graceful and
// the shop's ledger has one refund.
func TestFiftyConcurrentConfirmsMakeOneEffect(t *testing.T) {
	t.Parallel()
	b := setupCustomer(t)
	inv, link := b.pendingRefund(t)
	c := b.client(t)
	tok := c.pageCSRF(c.open(link))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.cp.RunDispatcher(ctx, 50*time.Millisecond)

	var wg sync.WaitGroup
	statuses := make(chan int, 50)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/requests/"+inv.ID+"/confirm", strings.NewReader(url.Values{"_csrf": {tok}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", b.srv.URL)
			res, err := c.http.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			res.Body.Close()
			statuses <- res.StatusCode
		}()
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != http.StatusSeeOther {
			t.Errorf("a confirm answered %d, want 303 to the outcome", s)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for b.inv(t, inv.ID).State != controlplane.Completed {
		if time.Now().After(deadline) {
			t.Fatalf("not completed: %s", b.inv(t, inv.ID).State)
		}
		time.Sleep(20 * time.Millisecond)
	}
	refunds := 0
	for _, e := range b.shopEffects(t, "") {
		if e.Kind == "refund.created" {
			refunds++
		}
	}
	if refunds != 1 {
		t.Errorf("%d refunds in the shop's ledger, want 1", refunds)
	}
}

// TestConfirmRechecksTheTask pauses the task after the link was opened:
// the confirmation is refused in words, nothing is approved, and declining
// still works.
func TestConfirmRechecksTheTask(t *testing.T) {
	t.Parallel()
	b := setupCustomer(t)
	inv, link := b.pendingRefund(t)
	c := b.client(t)
	tok := c.pageCSRF(c.open(link))
	task, err := b.cp.Task(context.Background(), inv.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.cp.ChangeTask(context.Background(), controlplane.AssistantActor("asst_test", "Test assistant"), task.ID, controlplane.TaskPause, task.Version); err != nil {
		t.Fatal(err)
	}
	if res := c.post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm on a paused task: %d", res.StatusCode)
	}
	if got := b.inv(t, inv.ID).State; got != controlplane.AwaitingConfirmation {
		t.Errorf("after confirming on a paused task: %s, want still awaiting", got)
	}
	page := c.get("/requests/" + inv.ID)
	if text(page, t, "on-hold") == "" || page.doc(t).Find(`[data-testid="confirm"]`).Length() != 0 {
		t.Error("the page does not say the request is on hold, or still offers to confirm")
	}
	if page.doc(t).Find(`[data-testid="decline"]`).Length() != 1 {
		t.Error("declining is not offered while on hold")
	}
	// A paused conversation is a normal state, not an error: a neutral
	// notice, not the red error banner.
	if hold := page.doc(t).Find(`[data-testid="on-hold"]`); hold.HasClass("bad") || !hold.HasClass("notice") {
		cls, _ := hold.Attr("class")
		t.Errorf("the on-hold notice has classes %q, want a neutral notice", cls)
	}
}

// TestStatusFragmentStopsPollingWhenFinal asks for the status as htmx
// does: 200 while the outcome is coming, 286 (htmx's "stop polling") once
// it is final, with HX-Refresh so that the page's receipt appears.
func TestStatusFragmentStopsPollingWhenFinal(t *testing.T) {
	t.Parallel()
	b := setupCustomer(t)
	inv, link := b.pendingRefund(t)
	c := b.client(t)
	tok := c.pageCSRF(c.open(link))
	c.post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {tok}})
	status := func() response {
		req, _ := http.NewRequest(http.MethodGet, b.srv.URL+"/requests/"+inv.ID+"/status", nil)
		req.Header.Set("HX-Request", "true")
		return c.do(req)
	}
	if res := status(); res.StatusCode != http.StatusOK || text(res, t, "status-badge") != "Approved — we're sending it to Harbour & Pine now" ||
		res.Header.Get("HX-Refresh") != "" {
		t.Errorf("while sending: %d %q HX-Refresh %q, want 200, the working badge and no refresh", res.StatusCode, text(res, t, "status-badge"), res.Header.Get("HX-Refresh"))
	}
	if _, err := b.cp.DispatchOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := status()
	if res.StatusCode != 286 || text(res, t, "reference") == "" || res.Header.Get("HX-Refresh") != "true" {
		t.Errorf("when done: %d with reference %q, HX-Refresh %q; want 286, the reference and HX-Refresh: true (the receipt is outside the fragment)",
			res.StatusCode, text(res, t, "reference"), res.Header.Get("HX-Refresh"))
	}
	// The page it reloads shows the receipt.
	if c.get("/requests/"+inv.ID).doc(t).Find(`[data-testid="receipt"]`).Length() != 1 {
		t.Error("the reloaded page has no receipt")
	}
}
