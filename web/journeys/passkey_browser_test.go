package journeys_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/web/browsertest"
	"countersign/web/webtest"
)

// virtualAuthenticator turns on Chromium's WebAuthn domain and adds a
// platform authenticator (CTAP 2.1, resident keys, user verification that
// succeeds, presence simulated), returning its id.
func virtualAuthenticator(t *testing.T, ctx context.Context) webauthn.AuthenticatorID {
	t.Helper()
	id, err := chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) (webauthn.AuthenticatorID, error) {
		if _, err := cdp.Call(ctx, tg, webauthn.Enable, webauthn.EnableParams{}); err != nil {
			return "", err
		}
		res, err := cdp.Call(ctx, tg, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
			Options: &webauthn.VirtualAuthenticatorOptions{Protocol: webauthn.AuthenticatorProtocolCtap2,
				Ctap2version: webauthn.Ctap2versionCtap21, Transport: webauthn.AuthenticatorTransportInternal,
				HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}})
		return res.AuthenticatorID, err
	})
	if err != nil {
		t.Fatalf("virtual authenticator: %v", err)
	}
	return id
}

// credentialsOf lists what the virtual authenticator holds.
func credentialsOf(t *testing.T, ctx context.Context, id webauthn.AuthenticatorID) []*webauthn.Credential {
	t.Helper()
	creds, err := chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) ([]*webauthn.Credential, error) {
		res, err := cdp.Call(ctx, tg, webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: id})
		return res.Credentials, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

// passkeyConsole serves b's console with passkeys on at
// http://localhost:<port>, its relying party "localhost".
func passkeyConsole(t *testing.T, b *webtest.Stack) string {
	t.Helper()
	srv := b.ServeAnother(t, webtest.WithPasskeys())
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return "http://localhost:" + port
}

// TestBrowserPasskeyRegisterAndSignIn adds a passkey on the account page
// through Chromium's virtual authenticator (navigator.credentials.create
// in static/passkey.js), then signs in with the password and the passkey
// as the second factor (navigator.credentials.get) to the home page.
func TestBrowserPasskeyRegisterAndSignIn(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithNow(time.Now))
	console := passkeyConsole(t, b)
	agent := b.Users[accounts.Agent]
	ctx := browsertest.New(t, 90*time.Second)
	auth := virtualAuthenticator(t, ctx)

	if err := chromedp.Do(ctx,
		chromedp.Navigate(console+"/sign-in"),
		browserSignIn(agent),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`)),
		chromedp.Navigate(console+"/account/factors"),
		chromedp.SendKeys(chromedp.CSS(`#passkey-name`), "Work laptop"),
		chromedp.SendKeys(chromedp.CSS(`#passkey-password`), agent.Password),
		chromedp.Click(chromedp.CSS(`[data-testid="add-passkey"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="passkey"]`)),
	); err != nil {
		msg, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-passkey-error]`)))
		t.Fatalf("add a passkey: %v (page says %q)", err, msg)
	}
	listed, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="passkeys"]`)))
	if !strings.Contains(listed, "Work laptop") {
		t.Errorf("the account page lists %q", listed)
	}
	creds := credentialsOf(t, ctx, auth)
	if len(creds) != 1 || !creds[0].IsResidentCredential || creds[0].RpID != "localhost" {
		t.Fatalf("the authenticator holds %d credentials (%+v), want one resident for localhost", len(creds), creds)
	}
	browsertest.CheckAccessibility(t, ctx, "account factors with a passkey")

	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="sign-out"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-in-form"]`)),
		browserSignIn(agent),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="use-passkey"]`)),
	); err != nil {
		t.Fatalf("password of a person with a passkey: %v", err)
	}
	browsertest.CheckAccessibility(t, ctx, "factor step with a passkey")
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="use-passkey"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`)),
	); err != nil {
		msg, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-passkey-error]`)))
		t.Fatalf("sign in with the passkey: %v (page says %q)", err, msg)
	}
	keys, err := b.Factors.Passkeys(t.Context(), agent.ID)
	if err != nil || len(keys) != 1 || keys[0].LastUsedAt == nil {
		t.Fatalf("after the sign-in: %+v, %v", keys, err)
	}
}

// addPasskeyInBrowser signs agent in and adds a passkey on the account
// page, then signs out.
func addPasskeyInBrowser(t *testing.T, ctx context.Context, console string, agent webtest.User) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(console+"/sign-in"),
		browserSignIn(agent),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`)),
		chromedp.Navigate(console+"/account/factors"),
		chromedp.SendKeys(chromedp.CSS(`#passkey-name`), "Phone"),
		chromedp.SendKeys(chromedp.CSS(`#passkey-password`), agent.Password),
		chromedp.Click(chromedp.CSS(`[data-testid="add-passkey"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="passkey"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="sign-out"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-in-form"]`)),
	); err != nil {
		t.Fatalf("add a passkey: %v", err)
	}
}

// getAssertion is run on a page: it asks the authenticator for an
// assertion with the request options OPTS (the console's JSON) and gives
// the body static/passkey.js would post.
const getAssertion = `(async () => {
	const b = s => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), c => c.charCodeAt(0));
	const e = x => btoa(String.fromCharCode(...new Uint8Array(x))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
	const o = JSON.parse(%s).publicKey;
	o.challenge = b(o.challenge);
	(o.allowCredentials || []).forEach(c => { c.id = b(c.id); });
	const cred = await navigator.credentials.get({publicKey: o});
	const r = cred.response;
	return JSON.stringify({credential: {id: cred.id, rawId: e(cred.rawId), type: cred.type, clientExtensionResults: {},
		response: {clientDataJSON: e(r.clientDataJSON), authenticatorData: e(r.authenticatorData), signature: e(r.signature),
			userHandle: r.userHandle ? e(r.userHandle) : undefined}}});
})()`

// consoleFetch is run on a console page: it posts BODY to PATH with the
// page's CSRF token and gives "status body".
const consoleFetch = `fetch(%s, {method: "POST", headers: {"Content-Type": "application/json",
	"X-CSRF-Token": document.querySelector("input[name=_csrf]").value}, body: %s})
	.then(r => r.text().then(t => r.status + " " + t))`

// TestBrowserPasskeyFromAnotherOriginRefused: a page at another origin of
// the same host (http://localhost:<other port>, which the browser lets use
// the RP ID "localhost") gets a real assertion from the authenticator for
// the console's challenge; posted to the console's factor step it is
// refused, since its client data names that other origin. The passkey
// then works from the console's own page.
func TestBrowserPasskeyFromAnotherOriginRefused(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithNow(time.Now))
	console := passkeyConsole(t, b)
	agent := b.Users[accounts.Agent]
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!DOCTYPE html><html lang="en"><title>Another site</title><h1>Another site</h1></html>`))
	}))
	t.Cleanup(other.Close)
	_, port, _ := net.SplitHostPort(other.Listener.Addr().String())
	elsewhere := "http://localhost:" + port + "/"

	ctx := browsertest.New(t, 90*time.Second)
	virtualAuthenticator(t, ctx)
	addPasskeyInBrowser(t, ctx, console, agent)
	if err := chromedp.Do(ctx, browserSignIn(agent), chromedp.WaitVisible(chromedp.CSS(`[data-testid="use-passkey"]`))); err != nil {
		t.Fatal(err)
	}
	begun, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(consoleFetch,
		strconv.Quote("/sign-in/factor/passkey/begin"), `"{}"`), chromedp.EvalAwaitPromise))
	status, opts, _ := strings.Cut(begun, " ")
	if err != nil || status != "200" {
		t.Fatalf("begin: %q, %v", begun, err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(elsewhere)); err != nil {
		t.Fatal(err)
	}
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(getAssertion, strconv.Quote(opts)), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("an assertion on the other page: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(console+"/sign-in/factor"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="use-passkey"]`))); err != nil {
		t.Fatal(err)
	}
	answer, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(consoleFetch,
		strconv.Quote("/sign-in/factor/passkey"), strconv.Quote(body)), chromedp.EvalAwaitPromise))
	if err != nil || !strings.HasPrefix(answer, "422 ") || !strings.Contains(answer, "not accepted") {
		t.Fatalf("the other origin's assertion at the factor step: %q, %v; want 422 and a refusal", answer, err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(console+"/queue"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="use-passkey"]`))); err != nil {
		t.Fatalf("the queue after a refused passkey is not the factor step: %v", err)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="use-passkey"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`)),
	); err != nil {
		t.Fatalf("the passkey from the console's own page: %v", err)
	}
	if keys, _ := b.Factors.Passkeys(t.Context(), agent.ID); len(keys) != 1 || keys[0].LastUsedAt == nil {
		t.Fatalf("the passkey from the console's own page did not sign in: %+v", keys)
	}
}
