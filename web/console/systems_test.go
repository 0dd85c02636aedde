package console_test

import (
	"net/http"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
	"countersign/internal/httpadapter"
)

// TestSystemsPageListsEveryActionAndReadTool: the console lists what the
// connected demo shop offers, with each action's current stage.
func TestSystemsPageListsEveryActionAndReadTool(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	res := c.Get("/systems")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /systems: %d", res.StatusCode)
	}
	doc := res.Doc(t)
	sys, _ := b.Web.Registry().System("shop")
	for _, a := range sys.Actions() {
		sel := doc.Find(`[data-testid="system-shop"] [data-testid="action-` + a.Name + `"]`)
		if sel.Length() != 1 {
			t.Errorf("action %s not listed", a.Name)
			continue
		}
		// The guidance is read as text: its first line a paragraph, no
		// raw Markdown in a pre.
		first, _, _ := strings.Cut(a.Guidance, "\n")
		g := sel.Find(`[data-testid="guidance"]`)
		if a.Guidance == "" || g.Find("p").First().Text() != first || sel.Find("pre").Length() != 0 {
			t.Errorf("action %s: guidance not shown as text: %q", a.Name, g.Text())
		}
	}
	for _, r := range sys.ReadTools() {
		if doc.Find(`[data-testid="read-`+r.Name+`"]`).Length() != 1 {
			t.Errorf("read tool %s not listed", r.Name)
		}
	}
	if items := doc.Find(`[data-testid="action-cancel_subscription"] [data-testid="guidance"] ol > li`).Length(); items != 4 {
		t.Errorf("cancel_subscription's numbered steps: %d list items, want 4", items)
	}
	if got := doc.Find(`[data-testid="action-issue_refund"] .badge.info`).Text(); got != "stage 3" {
		t.Errorf("issue_refund stage badge = %q, want stage 3", got)
	}
	if got := doc.Find(`[data-testid="system-shop"] h2`).Text(); got != "shop" {
		t.Errorf("the shop's heading is %q, want its name", got)
	}
	c2 := b.Client(t)
	c2.MustSignIn(b.Users[accounts.Customer])
	if res := c2.Get("/systems"); res.StatusCode != http.StatusForbidden {
		t.Errorf("customer on /systems: %d, want 403", res.StatusCode)
	}
}

// TestSystemsPageShowsADescribedSystemsTitle: a system described by a file
// is headed by the file's title, with its name beside it.
func TestSystemsPageShowsADescribedSystemsTitle(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	plans, err := httpadapter.LoadFile("../../internal/httpadapter/testdata/example/plans.json", httpadapter.Config{
		Getenv: func(string) string { return "http://127.0.0.1:1" }})
	if err != nil {
		t.Fatal(err)
	}
	b.Web.Registry().Connect(plans)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	doc := c.Get("/systems").Doc(t)
	h := doc.Find(`[data-testid="system-plans"] h2`)
	if h.Find("code").Text() != "plans" || !strings.HasPrefix(h.Text(), "Plans ") {
		t.Errorf("the described system's heading is %q, want its title Plans and its name plans", h.Text())
	}
}
