package console_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demo"
)

// TestTaskListOpensOnWhatNeedsAPersonTitledByWhatEachIsAbout: /tasks shows
// the tasks that need a person (All is one click away, and the older
// ?status=all still shows everything); each row is titled by its first
// request in words, the customer beneath.
func TestTaskListOpensOnWhatNeedsAPersonTitledByWhatEachIsAbout(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	waiting := f.Refund(t, f.Order, 500)
	quiet, err := b.Control.CreateTask(context.Background(), controlplane.AssistantActor("asst_test", "Test assistant"), controlplane.NewTask{
		CustomerRef: "quiet@example.test", ConversationID: fmt.Sprintf("conv-quiet-%d", time.Now().UnixNano()),
		AllowedActions: []string{"issue_refund"}, WriteBudget: 5, InflightLimit: 1, RatePerMinute: 60, ExpiresAt: b.Clock.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])

	doc := c.Get("/tasks").Doc(t)
	if doc.Find(`[data-testid="need-person"][aria-current="true"]`).Length() != 1 {
		t.Errorf("/tasks does not open on “Needs a person”")
	}
	if got := rowIDs(doc, `[data-testid="tasks"] > li`); len(got) != 1 || got[0] != "task-"+f.Task.ID {
		t.Errorf("/tasks lists %v, want only the task that needs a person", got)
	}
	row := doc.Find(`[data-testid="task-` + f.Task.ID + `"]`)
	if got, want := row.Find(`[data-testid="task-title"]`).Text(), waiting.Quote.Title; got != want {
		t.Errorf("the row is titled %q, want its request %q", got, want)
	}
	if got := row.Find(`[data-testid="task-customer"]`).Text(); got != "For "+f.Customer.Email {
		t.Errorf("the row's subtitle is %q", got)
	}
	all, ok := doc.Find(`[data-testid="need-all"]`).Attr("href")
	if !ok {
		t.Fatalf("no link to all tasks")
	}
	for _, path := range []string{all, "/tasks?status=all", "/tasks?q=" + url.QueryEscape("quiet@")} {
		d := c.Get(path).Doc(t)
		if d.Find(`[data-testid="task-`+quiet.ID+`"]`).Length() != 1 {
			t.Errorf("%s does not list the quiet task", path)
		}
		if got := d.Find(`[data-testid="task-` + quiet.ID + `"] [data-testid="task-title"]`).Text(); got != "No request yet" {
			t.Errorf("%s: a task with no request is titled %q", path, got)
		}
	}
	if doc.Find(`[data-testid="task-search"] input[name="need"]`).Length() != 0 {
		t.Errorf("a search from the default list is narrowed to what needs a person")
	}
}

// TestHistoryTaskSaysWhatIsKnownAndOffersNoImpossibleReversal: a task
// loaded from history has requests without quotes or results. Each row
// names the request by its action and object and says what was not
// recorded, never a blank cell; a completed cancellation there offers no
// reversal, because the task is closed and its quote never said one exists
// (the API's rule). The page is titled by its first request, the
// customer beneath, and a dispatch permit reads as "cleared … to send".
func TestHistoryTaskSaysWhatIsKnownAndOffersNoImpossibleReversal(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	ctx := context.Background()
	if err := demo.LoadHistory(ctx, b.Store, demo.HistorySpec{Prefix: "hx", Invocations: 20, Conversations: 2, Days: 5,
		End: b.Clock.Now(), AssistantID: "asst_hist"}); err != nil {
		t.Fatal(err)
	}
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	doc := c.Get("/tasks/hxt0").Doc(t)
	rows := doc.Find(`[data-testid="invocations"] tbody tr`)
	if rows.Length() != 10 {
		t.Fatalf("%d requests, want 10", rows.Length())
	}
	rows.Each(func(_ int, r *goquery.Selection) {
		id := r.AttrOr("data-testid", "")
		if strings.TrimSpace(r.Find("td").First().Text()) == "" || strings.TrimSpace(r.Find(`[data-testid="inv-why"]`).Text()) == "" {
			t.Errorf("%s has a blank cell: %q", id, r.Text())
		}
	})
	// hxi1 is a completed cancellation, the history's way.
	cancel := doc.Find(`[data-testid="inv-hxi1"]`)
	if got := cancel.Find("td").First().Text(); !strings.Contains(got, "Cancel a subscription: Object 1") {
		t.Errorf("the cancellation is named %q", got)
	}
	if got := cancel.Find(`[data-testid="inv-why"]`).Text(); !strings.Contains(got, "not recorded") {
		t.Errorf("the cancellation's result says %q", got)
	}
	if n := doc.Find(`[data-testid="reverse"]`).Length(); n != 0 {
		t.Errorf("a closed history task offers %d reversals Reverse would refuse", n)
	}
	// Its first request (the earliest) and how many more; never "Task for".
	if got := doc.Find(`h1[data-testid="task-title"]`).Text(); !strings.Contains(got, ": Object ") || !strings.Contains(got, " and 9 more requests") {
		t.Errorf("the task is titled %q", got)
	}
	if got := doc.Find(`[data-testid="task-customer"]`).Text(); got != "For cust_0" {
		t.Errorf("the task's subtitle is %q", got)
	}

	if tl := doc.Find(`[data-testid="timeline"]`).Text(); strings.Contains(tl, "request hxi") || strings.Contains(tl, " on :") {
		t.Errorf("the history timeline names requests by their codes or an empty target:\n%s", tl)
	}

	// A live refund's timeline: the permit in a support agent's words.
	f := webtest.NewShopper(t, b)
	f.ApproveAndDispatch(t, f.Refund(t, f.Order, 700))
	tl := c.Get("/tasks/" + f.Task.ID).Doc(t).Find(`[data-testid="timeline"]`).Text()
	if !strings.Contains(tl, "cleared it to send") || strings.Contains(tl, "permit") {
		t.Errorf("the timeline says the permit as %q", tl)
	}
}
