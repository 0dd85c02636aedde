package journeys_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/internal/consent"
	"countersign/internal/controlplane"
	"countersign/internal/custkeys"
	"countersign/web/browsertest"
	"countersign/web/webtest"
)

// pageFormPost is run on a page: it posts the form fields FIELDS (a JSON
// object) to PATH with the page's CSRF token, as a form of the page would,
// and gives "status body" without following a redirect.
const pageFormPost = `(() => {
	const f = new URLSearchParams(%s);
	f.set("_csrf", document.querySelector("input[name=_csrf]").value);
	return fetch(%s, {method: "POST", body: f, redirect: "manual"}).then(r => r.text().then(t => r.status + " " + t));
})()`

// postFromPage posts fields (a JSON object) from the page open in ctx to
// path as a form, or as JSON with the CSRF header when asJSON; it gives
// the status and the body.
func postFromPage(t *testing.T, ctx context.Context, path, fields string, asJSON bool) (int, string) {
	t.Helper()
	script := fmt.Sprintf(pageFormPost, fields, strconv.Quote(path))
	if asJSON {
		script = fmt.Sprintf(consoleFetch, strconv.Quote(path), strconv.Quote(fields))
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](script, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("POST %s from the page: %v", path, err)
	}
	status, body, _ := strings.Cut(out, " ")
	code, _ := strconv.Atoi(status)
	return code, body
}

// TestBrowserAHostileAssistantCannotDecide: an assistant proposes a
// refund with its API key and, in a Chromium browser context of its own
// (a virtual authenticator in it), opens the confirmation link the API
// answered — the link that reaches it, not the mail — and tries all the
// page offers without Jordan's mailbox or device. Codes are off: no code
// field is offered, and a code posted anyway is refused. The link alone
// sees no request and decides nothing: confirm and decline are refused.
// A passkey cannot be added from its session, nor a decision begun with
// one. "E-mail me a link to decide" mails Jordan's address on file, not
// the assistant. After each refusal the request still awaits Jordan, and
// nothing reached the shop.
func TestBrowserAHostileAssistantCannotDecide(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	b.StageForCustomer(t, "issue_refund")
	console := passkeyConsole(t, b)
	res := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/invocations", map[string]any{"action": "issue_refund",
		"args": map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}}).Want(t, http.StatusCreated)
	id := res.JSON["id"].(string)
	relayed := res.JSON["next"].(map[string]any)["url"].(string)
	link := strings.TrimPrefix(relayed, b.Server.URL)
	if link == relayed || !strings.HasPrefix(link, "/c/") {
		t.Fatalf("next.url is %q, want a confirmation link of this console", relayed)
	}
	undecided := func(after string) {
		t.Helper()
		if st := b.InvocationState(t, id); st != controlplane.AwaitingConfirmation {
			t.Fatalf("after %s the request is %s, want still awaiting the customer", after, st)
		}
	}

	ctx := browsertest.New(t, 120*time.Second)
	asst := anotherBrowser(t, ctx)
	auth := virtualAuthenticator(t, asst)
	browse(t, asst, "the relayed link", chromedp.Navigate(console+link), chromedp.WaitVisible(chromedp.CSS(`[data-testid="prove"]`)))
	if n := countOnPage(t, asst, `[data-testid="send-code-form"], [data-testid="code-form"], input[name="code"], [data-testid="send-code"]`); n != 0 {
		t.Errorf("the link page offers a code where codes are off (%d fields):\n%s", n, pageTextOf(t, asst, `main`))
	}
	if n := countOnPage(t, asst, `[data-testid="confirm"], [data-testid="decline"], [data-testid="passkey-decide"]`); n != 0 {
		t.Errorf("the link alone offers %d decisions", n)
	}

	// A code read out in a chat: asked for, and typed in.
	for _, path := range []string{link + "/code", link + "/verify"} {
		if status, body := postFromPage(t, asst, path, `{"code": "123456"}`, false); status != http.StatusForbidden {
			t.Errorf("POST %s with a code: %d, want 403\n%s", path, status, body)
		}
		undecided("a code posted to " + path)
	}
	// The link itself, as if it were the proof.
	for _, verb := range []string{"confirm", "decline"} {
		if status, body := postFromPage(t, asst, "/requests/"+id+"/"+verb, `{}`, false); status != http.StatusUnauthorized {
			t.Errorf("POST /requests/%s/%s with the link only: %d, want 401\n%s", id, verb, status, body)
		}
		undecided(verb + " with the link only")
	}
	browse(t, asst, "the request with the link only", chromedp.Navigate(console+"/requests/"+id), chromedp.WaitReady(chromedp.CSS(`main`)))
	if n := countOnPage(t, asst, `[data-testid="request-title"], [data-testid="confirm"]`); n != 0 {
		t.Errorf("the assistant's browser sees the request with the link only:\n%s", pageTextOf(t, asst, `main`))
	}

	// A passkey of its own: added from its session, or used to decide.
	browse(t, asst, "back to the link", chromedp.Navigate(console+link), chromedp.WaitVisible(chromedp.CSS(`[data-testid="prove"]`)))
	if status, body := postFromPage(t, asst, "/requests/"+id+"/passkey/begin", `{}`, true); status != http.StatusUnauthorized {
		t.Errorf("a passkey registration begun from the assistant's session: %d, want 401\n%s", status, body)
	}
	inv := b.Invocation(t, id)
	digest, err := consent.QuoteDigest(inv.QuoteJSON)
	if err != nil {
		t.Fatal(err)
	}
	decide := fmt.Sprintf(`{"decision": "confirm", "version": %q, "digest": %q}`, strconv.Itoa(int(inv.Version)), hex.EncodeToString(digest))
	if status, body := postFromPage(t, asst, link+"/passkey/begin", decide, true); status != http.StatusNotFound || !strings.Contains(body, "no passkey") {
		t.Errorf("a passkey decision begun for a customer without one: %d, want 404 saying there is none\n%s", status, body)
	}
	if has, err := b.CustomerPasskeys.Has(t.Context(), custkeys.Customer{System: "shop", Ref: webtest.Jordan}); err != nil || has {
		t.Errorf("Jordan has a passkey after the assistant's attempts (%v)", err)
	}
	if creds := credentialsOf(t, asst, auth); len(creds) != 0 {
		t.Errorf("the assistant's authenticator holds %d credentials, want none", len(creds))
	}
	undecided("the passkey attempts")

	// Its own press of "E-mail me a link to decide".
	sent, _ := mailLinkFromThePage(t, asst, b)
	if !strings.EqualFold(sent.To, webtest.Jordan) {
		t.Errorf("the mail went to %q, want Jordan's address on file", sent.To)
	}
	if said := pageTextOf(t, asst, `[data-testid="link-sent"]`); strings.Contains(said, webtest.Jordan) {
		t.Errorf("the page tells the assistant the customer's whole address: %q", said)
	}
	undecided("the mail")
	if effects := b.ShopEffects(t, ""); len(effects) != 0 {
		t.Errorf("the shop recorded %d effects", len(effects))
	}
}
