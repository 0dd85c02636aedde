package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
)

// rowIDs lists the data-testid of the rows of a list, in order.
func rowIDs(doc *goquery.Document, sel string) []string {
	var out []string
	doc.Find(sel).Each(func(_ int, s *goquery.Selection) { out = append(out, s.AttrOr("data-testid", "")) })
	return out
}

func filterCount(doc *goquery.Document, testID string) string {
	return strings.TrimSpace(doc.Find(`[data-testid="` + testID + `"] .count`).Text())
}

func TestTaskListPutsWhatNeedsAPersonFirstWithCountsAndPages(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	ctx := context.Background()
	asst := controlplane.AssistantActor("asst_test", "Test assistant")
	newTask := func(i int) controlplane.Task {
		task, err := b.Control.CreateTask(ctx, asst, controlplane.NewTask{CustomerRef: f.Customer.Email, ConversationID: fmt.Sprintf("conv-list-%d", i),
			AllowedActions: []string{"issue_refund"}, WriteBudget: 5, InflightLimit: 1, RatePerMinute: 60, ExpiresAt: b.Clock.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	// 54 tasks: one awaits approval (f.task), one is paused, one has a
	// hand-off nobody took, three are cancelled, the rest are quiet.
	f.Refund(t, f.Order, 500)
	var quiet []controlplane.Task
	for i := range 53 {
		quiet = append(quiet, newTask(i))
		b.Clock.Advance(time.Second)
	}
	paused, handedOff := quiet[0], quiet[1]
	if _, err := b.Control.ChangeTask(ctx, asst, paused.ID, controlplane.TaskPause, 0); err != nil {
		t.Fatal(err)
	}
	webtest.InsertHandoff(t, b, handedOff.ConversationID, handedOff.ID, "ambiguous", `{"summary":"Two orders match."}`, b.Clock.Now())
	for _, x := range quiet[2:5] {
		b.Clock.Advance(time.Second)
		if _, err := b.Control.ChangeTask(ctx, asst, x.ID, controlplane.TaskCancel, 0); err != nil {
			t.Fatal(err)
		}
	}
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	q := "/tasks?q=" + url.QueryEscape(f.Customer.Email)
	doc := c.Get(q).Doc(t)
	rows := rowIDs(doc, `[data-testid="tasks"] > li`)
	if len(rows) != 50 {
		t.Fatalf("first page has %d rows, want 50", len(rows))
	}
	first := map[string]bool{rows[0]: true, rows[1]: true, rows[2]: true}
	for _, id := range []string{f.Task.ID, paused.ID, handedOff.ID} {
		if !first["task-"+id] {
			t.Errorf("task %s needs a person but is not among the first rows: %v", id, rows[:4])
		}
	}
	for id, want := range map[string]string{f.Task.ID: "1 request awaits approval", paused.ID: "paused: resume or cancel it",
		handedOff.ID: "1 hand-off nobody has taken"} {
		if got := doc.Find(`[data-testid="task-` + id + `"] [data-testid="task-needs-person"]`).Text(); !strings.Contains(got, "Needs a person") || !strings.Contains(got, want) {
			t.Errorf("row of %s says %q, want it to need a person: %q", id, got, want)
		}
	}
	if doc.Find(`[data-testid="task-`+quiet[10].ID+`"] [data-testid="task-needs-person"]`).Length() != 0 {
		t.Errorf("a quiet task says it needs a person")
	}
	if got := doc.Find(`[data-testid="task-pager"] [data-testid="showing"]`).Text(); got != "Showing 1–50 of 54 tasks." {
		t.Errorf("pager = %q", got)
	}
	for id, want := range map[string]string{"need-person": "3", "need-approval": "1", "need-paused": "1", "need-handoff": "1",
		"need-unverified": "0", "need-mine": "0", "need-all": "54"} {
		if got := filterCount(doc, id); got != want {
			t.Errorf("filter %s counts %q, want %q", id, got, want)
		}
	}
	next, ok := doc.Find(`[data-testid="task-pager"] [data-testid="next-page"]`).Attr("href")
	if !ok {
		t.Fatalf("a list of 54 has no link to its second page")
	}
	doc2 := c.Get(next).Doc(t)
	rows2 := rowIDs(doc2, `[data-testid="tasks"] > li`)
	if got := doc2.Find(`[data-testid="task-pager"] [data-testid="showing"]`).Text(); got != "Showing 51–54 of 54 tasks." || len(rows2) != 4 {
		t.Errorf("second page: %q with %d rows", got, len(rows2))
	}
	seen := map[string]bool{}
	for _, r := range append(rows, rows2...) {
		if seen[r] {
			t.Errorf("%s is on both pages", r)
		}
		seen[r] = true
	}
	for _, x := range quiet[2:5] {
		if !seen["task-"+x.ID] || !strings.Contains(strings.Join(rows2, " "), x.ID) {
			t.Errorf("cancelled task %s is not at the end", x.ID)
		}
	}
	if doc2.Find(`[data-testid="task-pager"] [data-testid="next-page"]`).Length() != 0 {
		t.Errorf("the last page links to a next one")
	}

	// Filters narrow the list and keep their counts.
	for query, want := range map[string][]string{
		"&need=paused":              {paused.ID},
		"&need=approval":            {f.Task.ID},
		"&need=handoff":             {handedOff.ID},
		"&action=issue_refund":      {f.Task.ID},
		"&state=cancelled":          {quiet[4].ID, quiet[3].ID, quiet[2].ID},
		"&state=paused&need=person": {paused.ID},
	} {
		d := c.Get(q + query).Doc(t)
		got := rowIDs(d, `[data-testid="tasks"] > li`)
		if strings.Join(got, " ") != "task-"+strings.Join(want, " task-") {
			t.Errorf("%s shows %v, want %v", query, got, want)
		}
	}
	if got := c.Get(q + "&need=paused").Doc(t).Find(`[data-testid="task-pager"] [data-testid="showing"]`).Text(); got != "Showing the only task." {
		t.Errorf("filtered pager = %q", got)
	}

	// Taking the hand-off makes the task the agent's.
	ho := c.Get("/handoffs").Doc(t).Find(`[data-testid="take"]`).First().Closest("form").AttrOr("action", "")
	if res := c.Post(ho, url.Values{"_csrf": {c.CSRF("/handoffs")}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("take: %d", res.StatusCode)
	}
	d := c.Get(q + "&need=mine").Doc(t)
	if got := rowIDs(d, `[data-testid="tasks"] > li`); len(got) != 1 || got[0] != "task-"+handedOff.ID {
		t.Errorf("mine shows %v, want the task whose hand-off I took", got)
	}
	if got := filterCount(d, "need-handoff"); got != "0" {
		t.Errorf("after taking it, hand-off waiting counts %q", got)
	}
	if d.Find(`[data-testid="task-`+handedOff.ID+`"] [data-testid="mine"]`).Text() != "Yours" {
		t.Errorf("the row does not say the task is mine")
	}
}

func TestHandoffsGroupIdenticalOnesInWordsLongestWaitingFirst(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	now := b.Clock.Now()
	same := `{"summary":"Wants a refund for a lamp; two orders match.","facts":{"order_id":"ord_1","status":"delivered"},
		"would_propose":{"action":"issue_refund","args":{"order_id":"ord_1","amount_cents":4200,"reason_code":"damaged"}}}`
	var loop int64
	for i := range 30 {
		id := webtest.InsertHandoff(t, b, "conv-loop", "", "transactional_high", same, now.Add(-3*time.Hour+time.Duration(i)*time.Minute))
		if i == 0 {
			loop = id
		}
	}
	other := webtest.InsertHandoff(t, b, "conv-other", "", "ambiguous", `{"summary":"Asks about a charge."}`, now.Add(-time.Hour))
	// The same words in another conversation are another customer's work.
	twin := webtest.InsertHandoff(t, b, "conv-twin", "", "transactional_high", same, now.Add(-2*time.Hour))
	for i := range 50 {
		webtest.InsertHandoff(t, b, fmt.Sprintf("conv-many-%d", i), "", "informational", `{"summary":"A question."}`, now.Add(-time.Duration(i)*time.Second))
	}
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	doc := c.Get("/handoffs").Doc(t)
	cards := rowIDs(doc, `article[data-testid^="handoff-"]`)
	if len(cards) != 50 {
		t.Fatalf("first page has %d cards, want 50 (53 groups of 82 hand-offs)", len(cards))
	}
	want := []string{fmt.Sprint("handoff-", loop), fmt.Sprint("handoff-", twin), fmt.Sprint("handoff-", other)}
	if strings.Join(cards[:3], " ") != strings.Join(want, " ") {
		t.Errorf("order = %v, want the longest waiting first: %v", cards[:3], want)
	}
	if got := doc.Find(`[data-testid="handoff-pager"] [data-testid="showing"]`).Text(); got != "Showing 1–50 of 53 conversations." {
		t.Errorf("pager = %q", got)
	}
	card := doc.Find(`[data-testid="` + want[0] + `"]`)
	for sel, text := range map[string]string{`[data-testid="handoff-intent"]`: "A high-risk change",
		`[data-testid="handoff-times"]`: "Handed off 30 times", `[data-testid="handoff-waiting"]`: "Waiting 3 h 00 min",
		`[data-testid="would-propose"]`: "Refund an order", `[data-testid="facts"]`: "Status: delivered"} {
		if got := card.Find(sel).Text(); !strings.Contains(got, text) {
			t.Errorf("%s = %q, want %q", sel, got, text)
		}
	}
	prop := card.Find(`[data-testid="would-propose"]`).Text()
	for _, w := range []string{"Amount", "$42.00", "Reason", "Damaged"} {
		if !strings.Contains(prop, w) {
			t.Errorf("would-propose lacks %q: %q", w, prop)
		}
	}
	if txt := doc.Find("main").Text(); strings.Contains(txt, "{") || strings.Contains(txt, "transactional_high") || strings.Contains(txt, "amount_cents") {
		t.Errorf("the page shows raw JSON or codes")
	}
	if n := filterCount(doc, "status-waiting"); n != "53" {
		t.Errorf("waiting counts %q", n)
	}
	// Taking the group (its card's form names the latest open hand-off)
	// takes all thirty.
	take, _ := card.Find(`form[action$="/take"]`).Attr("action")
	if res := c.Post(take, url.Values{"_csrf": {c.CSRF("/handoffs")}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("take: %d", res.StatusCode)
	}
	var n int
	if err := b.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM handoff_assignments WHERE user_id = $1`, b.Users[accounts.Agent].ID).Scan(&n); err != nil || n != 30 {
		t.Errorf("taking the group assigned %d hand-offs (%v), want 30", n, err)
	}
	doc = c.Get("/handoffs?status=mine").Doc(t)
	if got := rowIDs(doc, `article[data-testid^="handoff-"]`); len(got) != 1 || got[0] != want[0] {
		t.Errorf("mine = %v", got)
	}
	if filterCount(doc, "status-waiting") != "52" || filterCount(doc, "status-mine") != "1" {
		t.Errorf("counts after taking: waiting %s, mine %s", filterCount(doc, "status-waiting"), filterCount(doc, "status-mine"))
	}
	next, _ := c.Get("/handoffs").Doc(t).Find(`[data-testid="next-page"]`).First().Attr("href")
	doc = c.Get(next).Doc(t)
	if got := doc.Find(`[data-testid="handoff-pager"] [data-testid="showing"]`).Text(); got != "Showing 51–53 of 53 conversations." {
		t.Errorf("second page: %q", got)
	}
	if got := rowIDs(doc, `article[data-testid^="handoff-"]`); got[len(got)-1] != want[0] {
		t.Errorf("the taken group is not last: %v", got)
	}
}
