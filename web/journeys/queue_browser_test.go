package journeys_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/web/browsertest"
)

// cardsInView counts the queue's cards that fit whole in the first screen.
const cardsInView = `Array.from(document.querySelectorAll('[data-card]')).filter(c => c.getBoundingClientRect().bottom + window.scrollY <= window.innerHeight).length`

// activeTestID names what holds the keyboard focus.
const activeTestID = `(document.activeElement && document.activeElement.getAttribute('data-testid')) || (document.activeElement || {}).tagName`

// TestBrowserQueueReadsSoonestFirstAndApproveKeepsOneTruth drives the
// queue in headless Chromium as an agent would, desktop and phone, by
// keyboard, then with JavaScript off: the waiting count and several
// compact cards on the first screen, a stale quote flagged, the reject
// form's presets with the error for a missing reason, and after Approve
// the card in its new state with the focus on the next card (and on the
// "nothing is waiting" message after the last). Then the agent's and the
// manager's home pages. Each page passes axe and is saved as a screenshot.
func TestBrowserQueueReadsSoonestFirstAndApproveKeepsOneTruth(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	ctx0 := context.Background()
	stale := f.Refund(t, f.Order, 800)
	var cards []controlplane.Invocation
	for _, cents := range []int64{1250, 2475, 3100, 1999} {
		b.Clock.Advance(time.Minute)
		cards = append(cards, f.Refund(t, f.NewOrder(t), cents))
	}
	b.Clock.Advance(time.Minute)
	f.Describe(t, "Hand-turned walnut base, linen shade, warm-white bulb included.")
	// Another refund of the first order completes: the first card's quote
	// is out of date.
	big := f.Refund(t, f.Order, 4200)
	colleague := b.CreateUser(t, accounts.Agent)
	if _, err := b.Control.StaffDecide(ctx0, controlplane.StaffDecision{Actor: controlplane.UserActor(colleague.ID, "agent", "A"), InvocationID: big.ID, Verb: controlplane.StaffApprove, Version: big.Version, ArgsHash: big.ArgsHash}); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Control.Dispatch(ctx0, big.ID); err != nil || !ok {
		t.Fatalf("dispatch: %v %v", ok, err)
	}
	lost := f.Refund(t, f.NewOrder(t), 650)
	webtest.MarkUnverified(t, b, lost.ID)
	b.Clock.Advance(2 * time.Minute)

	ctx := browsertest.New(t, 300*time.Second)
	axe := func(page string) { t.Helper(); browsertest.CheckAccessibility(t, ctx, page) }
	shot := func(name string) { t.Helper(); browsertest.Screenshot(t, ctx, name) }
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}

	err := chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+"/queue"),
		browserSignIn(b.Users[accounts.Agent]),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="queue-waiting"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(`[data-testid="queue-waiting"]`); !strings.HasPrefix(got, "6 requests waiting") {
		t.Errorf("the queue's first words: %q", got)
	}
	first := evalAs[string](t, ctx, `document.querySelector('[data-card]').id`)
	if first != "card-"+stale.ID {
		t.Errorf("the first card is %s, want the soonest deadline (%s)", first, stale.ID)
	}
	if got := text(`[data-testid="card-` + stale.ID + `"] [data-testid="stale"]`); !strings.Contains(got, "completed at") {
		t.Errorf("the stale card says %q", got)
	}
	desktop := evalAs[int](t, ctx, cardsInView)
	if desktop < 3 {
		t.Errorf("%d cards fit on the first desktop screen, want at least 3", desktop)
	}
	t.Logf("cards whole on the first screen: desktop 1280×900: %d", desktop)
	axe("queue")
	shot("countersign-queue-desktop.png")

	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)), chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="queue-waiting"]`))); err != nil {
		t.Fatal(err)
	}
	phone := evalAs[int](t, ctx, cardsInView)
	overflow := evalAs[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth`)
	if phone < 2 || overflow {
		t.Errorf("phone 390×844: %d cards whole on the first screen (want at least 2), sideways scroll %v", phone, overflow)
	}
	t.Logf("cards whole on the first screen: phone 390×844: %d", phone)
	axe("queue on a phone")
	shot("countersign-queue-phone.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="queue-waiting"]`))); err != nil {
		t.Fatal(err)
	}

	// Keyboard: j, j selects the second card (the first fresh one), Enter
	// opens it; Reject without a reason is a field error, none preset.
	err = chromedp.Do(ctx,
		chromedp.KeyEvent("j"), chromedp.KeyEvent("j"), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="reject-form"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="reject"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="reason-error"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	checked := evalAs[int](t, ctx, `document.querySelectorAll('input[name="reason"]:checked').length`)
	if checked != 0 {
		t.Errorf("%d reasons chosen for the agent", checked)
	}
	if got := text(`[data-testid="reason-error"]`); !strings.Contains(got, "Choose the reason") {
		t.Errorf("reason error %q", got)
	}
	evalAs[int](t, ctx, `document.querySelector('[data-testid="reject-form"]').scrollIntoView({block: "center"}), 0`)
	axe("reject form with its error")
	shot("countersign-reject-presets.png")

	// a on a refund (it cannot be undone) asks first, its focus on Go
	// back (a then Enter must not approve it); Tab to Approve, then Enter,
	// approves through htmx; the queue shows one truth and the focus is on
	// the next card.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`),
		chromedp.KeyEvent("a"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="approve-confirm"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := evalAs[string](t, ctx, activeTestID); got != "approve-cancel" {
		t.Errorf("the confirmation opens with the focus on %q, want Go back (approve-cancel)", got)
	}
	err = chromedp.Do(ctx,
		chromedp.KeyEvent("\t"),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="decided-card"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	checkOneTruth := func(decided controlplane.Invocation, next string, waiting string) {
		t.Helper()
		card := text(`[data-testid="decided-card"]`)
		if !strings.Contains(card, decided.Quote.Title) || !strings.Contains(text(`[data-testid="decided-card"] [data-testid="state"]`), "Approved") ||
			strings.Contains(card, "Pending") {
			t.Errorf("the decided card: %q", card)
		}
		main := evalAs[string](t, ctx, `document.querySelector('main').innerText`)
		if strings.Contains(main, "You hold this card") {
			t.Errorf("the page still says the agent holds the card")
		}
		if got := text(`[data-testid="queue-waiting"]`); !strings.HasPrefix(got, waiting) {
			t.Errorf("queue count %q, want %q", got, waiting)
		}
		badge := evalAs[string](t, ctx, `(document.querySelector('[data-testid="nav-count"]') || {}).firstChild ? document.querySelector('[data-testid="nav-count"]').firstChild.textContent : ''`)
		if want := strings.Fields(waiting)[0]; badge != want && !(want == "Nothing" && badge == "") {
			t.Errorf("header badge %q, want %s", badge, want)
		}
		focused := evalAs[string](t, ctx, activeTestID)
		if focused != next {
			t.Errorf("focus on %q, want %q", focused, next)
		}
	}
	checkOneTruth(cards[0], "card-"+stale.ID, "5 requests waiting")
	axe("queue after approve")
	shot("countersign-queue-after-approve.png")

	// JavaScript off: the same decision through a plain POST and redirect.
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	for i, inv := range cards[1:] {
		err = chromedp.Do(ctx,
			chromedp.Navigate(b.Server.URL+"/queue/"+inv.ID),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="approve"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="approve"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="decided-card"]`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		waiting := []string{"4 requests", "3 requests", "2 requests"}[i]
		checkOneTruth(inv, "card-"+stale.ID, waiting)
	}
	shot("countersign-queue-after-approve-nojs.png")
	// The last two: the fresh-quoted stale card and the description; then
	// nothing is waiting and the message holds the focus.
	err = chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+"/queue/"+stale.ID),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="requote-card"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="requote-card"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="approve"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="approve"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="decided-card"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	rest := evalAs[string](t, ctx, `document.querySelector('[data-card]').id.replace('card-', '')`)
	err = chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+"/queue/"+rest),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="approve"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="approve"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="queue-empty"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	focused := evalAs[string](t, ctx, activeTestID)
	if focused != "queue-empty" {
		t.Errorf("with nothing left the focus is on %q, want the message", focused)
	}
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatal(err)
	}

	// Home pages: what waits, counted, first.
	err = chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-waiting"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(`[data-testid="waiting-unverified"]`); !strings.Contains(got, "1") {
		t.Errorf("agent home, unverified: %q", got)
	}
	axe("agent home")
	shot("countersign-home-agent.png")
	f.Refund(t, f.NewOrder(t), 1500)
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="sign-out"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		browserSignIn(b.Users[accounts.Manager]),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-waiting"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(`[data-testid="waiting-approvals"]`); !strings.Contains(got, "1") {
		t.Errorf("manager home, approvals: %q", got)
	}
	axe("manager home")
	shot("countersign-home-manager.png")
}

// evalAs evaluates JavaScript in the page and decodes its value.
func evalAs[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}
