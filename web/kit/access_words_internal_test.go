package kit

import (
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/locale/pseudotest"
)

// TestARolesRefusalOnAPageComesFromTheCatalogue: a page refused to a
// role says so in the console's words, the role's too, so an
// installation's override of each shows; the API's refusal keeps its
// English; both read as before.
func TestARolesRefusalOnAPageComesFromTheCatalogue(t *testing.T) {
	refusal := func(path string) string {
		c := echo.New().NewContext(httptest.NewRequest("GET", path, nil), httptest.NewRecorder())
		e, ok := apperr.As(refuseRole(c, accounts.Agent))
		if !ok || e.Kind != apperr.Forbidden {
			t.Fatalf("%s: %v, want a Forbidden apperr", path, e)
		}
		return e.Message
	}
	const want = "Your role (Support agent) cannot open this page."
	for _, path := range []string{"/admin/users", "/api/v1/invocations"} {
		if got := refusal(path); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	pseudotest.InstallMarkedConsole(t)
	if got, want := refusal("/admin/users"), "⟦Your role (⟦Support agent⟧) cannot open this page.⟧"; got != want {
		t.Errorf("page: %q, want the catalogue's %q", got, want)
	}
	if got := refusal("/api/v1/invocations"); got != want {
		t.Errorf("API: %q, want its own %q", got, want)
	}
}
