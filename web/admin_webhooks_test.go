package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/accounts"
	"countersign/internal/assistants"
	"countersign/internal/controlplane"
	"countersign/internal/webhooks"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// hookPost is one POST an assistant's endpoint received.
type hookPost struct {
	delivery string
	sigErr   error
	payload  webhooks.Payload
}

func TestAdminWebhookDeliveriesAndResend(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b := setup(t, bundleOpts{shop: true, logger: logger})
	ab := &apiBundle{testBundle: b, asst: assistants.New(b.store, b.cp, b.web.Registry(), b.clock.Now)}
	ab.a, ab.key = ab.newAssistant(t, "hook-bot")
	ab.task = ab.newTask(t, ab.key, "conv-hook", []string{"issue_refund"})

	// The assistant's endpoint: the first POST of each delivery fails.
	var mu sync.Mutex
	var posts []hookPost
	secret := ""
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		p := hookPost{delivery: r.Header.Get(webhooks.DeliveryHeader),
			sigErr: webhooks.VerifyStandard(secret, r.Header, body, b.clock.Now(), 0)}
		_ = json.Unmarshal(body, &p.payload)
		posts = append(posts, p)
		n := len(posts)
		mu.Unlock()
		if n == 1 {
			http.Error(w, "try later <b>please</b>", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(recv.Close)

	c := b.client(t)
	c.mustSignIn(b.users[accounts.Admin])
	hookPath := "/admin/assistants/" + ab.a.ID + "/webhook"

	// A plain-http address that is not loopback is refused, naming the field.
	res := c.post(hookPath, url.Values{"_csrf": {c.csrf("/admin/assistants")}, "url": {"http://assistant.example.com/hook"}})
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("http URL: %d", res.StatusCode)
	}
	doc := res.doc(t)
	if doc.Find(`[data-testid="url-error"]`).Length() != 1 {
		t.Errorf("no field error for url:\n%s", res.body)
	}
	if v, _ := doc.Find(`#webhook-url-` + ab.a.ID).Attr("value"); v != "http://assistant.example.com/hook" {
		t.Errorf("the typed URL was not kept: %q", v)
	}

	// Registered: the secret is on this page only.
	res = c.post(hookPath, url.Values{"_csrf": {c.csrf("/admin/assistants")}, "url": {recv.URL + "/outcomes"}})
	if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("register: %d, Cache-Control %q", res.StatusCode, res.Header.Get("Cache-Control"))
	}
	secret, _ = res.doc(t).Find(`[data-testid="new-webhook-secret"]`).Attr("value")
	if !strings.HasPrefix(secret, webhooks.SecretPrefix) || len(secret) < 40 {
		t.Fatalf("secret %q", secret)
	}
	page := c.get("/admin/assistants")
	if strings.Contains(page.body, secret) {
		t.Errorf("the secret is shown again")
	}
	if got := page.doc(t).Find(`[data-testid="assistant-hook-bot"] [data-testid="webhook-url"]`).Text(); !strings.Contains(got, recv.URL+"/outcomes") {
		t.Errorf("endpoint shown as %q", got)
	}

	// An invocation of the assistant is rejected: the endpoint is told.
	id := ab.proposeRefund(t, ab.damagedOrder(t))
	inv := b.inv(t, id)
	if _, err := b.cp.StaffDecide(context.Background(), controlplane.StaffDecision{Actor: controlplaneUser(b.users[accounts.Agent]), InvocationID: id, Verb: controlplane.StaffReject, Version: inv.Version, Reason: controlplane.OtherReason, Other: "not this one"}); err != nil {
		t.Fatal(err)
	}
	worker := webhooks.NewWorker(b.store, b.web.WebhookRender(b.srv.URL), webhooks.Config{AllowPrivate: true}, b.clock.Now, logger)
	if n, err := worker.Enqueue(context.Background()); err != nil || n != 1 {
		t.Fatalf("enqueued %d, %v; want 1", n, err)
	}
	if _, err := worker.DeliverDue(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The body is the API's invocation, as GET /api/v1/invocations/{id}.
	mu.Lock()
	first := posts[0]
	mu.Unlock()
	if first.sigErr != nil || first.payload.Event != "invocation.rejected" {
		t.Fatalf("first post: %+v", first)
	}
	api := ab.call(t, ab.key, http.MethodGet, "/api/v1/invocations/"+id, nil).want(t, http.StatusOK)
	var got map[string]any
	if err := json.Unmarshal(first.payload.Invocation, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(api.json, got); diff != "" {
		t.Errorf("payload invocation differs from the API's (-api +payload):\n%s", diff)
	}

	// The page shows the failed attempt's status, never the body of a
	// non-2xx answer.
	row := func() (state string, attempts []string) {
		t.Helper()
		d := c.get("/admin/assistants").doc(t).Find(`[data-testid="assistant-hook-bot"] [data-testid="delivery-` + first.delivery + `"]`)
		if d.Length() != 1 {
			t.Fatalf("no row for delivery %s", first.delivery)
		}
		for _, s := range d.Find(`[data-testid="attempt"]`).EachIter() {
			attempts = append(attempts, strings.Join(strings.Fields(s.Text()), " "))
		}
		return d.Find(`[data-testid="delivery-state"]`).Text(), attempts
	}
	state, attempts := row()
	// A failing delivery says so in words: what came back, from where,
	// when, and when it is tried next; its event is named in words too.
	d := c.get("/admin/assistants").doc(t).Find(`[data-testid="assistant-hook-bot"] [data-testid="delivery-` + first.delivery + `"]`)
	at := b.clock.Now().Format("15:04:05")
	wantFailing := "HTTP 500 Internal Server Error from " + recv.URL + "/outcomes at " + at + ", next try " + b.clock.Now().Add(webhooks.Backoff(1)).Format("15:04:05") + "."
	if got := d.Find(`[data-testid="delivery-failing"]`).Text(); got != wantFailing {
		t.Errorf("failing delivery says %q, want %q", got, wantFailing)
	}
	if got := d.Find(`[data-testid="delivery-event"]`).Text(); got != "Rejected" {
		t.Errorf("event shown as %q, want Rejected", got)
	}
	if state != "Failing" || len(attempts) != 1 || !strings.Contains(attempts[0], "HTTP 500") || strings.Contains(attempts[0], "try later") {
		t.Errorf("after a 500: %s %q, want the status and not the answer's body", state, attempts)
	}
	// An attempt recorded before bodies of non-2xx answers stopped being
	// kept does not show its body either.
	if _, err := b.store.Pool().Exec(context.Background(), `UPDATE webhook_attempts SET body = 'kept from before' WHERE status = 500`); err != nil {
		t.Fatal(err)
	}
	if _, attempts = row(); len(attempts) != 1 || strings.Contains(attempts[0], "kept from before") {
		t.Errorf("an old 500's body is shown: %q", attempts)
	}

	// After the back-off it goes through.
	b.clock.Advance(webhooks.Backoff(1))
	if _, err := worker.DeliverDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if state, attempts = row(); state != "Delivered" || len(attempts) != 2 || !strings.Contains(attempts[1], "HTTP 200") {
		t.Errorf("after the retry: %s %q", state, attempts)
	}

	// Resend: only an admin may; it is sent again with the same delivery id.
	resend := "/admin/assistants/" + ab.a.ID + "/deliveries/" + first.delivery + "/resend"
	agent := b.client(t)
	agent.mustSignIn(b.users[accounts.Agent])
	if res := agent.post(resend, url.Values{"_csrf": {agent.csrf("/")}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("an agent resending: %d, want 403", res.StatusCode)
	}
	if res := c.post(resend, url.Values{}); res.StatusCode != http.StatusForbidden {
		t.Errorf("resend without CSRF: %d, want 403", res.StatusCode)
	}
	if res := c.post(resend, url.Values{"_csrf": {c.csrf("/admin/assistants")}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("resend: %d %s", res.StatusCode, res.body)
	}
	if state, _ = row(); state != "Pending" {
		t.Errorf("after resend: %s, want Pending", state)
	}
	if _, err := worker.DeliverDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(posts) != 3 || posts[2].delivery != first.delivery || posts[2].sigErr != nil {
		t.Errorf("posts after resend: %+v, want a third, signed, with delivery id %s", posts, first.delivery)
	}
	mu.Unlock()
	if state, attempts = row(); state != "Delivered" || len(attempts) != 3 {
		t.Errorf("after resending: %s %q", state, attempts)
	}

	// Send test event: a signed webhook.test delivery through the worker,
	// listed with the others.
	if res := c.post("/admin/assistants/"+ab.a.ID+"/webhook/test", url.Values{"_csrf": {c.csrf("/admin/assistants")}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("send test: %d %s", res.StatusCode, res.body)
	}
	if _, err := worker.DeliverDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(posts) != 4 || posts[3].payload.Event != string(controlplane.EventWebhookTest) || posts[3].sigErr != nil {
		t.Errorf("posts after the test: %+v, want a fourth, signed, of event %s", posts, controlplane.EventWebhookTest)
	}
	testDelivery := ""
	if len(posts) == 4 {
		testDelivery = posts[3].delivery
	}
	mu.Unlock()
	tr := c.get("/admin/assistants").doc(t).Find(`[data-testid="delivery-` + testDelivery + `"]`)
	if tr.Find(`[data-testid="delivery-event"]`).Text() != "Test event" || tr.Find(`[data-testid="delivery-state"]`).Text() != "Delivered" {
		t.Errorf("test delivery row: %q", strings.Join(strings.Fields(tr.Text()), " "))
	}

	logged := logs.String()
	if !strings.Contains(logged, "webhook registered") {
		t.Fatalf("the log was not captured:\n%s", logged)
	}
	if strings.Contains(logged, secret) || strings.Contains(logged, secret[len(webhooks.SecretPrefix):]) {
		t.Errorf("the signing secret is in the log")
	}
}

func TestAdminWebhookRemove(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ab := &apiBundle{testBundle: b, asst: assistants.New(b.store, b.cp, b.web.Registry(), b.clock.Now)}
	ab.a, _ = ab.newAssistant(t, "hook-bot")
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Admin])
	if res := c.post("/admin/assistants/"+ab.a.ID+"/webhook", url.Values{"_csrf": {c.csrf("/admin/assistants")},
		"url": {"https://assistant.example.com/outcomes"}}); res.StatusCode != http.StatusOK {
		t.Fatalf("register: %d", res.StatusCode)
	}
	if res := c.post("/admin/assistants/"+ab.a.ID+"/webhook/remove", url.Values{"_csrf": {c.csrf("/admin/assistants")}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove: %d", res.StatusCode)
	}
	if c.get("/admin/assistants").doc(t).Find(`[data-testid="webhook-url"]`).Length() != 0 {
		t.Errorf("the endpoint is still shown")
	}
	// Without an endpoint a test event is refused in words, and nothing is
	// queued or recorded.
	res := c.post("/admin/assistants/"+ab.a.ID+"/webhook/test", url.Values{"_csrf": {c.csrf("/admin/assistants")}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("test without an endpoint: %d", res.StatusCode)
	}
	if flash := c.get("/admin/assistants").doc(t).Find(`.flash.bad`).Text(); !strings.Contains(flash, "no endpoint") {
		t.Errorf("flash after a test without an endpoint: %q", flash)
	}
	var n int
	if err := b.store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM events WHERE action = $1`, string(controlplane.EventWebhookTest)).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d test events recorded without an endpoint (%v)", n, err)
	}
}

// TestAdminWebhookDeliveryToAReplacedEndpoint: a delivery that failed at
// an endpoint since replaced names that endpoint, not the current one, and
// says it is not tried again (replacing gave it up, and neither the worker
// nor Resend takes a delivery to a removed endpoint), never "next try" or
// "Resend to try again".
func TestAdminWebhookDeliveryToAReplacedEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{shop: true})
	ab := &apiBundle{testBundle: b, asst: assistants.New(b.store, b.cp, b.web.Registry(), b.clock.Now)}
	ab.a, ab.key = ab.newAssistant(t, "hook-bot")
	ab.task = ab.newTask(t, ab.key, "conv-hook", []string{"issue_refund"})
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	t.Cleanup(old.Close)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Admin])
	hookPath := "/admin/assistants/" + ab.a.ID + "/webhook"
	if res := c.post(hookPath, url.Values{"_csrf": {c.csrf("/admin/assistants")}, "url": {old.URL + "/old"}}); res.StatusCode != http.StatusOK {
		t.Fatalf("register: %d", res.StatusCode)
	}
	id := ab.proposeRefund(t, ab.damagedOrder(t))
	if _, err := b.cp.StaffDecide(context.Background(), controlplane.StaffDecision{Actor: controlplaneUser(b.users[accounts.Agent]), InvocationID: id, Verb: controlplane.StaffReject, Version: b.inv(t, id).Version, Reason: controlplane.OtherReason, Other: "not this one"}); err != nil {
		t.Fatal(err)
	}
	worker := webhooks.NewWorker(b.store, b.web.WebhookRender(b.srv.URL), webhooks.Config{AllowPrivate: true}, b.clock.Now, nil)
	if n, err := worker.Enqueue(context.Background()); err != nil || n != 1 {
		t.Fatalf("enqueued %d, %v; want 1", n, err)
	}
	if _, err := worker.DeliverDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if res := c.post(hookPath, url.Values{"_csrf": {c.csrf("/admin/assistants")}, "url": {"https://assistant.example.com/new"}}); res.StatusCode != http.StatusOK {
		t.Fatalf("replace: %d", res.StatusCode)
	}
	d := c.get("/admin/assistants").doc(t).Find(`[data-testid="assistant-hook-bot"] [data-testid^="delivery-"]`).Filter("tr")
	if d.Length() != 1 {
		t.Fatalf("%d delivery rows, want 1", d.Length())
	}
	failing := d.Find(`[data-testid="delivery-failing"]`).Text()
	want := "HTTP 500 Internal Server Error from " + old.URL + "/old at " + b.clock.Now().Format("15:04:05") + "; endpoint removed; not tried again."
	if failing != want || strings.Contains(d.Text(), "next try") || strings.Contains(d.Text(), "Resend to try again") {
		t.Errorf("delivery to the replaced endpoint says %q (row %q), want %q", failing, strings.Join(strings.Fields(d.Text()), " "), want)
	}
	if got := d.Find(`[data-testid="delivery-state"]`).Text(); got != "Endpoint removed" || d.Find(`[data-testid="resend"]`).Length() != 0 {
		t.Errorf("state %q, %d resend buttons: want Endpoint removed and none (Resend refuses it)", got, d.Find(`[data-testid="resend"]`).Length())
	}
}
