package conformance_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"countersign/internal/adapter/conformance"
)

// TestLoadFixtureNamesWhatIsMissing: a fixture file without the objects
// the checks need is refused naming each field and its fix; an unknown
// field is refused by name; a complete one gives the Fixture.
func TestLoadFixtureNamesWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, _, err := conformance.LoadFixture(write("thin.json", `{"principal": "a@example.com"}`))
	for _, want := range []string{"other is missing", "resolve is missing", "write is missing (fix:", "refusal is missing", "every is missing"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a thin fixture: %v, want it to say %q", err, want)
		}
	}
	if _, _, err := conformance.LoadFixture(write("typo.json", `{"principle": "a@example.com"}`)); err == nil || !strings.Contains(err.Error(), `"principle"`) {
		t.Errorf("an unknown field: %v", err)
	}
	fix, file, err := conformance.LoadFixture("../../httpadapter/testdata/fixtures/shop-http.json")
	if err != nil {
		t.Fatal(err)
	}
	if fix.Principal.CustomerRef != "customer@demo.countersign.test" || fix.Write.Action != "issue_refund" || len(fix.Every) != 4 ||
		fix.Refusal.Status != 422 || !strings.Contains(fix.Refusal.Body, `"amount_too_large"`) || file.FaultRoute != "POST /refunds" {
		t.Errorf("the shop's fixture read as %+v", fix)
	}
}
