package console_test

import (
	"context"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
)

// TestMetricsPageWordsAgreeAndNameAssistants: one result to check reads
// "1 request", not "1 requests"; the wait warning says what its rule
// tests (more than 1 in 10 over 4 hours), not that 9 in 10 wait; and the
// assistant filter offers assistants by name.
func TestMetricsPageWordsAgreeAndNameAssistants(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	webtest.MarkUnverified(t, b, f.Refund(t, f.Order, 4200).ID)
	bot, err := b.Assistants.Create(context.Background(), nil, "helpdesk-bot")
	if err != nil {
		t.Fatal(err)
	}
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])
	doc := c.Get("/metrics").Doc(t)

	link := strings.Join(strings.Fields(doc.Find(`[data-testid="metric-unverified"] [data-testid="unverified-link"]`).Text()), " ")
	if link != "1 request whose result needs checking: see them" {
		t.Errorf("the unverified count reads %q", link)
	}
	wait := doc.Find(`[data-testid="metric-approval_wait"]`).Text()
	if !strings.Contains(wait, "more than 1 in 10 wait over 4 hours") || strings.Contains(wait, "9 in 10 wait") {
		t.Errorf("the wait metric's rule contradicts its figure:\n%s", wait)
	}
	opt := doc.Find(`select[name="assistant"] option[value="` + bot.ID + `"]`)
	if got := strings.TrimSpace(opt.Text()); got != "helpdesk-bot" {
		t.Errorf("the assistant filter shows %s as %q, want its name", bot.ID, got)
	}
}
