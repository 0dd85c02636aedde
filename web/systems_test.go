package web_test

import (
	"net/http"
	"testing"

	"countersign/internal/accounts"
)

// TestSystemsPageListsEveryActionAndReadTool: the console lists what the
// connected demo shop offers, with each action's current stage.
func TestSystemsPageListsEveryActionAndReadTool(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{shop: true})
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	res := c.get("/systems")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /systems: %d", res.StatusCode)
	}
	doc := res.doc(t)
	sys, _ := b.web.Registry().System("shop")
	for _, a := range sys.Actions() {
		sel := doc.Find(`[data-testid="system-shop"] [data-testid="action-` + a.Name + `"]`)
		if sel.Length() != 1 {
			t.Errorf("action %s not listed", a.Name)
			continue
		}
		if sel.Find("pre.guidance").Text() != a.Guidance || a.Guidance == "" {
			t.Errorf("action %s: guidance not shown", a.Name)
		}
	}
	for _, r := range sys.ReadTools() {
		if doc.Find(`[data-testid="read-`+r.Name+`"]`).Length() != 1 {
			t.Errorf("read tool %s not listed", r.Name)
		}
	}
	if got := doc.Find(`[data-testid="action-issue_refund"] .badge.info`).Text(); got != "stage 3" {
		t.Errorf("issue_refund stage badge = %q, want stage 3", got)
	}
	c2 := b.client(t)
	c2.mustSignIn(b.users[accounts.Customer])
	if res := c2.get("/systems"); res.StatusCode != http.StatusForbidden {
		t.Errorf("customer on /systems: %d, want 403", res.StatusCode)
	}
}
