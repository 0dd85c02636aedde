package customer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/web/webtest"

	"countersign/internal/controlplane"
)

// TestConfirmWithoutJavaScript confirms with plain form posts: the page
// then shows the work in progress (refreshing itself), and the outcome with
// its reference once dispatched.
func TestConfirmWithoutJavaScript(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	tok := c.PageCSRF(c.Open(link))
	res := c.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {tok}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/requests/"+inv.ID {
		t.Fatalf("confirm: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	res = c.Get("/requests/" + inv.ID)
	if got, _ := res.Doc(t).Find(`[data-testid="status"]`).Attr("data-pending"); got != "true" {
		t.Errorf("after confirming, status pending = %q, want true", got)
	}
	if !strings.Contains(res.Doc(t).Find("head noscript").Text(), "refresh") {
		t.Error("a pending page without JavaScript does not refresh itself")
	}
	if res.Doc(t).Find(`[data-testid="confirm"]`).Length() != 0 {
		t.Error("the confirm button is still there after confirming")
	}
	if _, err := b.Control.Dispatch(context.Background(), inv.ID); err != nil {
		t.Fatal(err)
	}
	done := b.Invocation(t, inv.ID)
	if done.State != controlplane.Completed || done.Result == nil {
		t.Fatalf("after dispatch: %s (%+v)", done.State, done.Error)
	}
	res = c.Get("/requests/" + inv.ID)
	// The customer reads the shop's short reference, never its refund id.
	if got := webtest.TextByTestID(res, t, "reference"); got == "" || got != done.Result.ShortReference || strings.Contains(res.Text, done.Result.Reference) {
		t.Errorf("reference %q, want %q and no %q on the page", got, done.Result.ShortReference, done.Result.Reference)
	}
	if got, _ := res.Doc(t).Find(`[data-testid="status"]`).Attr("data-pending"); got != "false" {
		t.Errorf("a completed request still pending: %q", got)
	}
	// A retried POST after the fact is answered with the outcome.
	if res := c.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("retried confirm: %d, want 303 to the outcome", res.StatusCode)
	}
	if n := len(b.ShopEffects(t, done.IdempotencyKey)); n != 1 {
		t.Errorf("%d effects in the shop, want 1", n)
	}
}

// TestDeclineRecordsTheReason declines with a reason: nothing is sent and
// the reason is on the invocation and in its timeline.
func TestDeclineRecordsTheReason(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	tok := c.PageCSRF(c.Open(link))
	res := c.Post("/requests/"+inv.ID+"/decline", url.Values{"_csrf": {tok}, "reason": {"I'd rather have a replacement."}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("decline: %d\n%s", res.StatusCode, res.Text)
	}
	got := b.Invocation(t, inv.ID)
	if got.State != controlplane.Rejected || got.DecisionReason != "I'd rather have a replacement." {
		t.Errorf("after decline: %s with reason %q", got.State, got.DecisionReason)
	}
	// The customer's own decline is theirs, in their words: not a
	// "Declined" that reads as if someone else decided.
	if badge := webtest.TextByTestID(c.Get("/requests/"+inv.ID), t, "status-badge"); badge != "You declined" {
		t.Errorf("badge %q, want the customer's words for their own decline", badge)
	}
	events, err := b.Control.Timeline(context.Background(), inv.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	var declined bool
	for _, e := range events {
		declined = declined || (e.Action == "invocation.declined" && e.ActorKind == controlplane.ActorCustomer && e.ActorID == webtest.Jordan)
	}
	if !declined {
		t.Error("no invocation.declined event by the customer")
	}
	// Too long a reason is refused with the field marked, and the text kept.
	inv2, link2 := pendingRefundAgain(t, b)
	c2 := b.Client(t)
	tok2 := c2.PageCSRF(c2.Open(link2))
	long := strings.Repeat("x", 1001)
	res = c2.Post("/requests/"+inv2.ID+"/decline", url.Values{"_csrf": {tok2}, "reason": {long}})
	if res.StatusCode != http.StatusUnprocessableEntity || res.Doc(t).Find(`[data-testid="reason-error"]`).Length() != 1 {
		t.Errorf("too long a reason: %d, want 422 with the field's error", res.StatusCode)
	}
}

// pendingRefundAgain proposes a different refund, so that it is not a
// duplicate of pendingRefund's.
func pendingRefundAgain(t *testing.T, b *webtest.Stack) (controlplane.Invocation, string) {
	t.Helper()
	inv := b.ProposeFor(t, b.CustomerTask(t, webtest.Jordan), "issue_refund",
		map[string]any{"order_id": "walnut lamp", "amount_cents": 1000, "reason_code": "damaged"}, "")
	return inv, b.Link(t, inv, webtest.Jordan)
}

// TestConfirmAfterTheTargetChangedAsksAgain refunds part of the order at
// the shop between the quote and the confirmation: the confirmation
// re-quotes, the old request never executes, and the customer is asked
// again with what changed.
func TestConfirmAfterTheTargetChangedAsksAgain(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	page := c.Open(link)

	refundAtTheShop(t, b, inv.Target.ID, 500, "goodwill, in another tab")
	next := confirmStale(t, c, inv.ID, page)
	old := b.Invocation(t, inv.ID)
	if old.State != controlplane.Rejected || !strings.HasPrefix(old.DecisionReason, "superseded: ") {
		t.Errorf("old request: %s (%q), want rejected as superseded", old.State, old.DecisionReason)
	}
	fresh := b.Invocation(t, next)
	if fresh.State != controlplane.AwaitingConfirmation || fresh.SupersedesID != inv.ID || fresh.IdempotencyKey == inv.IdempotencyKey ||
		fresh.Quote.Target.Version == inv.Quote.Target.Version || fresh.TaskID != inv.TaskID {
		t.Errorf("fresh request %+v does not replace the old one", fresh)
	}
	page = c.Get("/requests/" + next)
	if page.Doc(t).Find(`[data-testid="changed"] [data-testid="change"]`).Length() == 0 {
		t.Error("the fresh request does not say what changed")
	}
	// The old page sends the customer to the fresh one.
	if res := c.Get("/requests/" + inv.ID); res.Header.Get("Location") != "/requests/"+next {
		t.Errorf("old request page: %d to %q, want the fresh one", res.StatusCode, res.Header.Get("Location"))
	}
	if sent, err := b.Control.Dispatch(context.Background(), inv.ID); err != nil || sent {
		t.Fatalf("dispatch: sent %v, %v; want not sent", sent, err)
	}
	if n := len(b.ShopEffects(t, inv.IdempotencyKey)); n != 0 {
		t.Errorf("the stale request reached the shop: %d effects", n)
	}
	res := c.Post("/requests/"+next+"/confirm", url.Values{"_csrf": {c.PageCSRF(page)}})
	if res.Header.Get("Location") != "/requests/"+next {
		t.Fatalf("confirm of the fresh quote: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if _, err := b.Control.Dispatch(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	if got := b.Invocation(t, next); got.State != controlplane.Completed {
		t.Errorf("fresh request after dispatch: %s", got.State)
	}
}

// TestFiftyConcurrentConfirmsMakeOneEffect sends 50 confirmations of one
// request at once from one customer session: every answer is graceful and
// the shop's ledger has one refund.
func TestFiftyConcurrentConfirmsMakeOneEffect(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	tok := c.PageCSRF(c.Open(link))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Control.RunDispatcher(ctx, 50*time.Millisecond)

	form := c.QuoteShown(inv.ID)
	form.Set("_csrf", tok)
	var wg sync.WaitGroup
	statuses := make(chan int, 50)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, b.Server.URL+"/requests/"+inv.ID+"/confirm", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", b.Server.URL)
			res, err := c.HTTP.Do(req)
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
	for b.Invocation(t, inv.ID).State != controlplane.Completed {
		if time.Now().After(deadline) {
			t.Fatalf("not completed: %s", b.Invocation(t, inv.ID).State)
		}
		time.Sleep(20 * time.Millisecond)
	}
	refunds := 0
	for _, e := range b.ShopEffects(t, "") {
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
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	tok := c.PageCSRF(c.Open(link))
	task, err := b.Control.Task(context.Background(), inv.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Control.ChangeTask(context.Background(), controlplane.AssistantActor("asst_test", "Test assistant"), task.ID, controlplane.TaskPause, task.Version); err != nil {
		t.Fatal(err)
	}
	if res := c.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm on a paused task: %d", res.StatusCode)
	}
	if got := b.Invocation(t, inv.ID).State; got != controlplane.AwaitingConfirmation {
		t.Errorf("after confirming on a paused task: %s, want still awaiting", got)
	}
	page := c.Get("/requests/" + inv.ID)
	if webtest.TextByTestID(page, t, "on-hold") == "" || page.Doc(t).Find(`[data-testid="confirm"]`).Length() != 0 {
		t.Error("the page does not say the request is on hold, or still offers to confirm")
	}
	if page.Doc(t).Find(`[data-testid="decline"]`).Length() != 1 {
		t.Error("declining is not offered while on hold")
	}
	// A paused conversation is a normal state, not an error: a neutral
	// notice, not the red error banner.
	if hold := page.Doc(t).Find(`[data-testid="on-hold"]`); hold.HasClass("bad") || !hold.HasClass("notice") {
		cls, _ := hold.Attr("class")
		t.Errorf("the on-hold notice has classes %q, want a neutral notice", cls)
	}
}

// TestStatusFragmentStopsPollingWhenFinal asks for the status as htmx
// does: 200 while the outcome is coming, 286 (htmx's "stop polling") once
// it is final, with HX-Refresh so that the page's receipt appears.
func TestStatusFragmentStopsPollingWhenFinal(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	tok := c.PageCSRF(c.Open(link))
	c.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {tok}})
	status := func() webtest.Response {
		req, _ := http.NewRequest(http.MethodGet, b.Server.URL+"/requests/"+inv.ID+"/status", nil)
		req.Header.Set("HX-Request", "true")
		return c.Do(req)
	}
	if res := status(); res.StatusCode != http.StatusOK || webtest.TextByTestID(res, t, "status-badge") != "Approved — we're sending it to Harbour & Pine now" ||
		res.Header.Get("HX-Refresh") != "" {
		t.Errorf("while sending: %d %q HX-Refresh %q, want 200, the working badge and no refresh", res.StatusCode, webtest.TextByTestID(res, t, "status-badge"), res.Header.Get("HX-Refresh"))
	}
	if _, err := b.Control.Dispatch(context.Background(), inv.ID); err != nil {
		t.Fatal(err)
	}
	res := status()
	if res.StatusCode != 286 || webtest.TextByTestID(res, t, "reference") == "" || res.Header.Get("HX-Refresh") != "true" {
		t.Errorf("when done: %d with reference %q, HX-Refresh %q; want 286, the reference and HX-Refresh: true (the receipt is outside the fragment)",
			res.StatusCode, webtest.TextByTestID(res, t, "reference"), res.Header.Get("HX-Refresh"))
	}
	// The page it reloads shows the receipt.
	if c.Get("/requests/"+inv.ID).Doc(t).Find(`[data-testid="receipt"]`).Length() != 1 {
		t.Error("the reloaded page has no receipt")
	}
}

// refundAtTheShop refunds cents of order at the shop directly, as its own
// staff would in another tab: every quote of that order is stale then.
func refundAtTheShop(t *testing.T, b *webtest.Stack, order string, cents int, reason string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"order_id": order, "amount_cents": cents, "reason": reason})
	res, err := shopPost(b, "/refunds", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode >= 300 {
		t.Fatalf("refund at the shop: %d", res.StatusCode)
	}
}

// confirmStale confirms request id, whose quote is stale, with the token
// of page, and returns the fresh request that replaced it; the answer
// must be a redirect to that request.
func confirmStale(t *testing.T, c *webtest.Client, id string, page webtest.Response) string {
	t.Helper()
	res := c.Post("/requests/"+id+"/confirm", url.Values{"_csrf": {c.PageCSRF(page)}})
	next := strings.TrimPrefix(res.Header.Get("Location"), "/requests/")
	if res.StatusCode != http.StatusSeeOther || next == id || next == "" {
		t.Fatalf("confirm of a stale quote: %d to %q, want a redirect to a fresh request", res.StatusCode, res.Header.Get("Location"))
	}
	return next
}

// shopPost calls the shop directly, as its own staff would, with its
// token.
func shopPost(b *webtest.Stack, path, contentType string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, b.ShopURL+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+b.Shop.Token())
	return http.DefaultClient.Do(req)
}
