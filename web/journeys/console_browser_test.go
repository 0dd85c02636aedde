package journeys_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/web/browsertest"
)

// TestBrowserAgentEditsApprovesAndWatchesTheTaskComplete is the agent's
// journey in headless Chromium: sign in, open the queue, open a refund
// card, edit the amount, see the new quote, approve, and watch the task
// view move to Completed without reloading while the dispatcher runs.
// The queue and the task view pass axe-core; screenshots of both are
// saved under the temp dir.
func TestBrowserAgentEditsApprovesAndWatchesTheTaskComplete(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	inv := f.Refund(t, f.Order, 4200)
	ctx := browsertest.New(t, 120*time.Second)
	u := b.Users[accounts.Agent]
	axe := func(page string) { t.Helper(); browsertest.CheckAccessibility(t, ctx, page) }
	shot := func(name string) { t.Helper(); browsertest.Screenshot(t, ctx, name) }
	card := `[data-testid="card-` + inv.ID + `"]`
	err := chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+"/queue"),
		browserSignIn(u),
		chromedp.WaitVisible(chromedp.CSS(card)),
	)
	if err != nil {
		t.Fatal(err)
	}
	axe("queue")
	shot("countersign-queue.png")

	err = chromedp.Do(ctx,
		// Keyboard: j selects the first card, Enter opens it for deciding.
		chromedp.KeyEvent("j"),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="edit-form"]`)),
		chromedp.Clear(chromedp.CSS(`[data-testid="arg.amount_cents"]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="arg.amount_cents"]`), "8.00"),
		chromedp.Click(chromedp.CSS(`[data-testid="requote"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="new-quote"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	quote, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="new-quote"]`)))
	if err != nil || !strings.Contains(quote, "$8.00") {
		t.Fatalf("new quote = %q, %v; want it to show $8.00", quote, err)
	}
	axe("card after an edit")
	shot("countersign-card-edited.png")
	// Keyboard: a on a refund (it cannot be undone) asks first; Tab to
	// Approve, then Enter, approves (through htmx: the queue then shows
	// the card as it stands now).
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`),
		chromedp.KeyEvent("a"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="approve-confirm"]`)),
		chromedp.KeyEvent("\t"),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="decided-card"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}

	row := `[data-testid="inv-` + inv.ID + `"] [data-testid="inv-state"]`
	err = chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+"/tasks/"+f.Task.ID),
		chromedp.WaitVisible(chromedp.CSS(row)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if state, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(row))); !strings.Contains(state, "Approved") {
		t.Fatalf("before dispatch the task view says %q", state)
	}
	axe("task view")
	dctx, stop := context.WithCancel(context.Background())
	defer stop()
	go b.Control.RunDispatcher(dctx, 200*time.Millisecond)
	// No reload: the page learns of the change through the event stream.
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](
		`(document.querySelector('`+row+`') || {}).textContent.includes("Completed")`,
		chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		t.Fatalf("the task view did not move to Completed live: %v", err)
	}
	stop()
	shot("countersign-task.png")
	got := b.Invocation(t, inv.ID)
	var sent map[string]any
	if err := json.Unmarshal(got.Args.Effective, &sent); err != nil || sent["amount_cents"] != float64(800) {
		t.Fatalf("sent %s, want the edited amount", got.Args.Effective)
	}
}
