package customer_test

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"countersign/internal/consent"
	"countersign/internal/controlplane"
	"countersign/internal/factors/softkey"
	"countersign/web/webtest"
)

// passkeyCustomers serves b's console with passkeys on at
// http://localhost:<port> and returns a stack whose clients browse it.
func passkeyCustomers(t *testing.T, b *webtest.Stack) (*webtest.Stack, string) {
	t.Helper()
	srv := b.ServeAnother(t, webtest.WithPasskeys())
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	base := "http://localhost:" + port
	return &webtest.Stack{Server: &httptest.Server{URL: base}, Store: b.Store, Mail: b.Mail, Links: b.Links}, base
}

// postJSON posts body as static/passkey.js does.
func postJSON(t *testing.T, c *webtest.Client, path, csrf string, body any) (int, json.RawMessage) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, c.Stack.Server.URL+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", csrf)
	req.Header.Set("Origin", c.Stack.Server.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res := c.Do(req)
	return res.StatusCode, json.RawMessage(res.Text)
}

type passkeyReply struct{ Next, Error string }

func replyOf(t *testing.T, raw json.RawMessage) passkeyReply {
	t.Helper()
	var r passkeyReply
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	return r
}

// addCustomerPasskey registers a passkey from c's session on the page of
// decided request id, as "Use a passkey next time" does.
func addCustomerPasskey(t *testing.T, c *webtest.Client, id, origin string) (*softkey.Key, int, passkeyReply) {
	t.Helper()
	tok := csrfOf(c, "/requests/"+id)
	status, opts := postJSON(t, c, "/requests/"+id+"/passkey/begin", tok, map[string]string{})
	if status != http.StatusOK {
		return nil, status, replyOf(t, opts)
	}
	k, cred, err := softkey.Create(opts, "localhost", origin)
	if err != nil {
		t.Fatal(err)
	}
	status, raw := postJSON(t, c, "/requests/"+id+"/passkey", tok, map[string]any{"credential": json.RawMessage(cred)})
	return k, status, replyOf(t, raw)
}

// decideWithPasskey opens link in c, reads what its passkey form shows and
// decides with k at origin; it returns the finish's answer.
func decideWithPasskey(t *testing.T, c *webtest.Client, link, decision string, k *softkey.Key, origin string) (int, passkeyReply) {
	t.Helper()
	doc := c.Get(link).Doc(t)
	form := doc.Find(`form[data-passkey="get"]:has(input[name="decision"][value="` + decision + `"])`)
	if form.Length() != 1 {
		t.Fatalf("the link page offers no %q with a passkey", decision)
	}
	fields := map[string]any{"decision": decision, "version": form.Find(`input[name="version"]`).AttrOr("value", ""),
		"digest": form.Find(`input[name="digest"]`).AttrOr("value", "")}
	tok := form.Find(`input[name="_csrf"]`).AttrOr("value", "")
	status, opts := postJSON(t, c, link+"/passkey/begin", tok, fields)
	if status != http.StatusOK {
		return status, replyOf(t, opts)
	}
	cred, err := k.Get(opts, "localhost", origin)
	if err != nil {
		t.Fatal(err)
	}
	fields["credential"] = json.RawMessage(cred)
	status, raw := postJSON(t, c, link+"/passkey", tok, fields)
	return status, replyOf(t, raw)
}

// TestAPasskeyIsNeverAddedFromACodesSession: the link alone adds no
// passkey; a customer who showed it's them with a typed code is not offered a passkey after deciding, and the
// registration's routes refuse that session (403), whatever the page
// shows; the same customer signed in to their account, on a request the
// account decides, is offered it and adds one.
func TestAPasskeyIsNeverAddedFromACodesSession(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage(), webtest.WithTypedCodes())
	pk, origin := passkeyCustomers(t, b)
	inv, link := b.PendingRefund(t)
	// Whoever holds only the link (the assistant) adds nothing.
	holder := pk.Client(t)
	tok, _ := holder.Get(link).Doc(t).Find(`input[name="_csrf"]`).Attr("value")
	if status, raw := postJSON(t, holder, "/requests/"+inv.ID+"/passkey/begin", tok, map[string]string{}); status != http.StatusUnauthorized {
		t.Errorf("a passkey added with the link alone: %d %s, want 401", status, raw)
	}
	code := pk.Client(t)
	page := code.OpenWithCode(link)
	if res := code.Post("/requests/"+inv.ID+"/decline", url.Values{"_csrf": {code.PageCSRF(page)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("decline with the code: %d", res.StatusCode)
	}
	if n := code.Get("/requests/" + inv.ID).Doc(t).Find(`[data-testid="passkey-offer"]`).Length(); n != 0 {
		t.Error("a code's session is offered a passkey")
	}
	if _, status, r := addCustomerPasskey(t, code, inv.ID, origin); status != http.StatusForbidden || !strings.Contains(r.Error, "with a code") {
		t.Errorf("a passkey added from a code's session: %d %+v, want 403", status, r)
	}
	if keys, _ := b.Store.CustomerPasskeysOf(t.Context(), "shop", webtest.Jordan); len(keys) != 0 {
		t.Fatalf("a code's session added %d passkeys", len(keys))
	}

	// The account, on a request it decides itself.
	next, _ := b.PendingRefund(t)
	account := pk.Client(t)
	account.MustSignIn(b.CustomerAccount(t, webtest.Jordan))
	if res := account.Post("/requests/"+next.ID+"/decline", url.Values{"_csrf": {account.PageCSRF(account.Get("/requests/" + next.ID))}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("decline with the account: %d", res.StatusCode)
	}
	if account.Get("/requests/"+next.ID).Doc(t).Find(`[data-testid="add-passkey"]`).Length() != 1 {
		t.Fatal("the customer's account is not offered a passkey after the decision")
	}
	if _, status, r := addCustomerPasskey(t, account, next.ID, origin); status != http.StatusOK || r.Next != "/requests/"+next.ID+"?passkey=added" {
		t.Fatalf("a passkey added from the account: %d %+v", status, r)
	}
	if got := webtest.TextByTestID(account.Get("/requests/"+next.ID+"?passkey=added"), t, "passkey-added"); !strings.Contains(got, "Harbour & Pine") {
		t.Errorf("after adding: %q", got)
	}
}

// TestAPasskeyDecidesTheRequestItSigned: a returning customer opens a new
// request's link with nothing but their passkey: the page offers
// the action's confirm and decline words, the assertion handed to the control plane
// verifies offline against the quote shown (consent.Evidence.Verify), the
// request is confirmed with the proof "passkey", and the browser is proven
// for that request only. A page of another version, or an answer posted
// to another request's link, decides nothing.
func TestAPasskeyDecidesTheRequestItSigned(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	pk, origin := passkeyCustomers(t, b)
	first, _ := b.PendingRefund(t)
	account := pk.Client(t)
	account.MustSignIn(b.CustomerAccount(t, webtest.Jordan))
	if res := account.Post("/requests/"+first.ID+"/decline", url.Values{"_csrf": {account.PageCSRF(account.Get("/requests/" + first.ID))}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("decline with the account: %d", res.StatusCode)
	}
	k, status, _ := addCustomerPasskey(t, account, first.ID, origin)
	if status != http.StatusOK {
		t.Fatalf("adding the passkey: %d", status)
	}

	inv, link := b.PendingRefund(t)
	other, otherLink := b.PendingRefund(t)
	c := pk.Client(t)
	status, r := decideWithPasskey(t, c, link, consent.Confirm, k, origin)
	if status != http.StatusOK || r.Next != "/requests/"+inv.ID {
		t.Fatalf("confirm with the passkey: %d %+v", status, r)
	}
	if got := b.Invocation(t, inv.ID).State; got == controlplane.AwaitingConfirmation {
		t.Fatalf("the request is still %s", got)
	}
	kept := b.Consent(t, inv.ID)
	if kept.Passkey == nil || kept.Proof != "passkey" || kept.Decision != consent.Confirm {
		t.Fatalf("the decision was recorded as %+v, want a passkey's confirmation", kept.Evidence)
	}
	if err := kept.Verify(inv.ID, kept.Quote); err != nil {
		t.Fatalf("the recorded evidence does not verify against the quote shown: %v", err)
	}
	if err := kept.Verify(other.ID, kept.Quote); err == nil {
		t.Fatal("the evidence verifies for another request")
	}
	if res := c.Get("/requests/" + other.ID); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("another request with the passkey's session: %d, want 401", res.StatusCode)
	}

	// The other request's page, then its quote moves on before the answer.
	d := pk.Client(t)
	doc := d.Get(otherLink).Doc(t)
	// The passkey's buttons say the action's own words, as the plain ones.
	q := b.Invocation(t, other.ID).Quote
	if q.ConfirmLabel == "" || q.DeclineLabel == "" {
		t.Fatalf("the refund's quote has no labels: %+v", q)
	}
	for id, want := range map[string]string{"passkey-confirm": q.ConfirmLabel, "passkey-decline": q.DeclineLabel} {
		if got := strings.TrimSpace(doc.Find(`[data-testid="` + id + `"]`).Text()); got != want {
			t.Errorf("the %s button says %q, want the action's %q", id, got, want)
		}
	}
	form := doc.Find(`form[data-passkey="get"]:has(input[name="decision"][value="confirm"])`)
	tok := form.Find(`input[name="_csrf"]`).AttrOr("value", "")
	stale := map[string]any{"decision": "confirm", "version": "0", "digest": form.Find(`input[name="digest"]`).AttrOr("value", "")}
	if status, raw := postJSON(t, d, otherLink+"/passkey/begin", tok, stale); status != http.StatusConflict {
		t.Errorf("a page of another version: %d %s, want 409", status, raw)
	}
	// An answer begun on this link, posted to the other link's finish.
	fields := map[string]any{"decision": "confirm", "version": form.Find(`input[name="version"]`).AttrOr("value", ""),
		"digest": form.Find(`input[name="digest"]`).AttrOr("value", "")}
	third, thirdLink := b.PendingRefund(t)
	thirdForm := d.Get(thirdLink).Doc(t).Find(`form[data-passkey="get"]:has(input[name="decision"][value="confirm"])`)
	thirdFields := map[string]any{"decision": "confirm", "version": thirdForm.Find(`input[name="version"]`).AttrOr("value", ""),
		"digest": thirdForm.Find(`input[name="digest"]`).AttrOr("value", "")}
	status, opts := postJSON(t, d, thirdLink+"/passkey/begin", tok, thirdFields)
	if status != http.StatusOK {
		t.Fatalf("begin on the third request: %d", status)
	}
	cred, _ := k.Get(opts, "localhost", origin)
	fields["credential"] = json.RawMessage(cred)
	if status, raw := postJSON(t, d, otherLink+"/passkey", tok, fields); status != http.StatusUnprocessableEntity {
		t.Errorf("an answer for one request posted to another's: %d %s, want 422", status, raw)
	}
	for _, id := range []string{other.ID, third.ID} {
		if got := b.Invocation(t, id).State; got != controlplane.AwaitingConfirmation {
			t.Errorf("%s is %s, want still awaiting", id, got)
		}
	}
	for _, id := range []string{other.ID, third.ID} {
		if _, ok, err := b.Control.Consent(t.Context(), id); err != nil || ok {
			t.Errorf("a customer decision was recorded on %s (%v)", id, err)
		}
	}
}

// TestThePageSaysAPasskeyWasAddedOnlyWhereItWas: "Your passkey is added"
// follows this browser's adding one on this request. A customer who has a
// passkey already, deciding another request in another browser, is not
// told one was added there, whatever the address says.
func TestThePageSaysAPasskeyWasAddedOnlyWhereItWas(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	pk, origin := passkeyCustomers(t, b)
	first, _ := b.PendingRefund(t)
	jordan := b.CustomerAccount(t, webtest.Jordan)
	laptop := pk.Client(t)
	laptop.MustSignIn(jordan)
	declineAs(t, laptop, first.ID)
	if _, status, r := addCustomerPasskey(t, laptop, first.ID, origin); status != http.StatusOK {
		t.Fatalf("adding the passkey: %d %+v", status, r)
	}
	if n := laptop.Get("/requests/" + first.ID + "?passkey=added").Doc(t).Find(`[data-testid="passkey-added"]`).Length(); n != 1 {
		t.Error("the browser that added the passkey is not told so")
	}
	second, _ := b.PendingRefund(t)
	phone := pk.Client(t)
	phone.MustSignIn(jordan)
	declineAs(t, phone, second.ID)
	if n := phone.Get("/requests/" + second.ID + "?passkey=added").Doc(t).Find(`[data-testid="passkey-added"]`).Length(); n != 0 {
		t.Error("a browser that added no passkey is told one was added")
	}
}
