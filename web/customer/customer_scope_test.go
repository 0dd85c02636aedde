package customer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
)

// twoRequests proposes, for Jordan, a 1-cent refund in one task (A) and a
// $15.00 refund in another task, later (B), as an assistant might.
func twoRequests(t *testing.T, b *webtest.Stack) (a, bb controlplane.Invocation) {
	t.Helper()
	a = b.ProposeFor(t, b.CustomerTask(t, webtest.Jordan), "issue_refund",
		map[string]any{"order_id": "walnut lamp", "amount_cents": 1, "reason_code": "damaged"}, "A cent back.")
	b.Clock.Advance(time.Minute)
	bb = b.ProposeFor(t, b.CustomerTask(t, webtest.Jordan), "issue_refund",
		map[string]any{"order_id": "walnut lamp", "amount_cents": 1500, "reason_code": "damaged"}, "Fifteen dollars back.")
	return a, bb
}

// customerDecisionPaths are every POST route under /requests/:id/ the
// router has: each decides something about the request (confirm, decline,
// stop), so each must answer only to a proof that may decide it.
func customerDecisionPaths(t *testing.T, b *webtest.Stack) []string {
	t.Helper()
	var paths []string
	for _, r := range b.Web.Echo().Routes() {
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
func refusedEverywhere(t *testing.T, b *webtest.Stack, c *webtest.Client, inv controlplane.Invocation, status int, saying string) {
	t.Helper()
	tok := csrfOf(c, "/requests")
	for _, p := range customerDecisionPaths(t, b) {
		path := strings.Replace(p, ":id", inv.ID, 1)
		res := c.Post(path, url.Values{"_csrf": {tok}})
		if res.StatusCode != status || !strings.Contains(res.Text, saying) {
			t.Errorf("POST %s: %d, want %d saying %q\n%s", path, res.StatusCode, status, saying, res.Text)
		}
	}
	if got := b.Invocation(t, inv.ID); got.State != controlplane.AwaitingConfirmation || got.Version != inv.Version {
		t.Errorf("the request is %s (version %d), want untouched", got.State, got.Version)
	}
	task, err := b.Control.Task(context.Background(), inv.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if task.State != controlplane.TaskActive {
		t.Errorf("its task is %s, want still active", task.State)
	}
}

// csrfOf reads the session's CSRF token from the sign-out form a
// customer's pages carry.
func csrfOf(c *webtest.Client, path string) string {
	c.T.Helper()
	tok, _ := c.Get(path).Doc(c.T).Find(`form[action="/sign-out"] input[name="_csrf"]`).Attr("value")
	if tok == "" {
		c.T.Fatalf("no sign-out form on %s", path)
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
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage(), webtest.WithTypedCodes())
	a, bb := twoRequests(t, b)
	c := b.Client(t)
	c.OpenWithCode(b.Link(t, a, webtest.Jordan))

	if res := c.Get("/requests/" + bb.ID); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("request B with A's code: %d, want 401", res.StatusCode)
	}
	refusedEverywhere(t, b, c, bb, http.StatusUnauthorized, "Each request needs its own proof")
	page := c.Get(b.Link(t, bb, webtest.Jordan))
	if page.StatusCode != http.StatusOK || page.Doc(t).Find(`[data-testid="send-code-form"]`).Length() != 1 ||
		webtest.TextByTestID(page, t, "other-request") == "" {
		t.Errorf("B's link with A's code: %d, want its own proof step saying why\n%s", page.StatusCode, page.Text)
	}

	res := c.Post("/requests/"+a.ID+"/confirm", url.Values{"_csrf": {c.PageCSRF(c.Get("/requests/" + a.ID))}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm A with A's code: %d", res.StatusCode)
	}
	if got := b.Invocation(t, a.ID).State; got == controlplane.AwaitingConfirmation {
		t.Errorf("A is still awaiting after its confirmation")
	}
}

// TestAnAssertionDecidesOnlyItsRequest is the same for an assertion signed
// by the business's site for A's link.
func TestAnAssertionDecidesOnlyItsRequest(t *testing.T) {
	t.Parallel()
	secret := []byte("0123456789abcdef0123456789abcdef-shop")
	b := webtest.New(t, webtest.WithShop(), webtest.WithProofs(map[string][]confirmation.Proof{"shop": {confirmation.ProofAssertion}}), webtest.WithAssertionSecrets(map[string][]byte{"shop": secret}))
	b.StageForCustomer(t, webtest.CustomerActions...)
	a, bb := twoRequests(t, b)
	now := b.Clock.Now()
	linkA := b.Link(t, a, webtest.Jordan)
	signed := confirmation.SignAssertion(secret, confirmation.Assertion{Sub: webtest.Jordan, Sys: "shop", Link: linkSelector(linkA),
		IssuedAt: now.Unix(), ExpiresAt: now.Add(5 * time.Minute).Unix(), Nonce: fmt.Sprintf("n-%d-0123456789", time.Now().UnixNano())})
	c := b.Client(t)
	if res := c.Get(linkA + "?assertion=" + url.QueryEscape(signed)); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("assertion on A's link: %d", res.StatusCode)
	}
	refusedEverywhere(t, b, c, bb, http.StatusUnauthorized, "Each request needs its own proof")
	if res := c.Post("/requests/"+a.ID+"/decline", url.Values{"_csrf": {c.PageCSRF(c.Get("/requests/" + a.ID))}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("decline A with A's assertion: %d", res.StatusCode)
	}
	if got := b.Invocation(t, a.ID).State; got != controlplane.Rejected {
		t.Errorf("A is %s after its decline", got)
	}
}

// TestTheCustomersAccountDecidesAllTheirRequests: signed in with their own
// password, the customer decides A and B alike.
func TestTheCustomersAccountDecidesAllTheirRequests(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	a, bb := twoRequests(t, b)
	c := b.Client(t)
	c.MustSignIn(b.CustomerAccount(t, webtest.Jordan))
	for _, inv := range []controlplane.Invocation{a, bb} {
		res := c.Post("/requests/"+inv.ID+"/decline", url.Values{"_csrf": {c.PageCSRF(c.Get("/requests/" + inv.ID))}})
		if res.StatusCode != http.StatusSeeOther || b.Invocation(t, inv.ID).State != controlplane.Rejected {
			t.Errorf("decline %s with the account: %d, %s", inv.ID, res.StatusCode, b.Invocation(t, inv.ID).State)
		}
	}
}

// TestTheDecisionTakesOnlyProofsTheSystemAccepts: where the shop accepts
// only assertions, the customer's signed-in account — a proof other
// systems take — decides nothing there, on any deciding path.
func TestTheDecisionTakesOnlyProofsTheSystemAccepts(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithProofs(map[string][]confirmation.Proof{
		"*": {confirmation.ProofCode, confirmation.ProofAccount}, "shop": {confirmation.ProofAssertion}}), webtest.WithAssertionSecrets(map[string][]byte{"shop": []byte("0123456789abcdef0123456789abcdef-shop")}))
	b.StageForCustomer(t, webtest.CustomerActions...)
	_, bb := twoRequests(t, b)
	c := b.Client(t)
	c.MustSignIn(b.CustomerAccount(t, webtest.Jordan))
	refusedEverywhere(t, b, c, bb, http.StatusForbidden, "does not accept the way you showed us")
}

// TestCustomerSignOutEndsTheLinkSession: a customer proved by a code signs
// out from the request page; the session ends on the server, so neither
// the browser nor a copy of its cookie decides anything afterwards.
func TestCustomerSignOutEndsTheLinkSession(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	page := c.Open(link)
	tok, _ := page.Doc(t).Find(`form[action="/sign-out"] input[name="_csrf"]`).Attr("value")
	if tok == "" {
		t.Fatal("the customer's request page offers no sign-out")
	}
	stolen := *c.SessionCookie()
	res := c.Post("/sign-out", url.Values{"_csrf": {tok}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/requests?signed_out=1" {
		t.Fatalf("customer sign-out: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if got := c.Get("/requests?signed_out=1"); webtest.TextByTestID(got, t, "signed-out") == "" {
		t.Error("the page after sign-out does not say so")
	}
	thief := b.Client(t)
	thief.Header.Set("Cookie", stolen.Name+"="+stolen.Value)
	for _, who := range []*webtest.Client{c, thief} {
		if res := who.Get("/requests/" + inv.ID); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("the request after sign-out: %d, want 401", res.StatusCode)
		}
		if res := who.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {tok}}); res.StatusCode/100 != 4 {
			t.Errorf("confirm after sign-out: %d, want refused", res.StatusCode)
		}
	}
	if got := b.Invocation(t, inv.ID).State; got != controlplane.AwaitingConfirmation {
		t.Errorf("the request is %s after sign-out, want untouched", got)
	}
	if res := b.Client(t).Post("/sign-out", url.Values{}); res.StatusCode/100 != 4 {
		t.Errorf("sign-out with no session: %d, want refused", res.StatusCode)
	}
}
