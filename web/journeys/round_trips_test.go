package journeys_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// TestQueuePageRoundTrips: a signed-in agent's queue page costs three
// statements — the session with its user, the queue, the navigation
// badge's counts — and the session and its user come from one query.
func TestQueuePageRoundTrips(t *testing.T) {
	t.Parallel()
	rec := &webtest.Statements{}
	b := webtest.New(t, webtest.WithQueryTracer(rec))
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	c.Get("/queue") // the session's last-seen write, at most once a minute, is behind us
	var res webtest.Response
	sql := rec.During(func() { res = c.Get("/queue") })
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/queue: %d", res.StatusCode)
	}
	if len(sql) > 3 {
		t.Errorf("/queue sent %d statements, want at most 3:\n%s", len(sql), strings.Join(sql, "\n"))
	}
	var sessions, users int
	for _, q := range sql {
		if strings.Contains(q, "FROM sessions") && strings.Contains(q, "JOIN users") {
			sessions++
		} else if strings.Contains(q, "FROM users") || strings.Contains(q, "FROM sessions") {
			users++
		}
	}
	if sessions != 1 || users != 0 {
		t.Errorf("the session and its user took %d joined and %d separate statements, want one joined:\n%s", sessions, users, strings.Join(sql, "\n"))
	}
	if res.Doc(t).Find(`[data-testid="signed-in-as"], header`).Length() == 0 {
		t.Errorf("the page does not show its header")
	}
}

// TestDisabledUsersSessionStillIgnored: the user read with the session is
// judged as before: once disabled, the session signs no one in.
func TestDisabledUsersSessionStillIgnored(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	u := b.CreateUser(t, accounts.Agent)
	c := b.Client(t)
	c.MustSignIn(u)
	if res := c.Get("/queue"); res.StatusCode != http.StatusOK {
		t.Fatalf("/queue signed in: %d", res.StatusCode)
	}
	if _, err := b.Store.Pool().Exec(context.Background(), `UPDATE users SET disabled_at = now() WHERE id = $1`, u.ID); err != nil {
		t.Fatal(err)
	}
	if res := c.Get("/queue"); res.StatusCode == http.StatusOK {
		t.Fatalf("/queue after the user was disabled: %d, want a sign-in redirect or refusal", res.StatusCode)
	}
}

// reads counts the statements of sql that load one invocation or one task
// by id, and those that write a confirmation link.
func reads(sql []string) (invocations, tasks, links int) {
	for _, q := range sql {
		switch {
		case strings.Contains(q, "FROM invocations WHERE id = $1"):
			invocations++
		case strings.Contains(q, "FROM tasks WHERE id = $1"):
			tasks++
		case strings.Contains(q, "INSERT INTO confirmation_links"), strings.Contains(q, "UPDATE confirmation_links"):
			links++
		}
	}
	return invocations, tasks, links
}

// TestACustomerDecisionReadsItsRequestOnce: a customer's confirm, decline
// and stop each load the invocation and its task once, in the control
// plane's one call, whatever the pages read to show them.
func TestACustomerDecisionReadsItsRequestOnce(t *testing.T) {
	t.Parallel()
	rec := &webtest.Statements{}
	b := webtest.New(t, webtest.WithShop(), webtest.WithQueryTracer(rec))
	b.StageForCustomer(t, webtest.CustomerActions...)
	for _, verb := range []string{"confirm", "decline", "stop"} {
		inv, link := b.PendingRefund(t)
		c := b.Client(t)
		tok := c.PageCSRF(c.Open(link))
		// The form posts the quote its page showed; read it before
		// counting, as the browser has it already.
		form := c.QuoteShown(inv.ID)
		form.Set("_csrf", tok)
		var res webtest.Response
		sql := rec.During(func() { res = c.Post("/requests/"+inv.ID+"/"+verb, form) })
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/requests/"+inv.ID {
			t.Fatalf("%s: %d to %q\n%s", verb, res.StatusCode, res.Header.Get("Location"), res.Text)
		}
		if i, k, _ := reads(sql); i != 1 || k != 1 {
			t.Errorf("%s read the invocation %d and the task %d times, want once each:\n%s", verb, i, k, strings.Join(sql, "\n"))
		}
	}
}

// TestSendingACodeOpensTheLinkOnce: POST /c/:token/code looks the link up
// once.
func TestSendingACodeOpensTheLinkOnce(t *testing.T) {
	t.Parallel()
	rec := &webtest.Statements{}
	b := webtest.New(t, webtest.WithTypedCodes(), webtest.WithShop(), webtest.WithQueryTracer(rec))
	b.StageForCustomer(t, webtest.CustomerActions...)
	_, link := b.PendingRefund(t)
	c := b.Client(t)
	page := c.Get(link)
	var code string
	sql := rec.During(func() { code = c.SendCode(link, page) })
	if code == "" {
		t.Fatal("no code")
	}
	opened := 0
	for _, q := range sql {
		if strings.Contains(q, "FROM confirmation_links WHERE selector = $1") {
			opened++
		}
	}
	if opened != 1 {
		t.Errorf("sending a code opened the link %d times, want once:\n%s", opened, strings.Join(sql, "\n"))
	}
}

// TestReadingAnInvocationWritesNothing: the customer's link is made when
// the invocation is routed to them, so the assistant's reads of it (the
// API, and the reconcile) only read it; the link is there right after the
// proposal.
func TestReadingAnInvocationWritesNothing(t *testing.T) {
	t.Parallel()
	rec := &webtest.Statements{}
	b := webtest.New(t, webtest.WithShop(), webtest.WithQueryTracer(rec))
	b.StageForCustomer(t, webtest.CustomerActions...)
	b.Assistant, b.Key = b.NewAssistant(t, "support-bot")
	b.Task = b.NewTask(t, b.Key, "conv-1", []string{"issue_refund"})
	ctx := context.Background()
	raw, _ := json.Marshal(webtest.RefundArgs(b.DamagedOrder(t), 700))
	inv, err := b.Control.Propose(ctx, controlplane.Proposal{TaskID: b.TaskID(), System: "shop", Action: "issue_refund", Args: raw,
		Summary: "Refund $7.00", Actor: b.Assistant.Actor()})
	if err != nil || inv.State != controlplane.AwaitingConfirmation {
		t.Fatalf("propose: %s, %v", inv.State, err)
	}
	id := inv.ID
	var links int
	if err := b.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM confirmation_links WHERE invocation_id = $1 AND revoked_at IS NULL`, id).Scan(&links); err != nil || links != 1 {
		t.Errorf("right after the proposal the invocation has %d live links (%v), want 1", links, err)
	}
	var got webtest.APIResponse
	sql := rec.During(func() {
		got = b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id, nil).Want(t, http.StatusOK)
	})
	for _, q := range sql {
		// The key's last use is the authentication's bookkeeping.
		if f := strings.Fields(q); len(f) > 0 && !strings.EqualFold(f[0], "SELECT") && !strings.HasPrefix(q, "UPDATE api_keys SET last_used_at") {
			t.Errorf("GET of an invocation wrote: %s", q)
		}
	}
	if n, _ := got.JSON["next"].(map[string]any); n["url"] == nil || !strings.Contains(n["url"].(string), "/c/") {
		t.Errorf("GET shows no link: %s", got.Body)
	}
}

// TestAPIReconcileReadsOnce: the assistant's reconcile loads the
// invocation and its task once, checks the assistant's and reconciles.
func TestAPIReconcileReadsOnce(t *testing.T) {
	t.Parallel()
	rec := &webtest.Statements{}
	b := webtest.New(t, webtest.WithShop(), webtest.WithQueryTracer(rec))
	b.Assistant, b.Key = b.NewAssistant(t, "support-bot")
	b.Task = b.NewTask(t, b.Key, "conv-1", []string{"issue_refund"})
	ctx := context.Background()
	id := b.ProposeRefund(t, b.DamagedOrder(t))
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: b.Users[accounts.Agent].Actor(), InvocationID: id, Verb: controlplane.StaffApprove, Version: 0, ArgsHash: b.Invocation(t, id).ArgsHash}); err != nil {
		t.Fatal(err)
	}
	if err := b.Shop.SetFault(demoshop.FaultRule{Route: "POST /refunds", DropAfterCommit: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Control.Dispatch(ctx, id); err != nil {
		t.Fatal(err)
	}
	b.Shop.ClearFaults()
	var res webtest.APIResponse
	sql := rec.During(func() { res = b.Call(t, b.Key, http.MethodPost, "/api/v1/invocations/"+id+"/reconcile", nil) })
	if res.Status != http.StatusOK || res.JSON["state"] != "completed" {
		t.Fatalf("reconcile: %d %s", res.Status, res.Body)
	}
	if i, k, _ := reads(sql); i != 1 || k != 1 {
		t.Errorf("reconcile read the invocation %d and the task %d times, want once each:\n%s", i, k, strings.Join(sql, "\n"))
	}
}
