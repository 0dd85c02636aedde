package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

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

// insertHandoff records a hand-off as the assistant would, at a time.
func insertHandoff(t *testing.T, b *testBundle, conversation, taskID, intent, data string, at time.Time) int64 {
	t.Helper()
	ctx := context.Background()
	if _, err := b.store.Pool().Exec(ctx, `INSERT INTO assistants (id, name, created_at) VALUES ('asst_h', 'Helper', now()) ON CONFLICT DO NOTHING`); err != nil {
		t.Fatal(err)
	}
	var task any
	if taskID != "" {
		task = taskID
	}
	var id int64
	if err := b.store.Pool().QueryRow(ctx, `INSERT INTO conversation_events (conversation_id, assistant_id, task_id, intent, mode, at, data)
		VALUES ($1, 'asst_h', $2, $3, 'handed_off', $4, $5) RETURNING id`, conversation, task, intent, at, data).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestTaskListPutsWhatNeedsAPersonFirstWithCountsAndPages(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{shop: true})
	f := newConsoleFixture(t, b)
	ctx := context.Background()
	asst := controlplane.AssistantActor("asst_test", "Test assistant")
	newTask := func(i int) controlplane.Task {
		task, err := b.cp.CreateTask(ctx, asst, controlplane.NewTask{CustomerRef: f.cust.Email, ConversationID: fmt.Sprintf("conv-list-%d", i),
			AllowedActions: []string{"issue_refund"}, WriteBudget: 5, InflightLimit: 1, RatePerMinute: 60, ExpiresAt: b.clock.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	// 54 tasks: one awaits approval (f.task), one is paused, one has a
	// hand-off nobody took, three are cancelled, the rest are quiet.
	f.refund(t, f.order, 500)
	var quiet []controlplane.Task
	for i := range 53 {
		quiet = append(quiet, newTask(i))
		b.clock.Advance(time.Second)
	}
	paused, handedOff := quiet[0], quiet[1]
	if _, err := b.cp.ChangeTask(ctx, asst, paused.ID, controlplane.TaskPause, 0); err != nil {
		t.Fatal(err)
	}
	insertHandoff(t, b, handedOff.ConversationID, handedOff.ID, "ambiguous", `{"summary":"Two orders match."}`, b.clock.Now())
	for _, x := range quiet[2:5] {
		b.clock.Advance(time.Second)
		if _, err := b.cp.ChangeTask(ctx, asst, x.ID, controlplane.TaskCancel, 0); err != nil {
			t.Fatal(err)
		}
	}
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	q := "/tasks?q=" + url.QueryEscape(f.cust.Email)
	doc := c.get(q).doc(t)
	rows := rowIDs(doc, `[data-testid="tasks"] > li`)
	if len(rows) != 50 {
		t.Fatalf("first page has %d rows, want 50", len(rows))
	}
	first := map[string]bool{rows[0]: true, rows[1]: true, rows[2]: true}
	for _, id := range []string{f.task.ID, paused.ID, handedOff.ID} {
		if !first["task-"+id] {
			t.Errorf("task %s needs a person but is not among the first rows: %v", id, rows[:4])
		}
	}
	for id, want := range map[string]string{f.task.ID: "1 request awaits approval", paused.ID: "paused: resume or cancel it",
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
	doc2 := c.get(next).doc(t)
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
		"&need=approval":            {f.task.ID},
		"&need=handoff":             {handedOff.ID},
		"&action=issue_refund":      {f.task.ID},
		"&state=cancelled":          {quiet[4].ID, quiet[3].ID, quiet[2].ID},
		"&state=paused&need=person": {paused.ID},
	} {
		d := c.get(q + query).doc(t)
		got := rowIDs(d, `[data-testid="tasks"] > li`)
		if strings.Join(got, " ") != "task-"+strings.Join(want, " task-") {
			t.Errorf("%s shows %v, want %v", query, got, want)
		}
	}
	if got := c.get(q + "&need=paused").doc(t).Find(`[data-testid="task-pager"] [data-testid="showing"]`).Text(); got != "Showing the only task." {
		t.Errorf("filtered pager = %q", got)
	}

	// Taking the hand-off makes the task the agent's.
	ho := c.get("/handoffs").doc(t).Find(`[data-testid="take"]`).First().Closest("form").AttrOr("action", "")
	if res := c.post(ho, url.Values{"_csrf": {c.csrf("/handoffs")}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("take: %d", res.StatusCode)
	}
	d := c.get(q + "&need=mine").doc(t)
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
	b := setup(t, bundleOpts{shop: true})
	now := b.clock.Now()
	same := `{"summary":"Wants a refund for a lamp; two orders match.","facts":{"order_id":"ord_1","status":"delivered"},
		"would_propose":{"action":"issue_refund","args":{"order_id":"ord_1","amount_cents":4200,"reason_code":"damaged"}}}`
	var loop int64
	for i := range 30 {
		id := insertHandoff(t, b, "conv-loop", "", "transactional_high", same, now.Add(-3*time.Hour+time.Duration(i)*time.Minute))
		if i == 0 {
			loop = id
		}
	}
	other := insertHandoff(t, b, "conv-other", "", "ambiguous", `{"summary":"Asks about a charge."}`, now.Add(-time.Hour))
	// The same words in another conversation are another customer's work.
	twin := insertHandoff(t, b, "conv-twin", "", "transactional_high", same, now.Add(-2*time.Hour))
	for i := range 50 {
		insertHandoff(t, b, fmt.Sprintf("conv-many-%d", i), "", "informational", `{"summary":"A question."}`, now.Add(-time.Duration(i)*time.Second))
	}
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	doc := c.get("/handoffs").doc(t)
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
	if res := c.post(take, url.Values{"_csrf": {c.csrf("/handoffs")}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("take: %d", res.StatusCode)
	}
	var n int
	if err := b.store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM handoff_assignments WHERE user_id = $1`, b.users[accounts.Agent].ID).Scan(&n); err != nil || n != 30 {
		t.Errorf("taking the group assigned %d hand-offs (%v), want 30", n, err)
	}
	doc = c.get("/handoffs?status=mine").doc(t)
	if got := rowIDs(doc, `article[data-testid^="handoff-"]`); len(got) != 1 || got[0] != want[0] {
		t.Errorf("mine = %v", got)
	}
	if filterCount(doc, "status-waiting") != "52" || filterCount(doc, "status-mine") != "1" {
		t.Errorf("counts after taking: waiting %s, mine %s", filterCount(doc, "status-waiting"), filterCount(doc, "status-mine"))
	}
	next, _ := c.get("/handoffs").doc(t).Find(`[data-testid="next-page"]`).First().Attr("href")
	doc = c.get(next).doc(t)
	if got := doc.Find(`[data-testid="handoff-pager"] [data-testid="showing"]`).Text(); got != "Showing 51–53 of 53 conversations." {
		t.Errorf("second page: %q", got)
	}
	if got := rowIDs(doc, `article[data-testid^="handoff-"]`); got[len(got)-1] != want[0] {
		t.Errorf("the taken group is not last: %v", got)
	}
}
