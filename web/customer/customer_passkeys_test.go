package customer_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"countersign/internal/consent"
	"countersign/internal/controlplane"
	"countersign/internal/mail"
	"countersign/web/webtest"
)

// mailsTo are the mails sent to to whose subject starts with subject.
func mailsTo(b *webtest.Stack, to, subject string) []mail.Message {
	var out []mail.Message
	for _, m := range b.Mail.Sent() {
		if strings.EqualFold(m.To, to) && strings.HasPrefix(m.Subject, subject) {
			out = append(out, m)
		}
	}
	return out
}

// passkeyEvents are the recorded customer_passkey.* events, oldest first:
// their action, invocation and data.
func passkeyEvents(t *testing.T, b *webtest.Stack) []struct {
	Action, InvocationID string
	Data                 map[string]any
} {
	t.Helper()
	rows, err := b.Store.Pool().Query(t.Context(), `SELECT action, coalesce(invocation_id, ''), data FROM events
		WHERE action LIKE 'customer_passkey.%' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []struct {
		Action, InvocationID string
		Data                 map[string]any
	}
	for rows.Next() {
		var e struct {
			Action, InvocationID string
			Data                 map[string]any
		}
		if err := rows.Scan(&e.Action, &e.InvocationID, &e.Data); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// declineAs declines request id from c's session, as the page's form does.
func declineAs(t *testing.T, c *webtest.Client, id string) {
	t.Helper()
	if res := c.Post("/requests/"+id+"/decline", url.Values{"_csrf": {c.PageCSRF(c.Get("/requests/" + id))}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("decline %s: %d", id, res.StatusCode)
	}
}

// TestACustomerSeesAndRemovesTheirPasskeys: the request page of a browser
// proven by the customer's account (or the mail's link, or the business's
// assertion) links to the customer's passkeys for the shop; the list shows
// each one's name, when it was added and when last used, and removes one
// after a confirmation page, by a POST with the page's CSRF token. Adding
// and removing each record an audit event from its own data and mail the
// customer's contact on file a notice. The link alone and a typed code's
// session see no list.
func TestACustomerSeesAndRemovesTheirPasskeys(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage(), webtest.WithTypedCodes())
	pk, origin := passkeyCustomers(t, b)
	first, _ := b.PendingRefund(t)
	account := pk.Client(t)
	account.MustSignIn(b.CustomerAccount(t, webtest.Jordan))
	declineAs(t, account, first.ID)
	k, status, _ := addCustomerPasskey(t, account, first.ID, origin)
	if status != http.StatusOK {
		t.Fatalf("adding the passkey: %d", status)
	}
	if got := mailsTo(b, webtest.Jordan, "A passkey was added for Harbour & Pine"); len(got) != 1 || !strings.Contains(got[0].Body, "If this wasn't you") ||
		got[0].FromName != "Harbour & Pine via Countersign" {
		t.Fatalf("the notice of the passkey added: %+v", got)
	}

	list := account.Get("/requests/"+first.ID).Doc(t).Find(`[data-testid="passkeys-link"] a`).AttrOr("href", "")
	if list != "/requests/"+first.ID+"/passkeys" {
		t.Fatalf("the request page links to %q, want the passkeys", list)
	}
	doc := account.Get(list).Doc(t)
	if n := doc.Find(`[data-testid="passkey-row"]`).Length(); n != 1 {
		t.Fatalf("the list shows %d passkeys, want 1", n)
	}
	if name := strings.TrimSpace(doc.Find(`[data-testid="passkey-name"]`).Text()); name != "Passkey" {
		t.Errorf("listed as %q", name)
	}
	if strings.TrimSpace(doc.Find(`[data-testid="passkey-last-used"]`).Text()) != "Not used yet" ||
		doc.Find(`[data-testid="passkey-added-at"]`).AttrOr("datetime", "") == "" {
		t.Errorf("the row: %s", doc.Find(`[data-testid="passkey-row"]`).Text())
	}
	// A decision with it shows when it was last used.
	_, link := b.PendingRefund(t)
	if status, r := decideWithPasskey(t, pk.Client(t), link, consent.Decline, k, origin); status != http.StatusOK {
		t.Fatalf("decline with the passkey: %d %+v", status, r)
	}
	if used := account.Get(list).Doc(t).Find(`[data-testid="passkey-last-used"] time`).Length(); used != 1 {
		t.Error("the list does not show when the passkey was last used")
	}

	// The link alone, and a typed code's session, see no list.
	third, thirdLink := b.PendingRefund(t)
	holder := pk.Client(t)
	holder.Get(thirdLink)
	if res := holder.Get("/requests/" + third.ID + "/passkeys"); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the passkeys with the link alone: %d, want 401", res.StatusCode)
	}
	code := pk.Client(t)
	if n := code.OpenWithCode(thirdLink).Doc(t).Find(`[data-testid="passkeys-link"]`).Length(); n != 0 {
		t.Error("a code's session is shown the passkeys' link")
	}
	if res := code.Get("/requests/" + third.ID + "/passkeys"); res.StatusCode != http.StatusForbidden {
		t.Errorf("the passkeys from a code's session: %d, want 403", res.StatusCode)
	}

	// Removing: the row's button opens a confirmation; its POST needs the
	// page's token.
	confirm := account.Get(list).Doc(t).Find(`[data-testid="passkey-remove"]`).AttrOr("href", "")
	page := account.Get(confirm)
	form := page.Doc(t).Find(`[data-testid="passkey-remove-confirm"] form`)
	if page.StatusCode != http.StatusOK || form.AttrOr("method", "") != "post" || form.AttrOr("action", "") != confirm {
		t.Fatalf("the confirmation page: %d, form %q %q", page.StatusCode, form.AttrOr("method", ""), form.AttrOr("action", ""))
	}
	if res := account.Post(confirm, url.Values{}); res.StatusCode != http.StatusForbidden {
		t.Errorf("a removal without the page's token: %d, want 403", res.StatusCode)
	}
	if res := code.Post(strings.Replace(confirm, first.ID, third.ID, 1), url.Values{"_csrf": {code.PageCSRF(code.Get("/requests/" + third.ID))}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("a removal from a code's session: %d, want 403", res.StatusCode)
	}
	res := account.Post(confirm, url.Values{"_csrf": {form.Find(`input[name="_csrf"]`).AttrOr("value", "")}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != list+"?removed=1" {
		t.Fatalf("the removal: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	after := account.Get(list + "?removed=1").Doc(t)
	if after.Find(`[data-testid="passkey-removed"]`).Length() != 1 || after.Find(`[data-testid="passkey-row"]`).Length() != 0 {
		t.Errorf("after the removal the list shows: %s", after.Find(`[data-testid="customer-passkeys"]`).Text())
	}
	if keys, _ := b.Store.CustomerPasskeysOf(t.Context(), "shop", webtest.Jordan); len(keys) != 0 {
		t.Fatalf("%d passkeys left", len(keys))
	}
	if res := account.Post(confirm, url.Values{"_csrf": {form.Find(`input[name="_csrf"]`).AttrOr("value", "")}}); res.StatusCode != http.StatusNotFound {
		t.Errorf("removing it twice: %d, want 404", res.StatusCode)
	}
	if got := mailsTo(b, webtest.Jordan, "A passkey was removed for Harbour & Pine"); len(got) != 1 || !strings.Contains(got[0].Body, "If this wasn't you") {
		t.Fatalf("the notice of the passkey removed: %+v", got)
	}
	events := passkeyEvents(t, b)
	if len(events) != 2 || events[0].Action != string(controlplane.EventCustomerPasskeyAdded) || events[1].Action != string(controlplane.EventCustomerPasskeyRemoved) {
		t.Fatalf("the audit trail: %+v", events)
	}
	for _, e := range events {
		if e.InvocationID != first.ID || e.Data["shop"] != "Harbour & Pine" || e.Data["name"] != "Passkey" || e.Data["proof"] != "account" || e.Data["system"] != "shop" {
			t.Errorf("%s records %+v on %q", e.Action, e.Data, e.InvocationID)
		}
	}
	// The removed passkey decides nothing: the link page offers none.
	_, last := b.PendingRefund(t)
	if n := pk.Client(t).Get(last).Doc(t).Find(`form[data-passkey="get"]`).Length(); n != 0 {
		t.Error("a link page still offers the removed passkey")
	}
}

// TestAPasskeyIsAddedOnlyAfterThisSessionDecidedIt: a browser proven by
// the mail's link is offered "Use a passkey next time" only once it has
// decided the request; before, the registration's begin and finish are
// refused (403 passkey_after_deciding). A browser signed in to the
// customer's account that did not decide the request (another browser
// did) is refused too.
func TestAPasskeyIsAddedOnlyAfterThisSessionDecidedIt(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	pk, origin := passkeyCustomers(t, b)
	inv, link := b.PendingRefund(t)
	c := pk.Client(t)
	c.Open(link)
	if n := c.Get("/requests/" + inv.ID).Doc(t).Find(`[data-testid="passkey-offer"]`).Length(); n != 0 {
		t.Error("a passkey offered before the decision")
	}
	if _, status, r := addCustomerPasskey(t, c, inv.ID, origin); status != http.StatusForbidden || !strings.Contains(r.Error, "once you have decided") {
		t.Errorf("a registration begun before the decision: %d %+v, want 403", status, r)
	}
	tok := csrfOf(c, "/requests/"+inv.ID)
	if status, raw := postJSON(t, c, "/requests/"+inv.ID+"/passkey", tok, map[string]any{"credential": json.RawMessage(`{}`)}); status != http.StatusForbidden ||
		!bytes.Contains(raw, []byte("once you have decided")) {
		t.Errorf("a registration finished before the decision: %d %s, want 403", status, raw)
	}

	// Another browser decides it; an account browser that did not is refused.
	jordan := b.CustomerAccount(t, webtest.Jordan)
	other := pk.Client(t)
	other.MustSignIn(jordan)
	declineAs(t, other, inv.ID)
	elsewhere := pk.Client(t)
	elsewhere.MustSignIn(jordan)
	if _, status, _ := addCustomerPasskey(t, elsewhere, inv.ID, origin); status != http.StatusForbidden {
		t.Errorf("an account's browser that did not decide the request: %d, want 403", status)
	}
	if _, status, _ := addCustomerPasskey(t, c, inv.ID, origin); status != http.StatusForbidden {
		t.Errorf("the link's browser after another browser decided: %d, want 403", status)
	}

	next, nextLink := b.PendingRefund(t)
	d := pk.Client(t)
	d.Open(nextLink)
	declineAs(t, d, next.ID)
	if d.Get("/requests/"+next.ID).Doc(t).Find(`[data-testid="add-passkey"]`).Length() != 1 {
		t.Fatal("the link's browser is not offered a passkey after its decision")
	}
	if _, status, r := addCustomerPasskey(t, d, next.ID, origin); status != http.StatusOK {
		t.Fatalf("a passkey added after the link's decision: %d %+v", status, r)
	}
	if keys, _ := b.Store.CustomerPasskeysOf(t.Context(), "shop", webtest.Jordan); len(keys) != 1 || keys[0].Proof != "link" {
		t.Fatalf("the passkeys kept: %+v", keys)
	}
}

// TestAPasskeysSessionDecidesOnlyWithItsSignature: confirming with a
// passkey when the order changed at the shop meanwhile carries the
// request on as a fresh quote, which the passkey's browser now sees. Its
// page offers no plain confirm or decline, and posting them is refused
// (403): the proof recorded would be "passkey" with no signature of this
// decision. Nothing is decided or recorded.
func TestAPasskeysSessionDecidesOnlyWithItsSignature(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	pk, origin := passkeyCustomers(t, b)
	first, _ := b.PendingRefund(t)
	account := pk.Client(t)
	account.MustSignIn(b.CustomerAccount(t, webtest.Jordan))
	declineAs(t, account, first.ID)
	k, status, _ := addCustomerPasskey(t, account, first.ID, origin)
	if status != http.StatusOK {
		t.Fatalf("adding the passkey: %d", status)
	}

	inv, link := b.PendingRefund(t)
	refundAtTheShop(t, b, inv.Target.ID, 500, "goodwill, in another tab")
	c := pk.Client(t)
	status, r := decideWithPasskey(t, c, link, consent.Confirm, k, origin)
	fresh := strings.TrimPrefix(r.Next, "/requests/")
	if status != http.StatusOK || fresh == inv.ID || fresh == "" {
		t.Fatalf("confirm of a changed order with the passkey: %d %+v, want the fresh quote", status, r)
	}
	page := c.Get("/requests/" + fresh)
	doc := page.Doc(t)
	if doc.Find(`[data-testid="passkey-only"]`).Length() != 1 || doc.Find(`[data-testid="confirm"], [data-testid="decline"]`).Length() != 0 {
		t.Errorf("the fresh quote's page offers the plain decision to a passkey's browser")
	}
	// The quote as it is, as a page that offered the forms would post it.
	now := b.Invocation(t, fresh)
	digest, err := consent.QuoteDigest(now.QuoteJSON)
	if err != nil {
		t.Fatal(err)
	}
	tok := c.CSRF("/requests/" + fresh)
	for _, verb := range []string{"confirm", "decline"} {
		res := c.Post("/requests/"+fresh+"/"+verb, url.Values{"_csrf": {tok}, "quote_version": {strconv.Itoa(int(now.Version))},
			"quote_digest": {base64.RawURLEncoding.EncodeToString(digest)}})
		if res.StatusCode != http.StatusForbidden || !strings.Contains(res.Text, "decide with it") {
			t.Errorf("a plain %s from the passkey's browser: %d, want 403 saying to decide with the passkey", verb, res.StatusCode)
		}
	}
	// In the customer's language: the control plane's refusal is said from
	// the catalogue, not in its English.
	withLanguage(c, "fr")
	res := c.Post("/requests/"+fresh+"/confirm", url.Values{"_csrf": {tok}, "quote_version": {strconv.Itoa(int(now.Version))},
		"quote_digest": {base64.RawURLEncoding.EncodeToString(digest)}})
	if got := webtest.TextByTestID(res, t, "error-message"); res.StatusCode != http.StatusForbidden ||
		got != "Vous nous avez prouvé votre identité avec votre clé d’accès : c’est donc avec elle que vous décidez. Rien n’a été décidé." {
		t.Errorf("a plain confirm from the passkey's browser, in French: %d %q", res.StatusCode, got)
	}
	if got := b.Invocation(t, fresh).State; got != controlplane.AwaitingConfirmation {
		t.Errorf("the fresh quote is %s, want still awaiting", got)
	}
	if _, ok, err := b.Control.Consent(t.Context(), fresh); err != nil || ok {
		t.Errorf("a consent was recorded on the fresh quote (%v)", err)
	}
}
