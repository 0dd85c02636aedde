package journeys_test

import (
	"context"
	"net"
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
