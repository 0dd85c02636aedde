package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
)

// twoRequests proposes, for Jordan, a 1-cent refund in one task (A) and a
// $15.00 refund in another task, later (B), as an assistant might.
func (b *testBundle) twoRequests(t *testing.T) (a, bb controlplane.Invocation) {
	t.Helper()
	a = b.proposeFor(t, b.customerTask(t, jordan), "issue_refund",
		map[string]any{"order_id": "walnut lamp", "amount_cents": 1, "reason_code": "damaged"}, "A cent back.")
	b.clock.Advance(time.Minute)
	bb = b.proposeFor(t, b.customerTask(t, jordan), "issue_refund",
		map[string]any{"order_id": "walnut lamp", "amount_cents": 1500, "reason_code": "damaged"}, "Fifteen dollars back.")
	return a, bb
}

// customerDecisionPaths are every POST route under /requests/:id/ the
// router has: each decides something about the request (confirm, decline,
// stop), so each must answer only to a proof that may decide it.
func (b *testBundle) customerDecisionPaths(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, r := range b.web.Echo().Routes() {
		if r.Method == http.MethodPost && strings.HasPrefix(r.Path, "/requests/:id/") {
			paths = append(paths, r.Path)
		}
	}
	if len(paths) < 3 {
		t.Fatalf("only %v decide a customer's request: the routes did not load", paths)
	}
	return paths
}

// refusedEverywhere posts every deciding path of inv with c's session and
// wants each refused with status, leaving inv and its task as they were.
func (b *testBundle) refusedEverywhere(t *testing.T, c *client, inv controlplane.Invocation, status int, saying string) {
	t.Helper()
	tok := c.csrfOf("/requests")
	for _, p := range b.customerDecisionPaths(t) {
		path := strings.Replace(p, ":id", inv.ID, 1)
		res := c.post(path, url.Values{"_csrf": {tok}})
		if res.StatusCode != status || !strings.Contains(res.body, saying) {
			t.Errorf("POST %s: %d, want %d saying %q\n%s", path, res.StatusCode, status, saying, res.body)
		}
	}
	if got := b.inv(t, inv.ID); got.State != controlplane.AwaitingConfirmation || got.Version != inv.Version {
		t.Errorf("the request is %s (version %d), want untouched", got.State, got.Version)
	}
	task, err := b.cp.Task(context.Background(), inv.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if task.State != controlplane.TaskActive {
		t.Errorf("its task is %s, want still active", task.State)
	}
}

// csrfOf reads the session's CSRF token from the sign-out form a
// customer's pages carry.
func (c *client) csrfOf(path string) string {
	c.t.Helper()
	tok, _ := c.get(path).doc(c.t).Find(`form[action="/sign-out"] input[name="_csrf"]`).Attr("value")
	if tok == "" {
		c.t.Fatalf("no sign-out form on %s", path)
	}
	return tok
}

// TestACodeDecidesOnlyItsRequest: a customer proves with a code on request
// A's link; the same browser can neither see nor decide request B of the
// same customer from another task (every deciding path answers "show us
// it's you for this request"), B's link asks for B's own proof, and A is
// still decided by that code.
func TestACodeDecidesOnlyItsRequest(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withCustomerStage())
	a, bb := b.twoRequests(t)
	c := b.client(t)
	c.open(b.link(t, a, jordan))

	if res := c.get("/requests/" + bb.ID); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("request B with A's code: %d, want 401", res.StatusCode)
	}
	b.refusedEverywhere(t, c, bb, http.StatusUnauthorized, "Each request needs its own proof")
	page := c.get(b.link(t, bb, jordan))
	if page.StatusCode != http.StatusOK || page.doc(t).Find(`[data-testid="send-code-form"]`).Length() != 1 ||
		text(page, t, "other-request") == "" {
		t.Errorf("B's link with A's code: %d, want its own proof step saying why\n%s", page.StatusCode, page.body)
	}

	res := c.post("/requests/"+a.ID+"/confirm", url.Values{"_csrf": {c.pageCSRF(c.get("/requests/" + a.ID))}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm A with A's code: %d", res.StatusCode)
	}
	if got := b.inv(t, a.ID).State; got == controlplane.AwaitingConfirmation {
		t.Errorf("A is still awaiting after its confirmation")
	}
}

// TestAnAssertionDecidesOnlyItsRequest is the same for an assertion signed
// by the business's site for A's link.
func TestAnAssertionDecidesOnlyItsRequest(t *testing.T) {
	t.Parallel()
	secret := []byte("0123456789abcdef0123456789abcdef-shop")
	b := setup(t, withShop(), withProofs(map[string][]confirmation.Proof{"shop": {confirmation.ProofAssertion}}), withAssertionSecrets(map[string][]byte{"shop": secret}))
	b.stageForCustomer(t, customerActions...)
	a, bb := b.twoRequests(t)
	now := b.clock.Now()
	linkA := b.link(t, a, jordan)
	signed := confirmation.SignAssertion(secret, confirmation.Assertion{Sub: jordan, Sys: "shop", Link: linkSelector(linkA),
		IssuedAt: now.Unix(), ExpiresAt: now.Add(5 * time.Minute).Unix(), Nonce: fmt.Sprintf("n-%d-0123456789", time.Now().UnixNano())})
	c := b.client(t)
	if res := c.get(linkA + "?assertion=" + url.QueryEscape(signed)); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("assertion on A's link: %d", res.StatusCode)
	}
	b.refusedEverywhere(t, c, bb, http.StatusUnauthorized, "Each request needs its own proof")
	if res := c.post("/requests/"+a.ID+"/decline", url.Values{"_csrf": {c.pageCSRF(c.get("/requests/" + a.ID))}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("decline A with A's assertion: %d", res.StatusCode)
	}
	if got := b.inv(t, a.ID).State; got != controlplane.Rejected {
		t.Errorf("A is %s after its decline", got)
	}
}

// TestTheCustomersAccountDecidesAllTheirRequests: signed in with their own
// password, the customer decides A and B alike.
func TestTheCustomersAccountDecidesAllTheirRequests(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withCustomerStage())
	a, bb := b.twoRequests(t)
	c := b.client(t)
	c.mustSignIn(b.customerAccount(t, jordan))
	for _, inv := range []controlplane.Invocation{a, bb} {
		res := c.post("/requests/"+inv.ID+"/decline", url.Values{"_csrf": {c.pageCSRF(c.get("/requests/" + inv.ID))}})
		if res.StatusCode != http.StatusSeeOther || b.inv(t, inv.ID).State != controlplane.Rejected {
			t.Errorf("decline %s with the account: %d, %s", inv.ID, res.StatusCode, b.inv(t, inv.ID).State)
		}
	}
}

// TestTheDecisionTakesOnlyProofsTheSystemAccepts: where the shop accepts
// only assertions, the customer's signed-in account — a proof other
// systems take — decides nothing there, on any deciding path.
func TestTheDecisionTakesOnlyProofsTheSystemAccepts(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withProofs(map[string][]confirmation.Proof{
		"*": {confirmation.ProofCode, confirmation.ProofAccount}, "shop": {confirmation.ProofAssertion}}), withAssertionSecrets(map[string][]byte{"shop": []byte("0123456789abcdef0123456789abcdef-shop")}))
	b.stageForCustomer(t, customerActions...)
	_, bb := b.twoRequests(t)
	c := b.client(t)
	c.mustSignIn(b.customerAccount(t, jordan))
	b.refusedEverywhere(t, c, bb, http.StatusForbidden, "does not accept the way you showed us")
}

// TestCustomerSignOutEndsTheLinkSession: a customer proved by a code signs
// out from the request page; the session ends on the server, so neither
// the browser nor a copy of its cookie decides anything afterwards.
func TestCustomerSignOutEndsTheLinkSession(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withCustomerStage())
	inv, link := b.pendingRefund(t)
	c := b.client(t)
	page := c.open(link)
	tok, _ := page.doc(t).Find(`form[action="/sign-out"] input[name="_csrf"]`).Attr("value")
	if tok == "" {
		t.Fatal("the customer's request page offers no sign-out")
	}
	stolen := *c.sessionCookie()
	res := c.post("/sign-out", url.Values{"_csrf": {tok}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/requests?signed_out=1" {
		t.Fatalf("customer sign-out: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if got := c.get("/requests?signed_out=1"); text(got, t, "signed-out") == "" {
		t.Error("the page after sign-out does not say so")
	}
	thief := b.client(t)
	thief.header.Set("Cookie", stolen.Name+"="+stolen.Value)
	for _, who := range []*client{c, thief} {
		if res := who.get("/requests/" + inv.ID); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("the request after sign-out: %d, want 401", res.StatusCode)
		}
		if res := who.post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {tok}}); res.StatusCode/100 != 4 {
			t.Errorf("confirm after sign-out: %d, want refused", res.StatusCode)
		}
	}
	if got := b.inv(t, inv.ID).State; got != controlplane.AwaitingConfirmation {
		t.Errorf("the request is %s after sign-out, want untouched", got)
	}
	if res := b.client(t).post("/sign-out", url.Values{}); res.StatusCode/100 != 4 {
		t.Errorf("sign-out with no session: %d, want refused", res.StatusCode)
	}
}
