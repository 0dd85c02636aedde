package journeys_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demo"
	"countersign/web/browsertest"
)

// TestBrowserStaffPagesLeadWithWhatMattersAndAskBeforeWhatCannotBeUndone
// opens in headless Chromium, at 1280 and 390 px, what issue 26 found
// wanting: the task list opens on what needs a person, each task titled
// by what it is about; a history task says what was not recorded and
// offers no reversal it cannot make; a refused Reject and a refused
// policy Save come back with the error summary at the top, focused; and
// a on a refund opens a confirmation that names what cannot be undone,
// approving nothing until a second key; an address change reads Now
// above After. Each page passes axe and is saved
// as a screenshot.
func TestBrowserStaffPagesLeadWithWhatMattersAndAskBeforeWhatCannotBeUndone(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	ctx0 := context.Background()
	if err := demo.LoadHistory(ctx0, b.Store, demo.HistorySpec{Prefix: "hb", Invocations: 20, Conversations: 2, Days: 5,
		End: b.Clock.Now(), AssistantID: "asst_hist"}); err != nil {
		t.Fatal(err)
	}
	f := webtest.NewShopper(t, b)
	// The manager below rejects and approves refunds, so refunds' policy
	// lets managers decide them (by default only agents do).
	setDeciders(t, b, "issue_refund", "agent", "manager")
	refund := f.Refund(t, f.Order, 1250)
	addr := f.AddressChange(t)
	other := webtest.NewShopper(t, b)
	other.Refund(t, other.Order, 3100)
	if _, err := b.Control.ChangeTask(ctx0, controlplane.AssistantActor("asst_test", "Test assistant"), other.Task.ID, controlplane.TaskPause, 0); err != nil {
		t.Fatal(err)
	}

	ctx := browsertest.New(t, 240*time.Second)
	axe := func(page string) { t.Helper(); browsertest.CheckAccessibility(t, ctx, page) }
	shot := func(name string) { t.Helper(); browsertest.Screenshot(t, ctx, name) }
	open := func(path, sel string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(b.Server.URL+path), chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	phone := func(on bool) {
		t.Helper()
		a := chromedp.Steps(chromedp.EmulateReset(), chromedp.EmulateViewport(1280, 900))
		if on {
			a = chromedp.Steps(chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		}
		if err := chromedp.Do(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(b.Server.URL+"/tasks"), browserSignIn(b.Users[accounts.Manager]),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="tasks"]`))); err != nil {
		t.Fatal(err)
	}

	// The task list opens on what needs a person, titled by the request.
	for _, w := range []struct {
		phone bool
		name  string
	}{{false, "tasks-list-desktop.png"}, {true, "tasks-list-phone.png"}} {
		phone(w.phone)
		open("/tasks", `[data-testid="tasks"]`)
		if got := evalAs[string](t, ctx, `document.querySelector('[aria-current="true"]').textContent`); !strings.HasPrefix(got, "Needs a person") {
			t.Errorf("%s: the list opens on %q", w.name, got)
		}
		if n := evalAs[int](t, ctx, `document.querySelectorAll('[data-testid="tasks"] > li').length`); n != 3 {
			t.Errorf("%s: %d rows, want the 3 that need a person", w.name, n)
		}
		if got := evalAs[string](t, ctx, `document.querySelector('[data-testid="task-`+f.Task.ID+`"] [data-testid="task-title"]').textContent`); got != refund.Quote.Title {
			t.Errorf("%s: the task is titled %q", w.name, got)
		}
		if w.phone && evalAs[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth`) {
			t.Errorf("the task list scrolls sideways on a phone")
		}
		axe(w.name)
		shot(w.name)
	}
	phone(false)

	// A history task: every cell says something, no reversal offered.
	open("/tasks/hbt0", `[data-testid="invocations"]`)
	if n := evalAs[int](t, ctx, `[...document.querySelectorAll('[data-testid="invocations"] tbody td')].filter(td => td.innerText.trim() === "").length`); n != 0 {
		t.Errorf("the history task has %d blank cells", n)
	}
	if n := evalAs[int](t, ctx, `document.querySelectorAll('[data-testid="reverse"]').length`); n != 0 {
		t.Errorf("the history task offers %d reversals", n)
	}
	if got := evalAs[string](t, ctx, `document.querySelector('h1').innerText`); strings.HasPrefix(got, "Task for") {
		t.Errorf("the history task is titled %q", got)
	}
	axe("history task")
	shot("task-history-desktop.png")

	// Reject without a reason: the summary at the top holds the focus; its
	// link moves the focus to the first reason.
	for _, w := range []struct {
		phone bool
		name  string
	}{{false, "queue-reject-error-desktop.png"}, {true, "queue-reject-error-phone.png"}} {
		phone(w.phone)
		open("/queue/"+refund.ID, `[data-testid="reject"]`)
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="reject"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-summary"]`))); err != nil {
			t.Fatal(err)
		}
		if got := evalAs[string](t, ctx, activeTestID); got != "error-summary" {
			t.Errorf("%s: after a refused Reject the focus is on %q, want the error summary", w.name, got)
		}
		if top := evalAs[float64](t, ctx, `document.querySelector('[data-testid="error-summary"]').getBoundingClientRect().bottom`); top > 844 {
			t.Errorf("%s: the error summary ends %.0fpx down, below the fold", w.name, top)
		}
		axe(w.name)
		shot(w.name)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="error-summary-link"]`))); err != nil {
		t.Fatal(err)
	}
	if got := evalAs[string](t, ctx, `document.activeElement.id`); got != "reason" {
		t.Errorf("the summary's link moves the focus to #%s, want #reason", got)
	}
	phone(false)

	// A policy saved with a bad amount: the summary, focused, at the top.
	open("/policies/shop/issue_refund", `[data-testid="policy-save"]`)
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`#auto_max`), "twelve"), chromedp.SetValue(chromedp.CSS(`#reason`), "Tighter."),
		chromedp.Click(chromedp.CSS(`[data-testid="policy-save"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-summary"]`))); err != nil {
		t.Fatal(err)
	}
	if got := evalAs[string](t, ctx, activeTestID); got != "error-summary" {
		t.Errorf("after a refused Save the focus is on %q, want the error summary", got)
	}
	axe("policy save error")
	shot("policy-save-error-desktop.png")

	// An address change reads as two lines, Now above After.
	open("/queue/"+addr.ID, `[data-testid="now-after"]`)
	if !evalAs[bool](t, ctx, `(() => { const l = document.querySelectorAll('[data-testid="now-after"] .na-line');
		return l.length === 2 && l[1].getBoundingClientRect().top >= l[0].getBoundingClientRect().bottom - 1; })()`) {
		t.Errorf("the address change is not Now above After")
	}
	axe("address change")
	shot("queue-address-desktop.png")

	// a on a refund: a confirmation naming what cannot be undone; nothing
	// is approved until the second key.
	open("/queue/"+refund.ID, `[data-testid="approve"]`)
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`),
		chromedp.KeyEvent("a"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="approve-confirm"]`))); err != nil {
		t.Fatal(err)
	}
	if got := evalAs[string](t, ctx, `document.querySelector('[data-testid="approve-confirm"]').innerText`); !strings.Contains(got, "cannot be undone") ||
		!strings.Contains(got, refund.Quote.Title) {
		t.Errorf("the confirmation says %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent("a")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if st := b.Invocation(t, refund.ID).State; st != controlplane.AwaitingApproval {
		t.Fatalf("a (twice) approved the refund: it is %s", st)
	}
	// The focus starts on Go back: Enter now goes back, approving nothing.
	if got := evalAs[string](t, ctx, activeTestID); got != "approve-cancel" {
		t.Errorf("the confirmation opens with the focus on %q, want Go back (approve-cancel)", got)
	}
	axe("approve confirmation")
	shot("queue-irreversible-confirm-desktop.png")
	if err := chromedp.Do(ctx, chromedp.KeyEvent("\r")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if st := b.Invocation(t, refund.ID).State; st != controlplane.AwaitingApproval || evalAs[bool](t, ctx, `document.querySelector('[data-testid="approve-confirm"]').open`) {
		t.Fatalf("a then Enter: the refund is %s and the confirmation still open; want it closed, nothing approved", st)
	}
	// a again, Tab to Approve, then Enter: approved.
	if err := chromedp.Do(ctx, chromedp.KeyEvent("a"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="approve-confirm"]`)),
		chromedp.KeyEvent("\t"), chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="decided-card"]`))); err != nil {
		t.Fatal(err)
	}
	if st := b.Invocation(t, refund.ID).State; st == controlplane.AwaitingApproval {
		t.Errorf("the second key did not approve the refund")
	}
}
