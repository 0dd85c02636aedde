package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
)

// TestQueueCardLeadsWithWhyAPersonDecides: the queue's row and the
// card's page open with the route reason kept at proposal time, in words
// (no stage codes); the card's page adds the policy version it was routed
// under (the row stays one line, so a phone shows more than one card).
func TestQueueCardLeadsWithWhyAPersonDecides(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	inv := f.Refund(t, f.Order, 4200)
	if inv.RouteReason == "" {
		t.Fatal("the proposal has no route reason")
	}
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])

	check := func(where, why string, version bool) {
		t.Helper()
		if !strings.HasPrefix(why, "Why you decide:") {
			t.Errorf("%s: the reason is %q, want it to say why you decide", where, why)
		}
		if strings.Contains(strings.ToLower(why), "stage ") {
			t.Errorf("%s: the reason names a stage code: %q", where, why)
		}
		if version && !strings.Contains(why, "policy version ") {
			t.Errorf("%s: the reason lacks the policy version: %q", where, why)
		}
	}
	row := c.Get("/queue").Doc(t).Find(`[data-testid="card-` + inv.ID + `"] .qc-main`)
	if first := row.Children().First(); first.AttrOr("data-testid", "") != "route-reason" {
		t.Errorf("the queue row leads with %q, want the route reason", first.Text())
	}
	check("queue row", strings.Join(strings.Fields(row.Find(`[data-testid="route-reason"]`).Text()), " "), false)

	if res := c.Post("/queue/"+inv.ID+"/claim", url.Values{"_csrf": {c.CSRF("/queue")}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("claim: %d", res.StatusCode)
	}
	page := c.Get("/queue/" + inv.ID).Doc(t)
	why := page.Find(`[data-testid="route-reason"]`)
	if why.Length() != 1 {
		t.Fatalf("the card's page shows %d route reasons, want 1", why.Length())
	}
	check("card page", strings.Join(strings.Fields(why.Text()), " "), true)
}
