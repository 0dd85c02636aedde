package console_test

import (
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/locale/pseudotest"
	"countersign/web/webtest"
)

// TestConsolePagesAreTitledAndLabelledFromTheCatalogue: under an
// installation's override of every console text, each console page's
// title, the signed-in person's role and the metrics' names show the
// override: none is left written in a handler. Not parallel: the override
// is the process's catalogue.
func TestConsolePagesAreTitledAndLabelledFromTheCatalogue(t *testing.T) {
	b := webtest.New(t, webtest.WithShop())
	pseudotest.InstallMarkedConsole(t)
	marked := func(where, got string) {
		t.Helper()
		if got = strings.TrimSpace(got); !strings.HasPrefix(got, "⟦") || !strings.HasSuffix(got, "⟧") {
			t.Errorf("%s: %q is not the catalogue's", where, got)
		}
	}
	for role, paths := range map[accounts.Role][]string{
		accounts.Agent:   {"/", "/queue", "/tasks", "/handoffs", "/account/password", "/account/factors"},
		accounts.Manager: {"/metrics", "/metrics/table/containment", "/metrics/table/readiness", "/policies", "/systems"},
		accounts.Admin:   {"/admin/users", "/admin/clients", "/admin/assistants", "/admin/audit"},
	} {
		c := b.Client(t)
		c.MustSignIn(b.Users[role])
		for _, path := range paths {
			doc := c.Get(path).Doc(t)
			// The frame's own title message holds the page's: both marked.
			if got := doc.Find("title").Text(); !strings.HasPrefix(got, "⟦⟦") {
				t.Errorf("%s: the title %q is not the catalogue's", path, got)
			}
			marked(path+" role", doc.Find(`[data-testid="signed-in-as"] .badge`).Text())
		}
		if role == accounts.Manager {
			doc := c.Get("/metrics").Doc(t)
			marked("a metric's name", doc.Find(`[data-testid="metric-containment"] h2`).First().Text())
		}
	}
}
