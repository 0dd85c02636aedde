package journeys_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/web/browsertest"
	"countersign/web/webtest"
)

// stepUpFetch posts, from the page open in ctx, a step-up begin or finish
// of card inv at version and hash (what a page would show), with the
// browser's credential when given; it returns the status and the body.
func stepUpFetch(t *testing.T, ctx context.Context, path string, version int32, hash []byte, credential string) (string, string) {
	t.Helper()
	body := map[string]any{"expected_version": strconv.Itoa(int(version)), "args_hash": hex.EncodeToString(hash)}
	if credential != "" {
		var c struct {
			Credential json.RawMessage `json:"credential"`
		}
		if err := json.Unmarshal([]byte(credential), &c); err != nil {
			t.Fatal(err)
		}
		body["credential"] = c.Credential
	}
	raw, _ := json.Marshal(body)
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(consoleFetch, strconv.Quote(path), strconv.Quote(string(raw))),
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	status, text, _ := strings.Cut(out, " ")
	return status, text
}

// assertFor has the authenticator answer the request options opts on the
// page open in ctx, as static/passkey.js would.
func assertFor(t *testing.T, ctx context.Context, opts string) string {
	t.Helper()
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(getAssertion, strconv.Quote(opts)), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("an assertion: %v", err)
	}
	return body
}

// TestBrowserStepUpApprovesWithThePasskey: a person adds a passkey, opens
// a card whose policy asks for one, and approves it on its step-up page
// with Chromium's virtual authenticator; the assertion StaffDecide got
// verifies for the card's id, version and arguments hash. An answer made
// for one card, sent to another, or to a card after an edit changed its
// version, approves nothing.
func TestBrowserStepUpApprovesWithThePasskey(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	console := passkeyConsole(t, b)
	b.RequireStepUp(t, "update_product_description")
	f := webtest.NewShopper(t, b)
	one, two, three := f.Describe(t, "Now in oak."), f.Describe(t, "Now in ash."), f.Describe(t, "Now in elm.")
	agent := b.Users[accounts.Agent]

	ctx := browsertest.New(t, 60*time.Second)
	virtualAuthenticator(t, ctx)
	addPasskeyInBrowser(t, ctx, console, agent)
	if err := chromedp.Do(ctx,
		browserSignIn(agent),
		chromedp.Click(chromedp.CSS(`[data-testid="use-passkey"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`)),
		chromedp.Navigate(console+"/queue/"+one.ID),
		chromedp.Click(chromedp.CSS(`a[data-testid="approve-step-up"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="approve-passkey"]`)),
	); err != nil {
		t.Fatalf("to the step-up page: %v", err)
	}
	browsertest.CheckAccessibility(t, ctx, "step-up page")
	// On a phone the page fits its width (the 64-digit hash breaks) and
	// the button is there.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
	if err != nil || wide {
		t.Errorf("the step-up page is wider than a phone (%v)", err)
	}
	browsertest.Screenshot(t, ctx, "step-up-phone.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="approve-passkey"]`))); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(wait, chromedp.WaitVisible(chromedp.CSS(`[data-testid="decided-card"]`))); err != nil {
		msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + ": " + document.querySelector("[data-passkey-error]").innerText`))
		t.Fatalf("approve with the passkey: %v (page says %q)", err, msg)
	}
	approved := b.StepUps(t, one.ID)
	if len(approved) != 1 {
		t.Fatalf("the approval kept %d step-ups, want the passkey's one", len(approved))
	}
	if err := approved[0].Verify(one.ID, int64(one.Version), one.ArgsHash); err != nil {
		t.Fatalf("the assertion kept with the approval does not verify for the card: %v", err)
	}
	if st := b.InvocationState(t, one.ID); st == controlplane.AwaitingApproval {
		t.Fatal("the card still waits for approval")
	}

	// Card two's answer, sent as card three's.
	if err := chromedp.Do(ctx, chromedp.Navigate(console+"/queue/"+two.ID+"/step-up"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="approve-passkey"]`))); err != nil {
		t.Fatal(err)
	}
	status, opts := stepUpFetch(t, ctx, "/queue/"+two.ID+"/step-up/begin", two.Version, two.ArgsHash, "")
	if status != "200" {
		t.Fatalf("begin: %s %s", status, opts)
	}
	cred := assertFor(t, ctx, opts)
	if status, text := stepUpFetch(t, ctx, "/queue/"+three.ID+"/step-up", three.Version, three.ArgsHash, cred); status != "422" {
		t.Fatalf("card two's step-up sent to card three: %s %s, want 422", status, text)
	}

	// Card two's answer, after an edit changed its version.
	status, opts = stepUpFetch(t, ctx, "/queue/"+two.ID+"/step-up/begin", two.Version, two.ArgsHash, "")
	if status != "200" {
		t.Fatalf("begin: %s %s", status, opts)
	}
	cred = assertFor(t, ctx, opts)
	raw, _ := json.Marshal(map[string]any{"product_id": productOf(t, two), "description": "Now in dark ash."})
	edited, err := b.Control.StaffDecide(t.Context(), controlplane.StaffDecision{Actor: controlplane.UserActor(agent.ID, string(agent.Role), agent.Name),
		InvocationID: two.ID, Verb: controlplane.StaffEdit, Args: raw})
	if err != nil {
		t.Fatal(err)
	}
	now := edited.Invocation
	if status, text := stepUpFetch(t, ctx, "/queue/"+two.ID+"/step-up", now.Version, now.ArgsHash, cred); status != "422" {
		t.Fatalf("a step-up made before the edit, sent as for the version after it: %s %s, want 422", status, text)
	}
	if kept := len(b.StepUps(t, two.ID)) + len(b.StepUps(t, three.ID)); kept != 0 {
		t.Fatalf("%d approval(s) were kept with a step-up made for another card or version", kept)
	}
	for _, inv := range []controlplane.Invocation{two, three} {
		if st := b.InvocationState(t, inv.ID); st != controlplane.AwaitingApproval {
			t.Errorf("card %s is %s, want still waiting", inv.ID, st)
		}
	}

	// The page of card three goes out of date while open: the refusal
	// shows in its error summary, which takes the focus.
	if err := chromedp.Do(ctx, chromedp.Navigate(console+"/queue/"+three.ID+"/step-up"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="approve-passkey"]`))); err != nil {
		t.Fatal(err)
	}
	raw, _ = json.Marshal(map[string]any{"product_id": productOf(t, three), "description": "Now in pale elm."})
	if _, err := b.Control.StaffDecide(t.Context(), controlplane.StaffDecision{Actor: controlplane.UserActor(agent.ID, string(agent.Role), agent.Name),
		InvocationID: three.ID, Verb: controlplane.StaffEdit, Args: raw}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="approve-passkey"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-summary"]`))); err != nil {
		t.Fatal(err)
	}
	summary, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id + ": " + document.getElementById("error-summary").innerText`))
	if err != nil || !strings.HasPrefix(summary, "error-summary: ") || !strings.Contains(summary, "changed since you opened this page") {
		t.Fatalf("an out-of-date step-up page says %q (%v), want it in the focused error summary", summary, err)
	}
	if st := b.InvocationState(t, three.ID); st != controlplane.AwaitingApproval {
		t.Fatalf("card three is %s after its out-of-date page, want still waiting", st)
	}
}

// productOf is the product a description card changes.
func productOf(t *testing.T, inv controlplane.Invocation) string {
	t.Helper()
	var args struct {
		ProductID string `json:"product_id"`
	}
	if err := json.Unmarshal(inv.Args.Proposed, &args); err != nil {
		t.Fatal(err)
	}
	return args.ProductID
}
