package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/internal/assistants"
	"countersign/internal/controlplane"
	"countersign/internal/webhooks"
	"countersign/web/browsertest"
)

func TestAdminWebhookInABrowser(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{shop: true})
	ab := &apiBundle{testBundle: b, asst: assistants.New(b.store, b.cp, b.web.Registry(), b.clock.Now)}
	ab.a, ab.key = ab.newAssistant(t, "browser-hook-bot")
	ab.task = ab.newTask(t, ab.key, "conv-browser-hook", []string{"issue_refund"})
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":"not today"}`, http.StatusServiceUnavailable)
	}))
	t.Cleanup(recv.Close)

	ctx := browsertest.New(t, 60*time.Second)
	card := `[data-testid="assistant-browser-hook-bot"]`
	err := chromedp.Do(ctx,
		chromedp.Navigate(b.srv.URL+"/"),
		browserSignIn(b.users[accounts.Admin]),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`)),
		chromedp.Navigate(b.srv.URL+"/admin/assistants"),
		chromedp.WaitVisible(chromedp.CSS(card+` [data-testid="webhook-form"]`)),
		chromedp.SendKeys(chromedp.CSS(`#webhook-url-`+ab.a.ID), recv.URL+"/outcomes"),
		chromedp.Click(chromedp.CSS(card+` [data-testid="register-webhook"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="new-webhook-secret"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`[data-testid="new-webhook-secret"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, webhooks.SecretPrefix) {
		t.Errorf("secret shown: %q", secret)
	}

	// A rejected refund is told to the endpoint, which answers 503.
	id := ab.proposeRefund(t, ab.damagedOrder(t))
	if _, err := b.cp.StaffDecide(context.Background(), controlplane.StaffDecision{Actor: controlplaneUser(b.users[accounts.Agent]), InvocationID: id, Verb: controlplane.StaffReject, Version: b.inv(t, id).Version, Reason: controlplane.OtherReason, Other: "not this one"}); err != nil {
		t.Fatal(err)
	}
	worker := webhooks.NewWorker(b.store, b.web.WebhookRender(b.srv.URL), webhooks.Config{AllowPrivate: true}, b.clock.Now, nil)
	if _, err := worker.Enqueue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.DeliverDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(b.srv.URL+"/admin/assistants"),
		chromedp.WaitVisible(chromedp.CSS(card+` [data-testid="deliveries-table"]`)),
		chromedp.Click(chromedp.CSS(card+` [data-testid="deliveries-table"] summary`)),
		chromedp.WaitVisible(chromedp.CSS(card+` [data-testid="attempt-status"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(card+` [data-testid="attempt"]`)))
	if err != nil {
		t.Fatal(err)
	}
	// The status is shown; the body of a non-2xx answer never is.
	if !strings.Contains(status, "HTTP 503") || strings.Contains(status, "not today") {
		t.Errorf("attempt shown as %q, want its status and not the answer's body", status)
	}
	browsertest.CheckAccessibility(t, ctx, "/admin/assistants with deliveries")
	browsertest.Screenshot(t, ctx, "admin-webhooks.png")

	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(card+` [data-testid="resend"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	flash, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`.flash`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(flash, "sent again") {
		t.Errorf("flash after resend: %q", flash)
	}
}
