package journeys_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/web/browsertest"
)

// TestBrowserTasksHandoffsAndTaskViewsReadInTheAgentsWords opens, in headless
// Chromium, what an agent reads to find and settle work: the task list
// (desktop, phone, filtered), the hand-offs, a task with a result that needs
// checking and its inspection, a paused task and a completed one. Each page
// passes axe-core and is saved as a screenshot; the checks are what the
// agent must see first on each.
func TestBrowserTasksHandoffsAndTaskViewsReadInTheAgentsWords(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	ctx0 := context.Background()
	asst := controlplane.AssistantActor("asst_test", "Test assistant")

	// A completed task: one refund approved, sent and verified.
	done := webtest.NewShopper(t, b)
	done.ApproveAndDispatch(t, done.Refund(t, done.Order, 1250))
	// A task whose refund's answer was lost: the result needs checking.
	lost := webtest.NewShopper(t, b)
	if err := b.Shop.SetFault(demoshop.FaultRule{Route: "POST /refunds", DropAfterCommit: 1}); err != nil {
		t.Fatal(err)
	}
	unverified := lost.Refund(t, lost.Order, 3450)
	lost.ApproveAndDispatch(t, unverified)
	b.Shop.ClearFaults()
	lost.Refund(t, lost.NewOrder(t), 800) // and one awaiting approval
	// A paused task with an approved request that was not sent.
	paused := webtest.NewShopper(t, b)
	held := paused.Refund(t, paused.Order, 2000)
	if _, err := b.Control.ChangeTask(ctx0, controlplane.UserActor(b.Users[accounts.Agent].ID, "agent", b.Users[accounts.Agent].Name), paused.Task.ID, controlplane.TaskPause, 0); err != nil {
		t.Fatal(err)
	}
	paused.ApproveAndDispatch(t, held)
	// Quiet and ended tasks, and hand-offs: one repeated, one single.
	for i := range 6 {
		task, err := b.Control.CreateTask(ctx0, asst, controlplane.NewTask{CustomerRef: fmt.Sprintf("quiet-%d@example.test", i),
			ConversationID: fmt.Sprintf("conv-quiet-%d", i), AllowedActions: []string{"issue_refund"}, WriteBudget: 5,
			InflightLimit: 1, RatePerMinute: 60, ExpiresAt: b.Clock.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if _, err := b.Control.ChangeTask(ctx0, asst, task.ID, controlplane.TaskCancel, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := b.Clock.Now()
	loop := `{"summary":"Wants a refund for the walnut lamp; two orders match.","facts":{"order_id":"ord_1","status":"delivered"},
		"would_propose":{"action":"issue_refund","args":{"order_id":"ord_1","amount_cents":4200,"reason_code":"damaged"}}}`
	for i := range 12 {
		webtest.InsertHandoff(t, b, "conv-walnut", lost.Task.ID, "transactional_high", loop, now.Add(-95*time.Minute+time.Duration(i)*time.Minute))
	}
	webtest.InsertHandoff(t, b, "conv-charge", "", "ambiguous", `{"summary":"Asks about a charge they do not recognise.","facts":["card ending 4242","charged $19.99 on Mar 30"]}`, now.Add(-20*time.Minute))

	ctx := browsertest.New(t, 180*time.Second)
	axe := func(page string) { t.Helper(); browsertest.CheckAccessibility(t, ctx, page) }
	shot := func(name string) { t.Helper(); browsertest.Screenshot(t, ctx, name) }
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return s
	}
	open := func(path, sel string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(b.Server.URL+path), chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(b.Server.URL+"/tasks"), browserSignIn(b.Users[accounts.Agent]),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="tasks"]`))); err != nil {
		t.Fatal(err)
	}
	// The task list, all of it: what needs a person first, saying what it
	// needs.
	open("/tasks?need=all", `[data-testid="tasks"]`)
	firstRow := text(`[data-testid="tasks"] > li:first-child`)
	if !strings.Contains(firstRow, "Needs a person: 1 result needs checking") {
		t.Errorf("the first row of /tasks is not the task whose result needs checking: %q", firstRow)
	}
	if got := text(`[data-testid="task-` + lost.Task.ID + `"] [data-testid="task-needs-person"]`); !strings.Contains(got, "1 result needs checking") ||
		!strings.Contains(got, "1 request awaits approval") || !strings.Contains(got, "1 hand-off nobody has taken") {
		t.Errorf("the row of the task with a lost answer says %q", got)
	}
	if got := text(`[data-testid="task-pager"] [data-testid="showing"]`); got != "Showing all 9 tasks." {
		t.Errorf("pager = %q", got)
	}
	axe("task list")
	shot("tasks.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="tasks"]`))); err != nil {
		t.Fatal(err)
	}
	if w, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); err != nil || w > 390 {
		t.Errorf("the task list is %dpx wide on a 390px phone (%v): it scrolls sideways", w, err)
	}
	axe("task list on a phone")
	shot("tasks-phone.png")
	if err := chromedp.Do(ctx, chromedp.EmulateReset(), chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	// Filtered: paused tasks, from the filter link.
	open("/tasks", `[data-testid="need-paused"]`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="need-paused"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="need-paused"][aria-current="true"]`))); err != nil {
		t.Fatal(err)
	}
	if got := text(`[data-testid="task-pager"] [data-testid="showing"]`); got != "Showing the only task." {
		t.Errorf("filtered pager = %q", got)
	}
	axe("task list filtered")
	shot("tasks-filtered.png")

	// Hand-offs: the repeated one once, in words, longest waiting first.
	open("/handoffs", `article[data-testid^="handoff-"]`)
	first := text(`article[data-testid^="handoff-"]`)
	for _, w := range []string{"A high-risk change", "Waiting 1 h 35 min", "Handed off 12 times", "Refund an order", "$42.00"} {
		if !strings.Contains(first, w) {
			t.Errorf("the first hand-off lacks %q: %q", w, first)
		}
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('article[data-testid^="handoff-"]').length`)); n != 2 {
		t.Errorf("%d hand-off cards, want 2 (13 hand-offs, 12 identical)", n)
	}
	axe("hand-offs")
	shot("handoffs.png")

	// A task with a result that needs checking, and its inspection.
	open("/tasks/"+lost.Task.ID+"?inspect="+unverified.ID+"#inspect", `[data-testid="inspect-panel"]`)
	if got := text(`[data-testid="evidence"]`); !strings.Contains(got, "The shop shows a matching $34.50 refund created at") {
		t.Errorf("evidence = %q", got)
	}
	if got := text(`[data-testid="outlook"]`); !strings.Contains(got, "mark it completed") {
		t.Errorf("outlook = %q", got)
	}
	if vis, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid="tech-key"]').checkVisibility()`)); vis {
		t.Errorf("the idempotency key is visible before opening Technical details")
	}
	axe("task with an unverified request, inspected")
	shot("task-inspect.png")

	// A paused task: a neutral notice, not an error banner.
	open("/tasks/"+paused.Task.ID, `[data-testid="paused-notice"]`)
	bg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('[data-testid="paused-notice"]')).backgroundColor`))
	if bg == "rgb(255, 235, 233)" { // --bad-bg
		t.Errorf("the paused notice is painted as an error")
	}
	if got := text(`[data-testid="inv-` + held.ID + `"]`); !strings.Contains(got, "The task was paused before this could be sent.") {
		t.Errorf("the held request says %q", got)
	}
	axe("paused task")
	shot("task-paused.png")

	// A completed task's timeline, in sentences.
	open("/tasks/"+done.Task.ID, `[data-testid="timeline"]`)
	tl := text(`[data-testid="timeline"]`)
	for _, w := range []string{"proposed “Refund $12.50", "Awaiting approval by a support agent for it: its policy has an agent approve every request of this kind.", "approved it. Approved is not yet sent.",
		"by reading it back: completed (reference "} {
		if !strings.Contains(tl, w) {
			t.Errorf("timeline lacks %q:\n%s", w, tl)
		}
	}
	if strings.Contains(tl, "invocation.") || strings.Contains(tl, "args_hash") {
		t.Errorf("timeline shows codes:\n%s", tl)
	}
	axe("completed task")
	shot("task-completed.png")
}
