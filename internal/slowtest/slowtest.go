// Package slowtest lets the slowest tests — a real browser, console and
// PostgreSQL processes started and killed — step aside for `make test-short`
// (`go test -short`). They never step aside in CI: with CI=true every test
// runs, and none is skipped for a missing dependency either (those fail).
package slowtest

import (
	"os"
	"testing"
)

// Skip skips the calling test under -short, naming what makes it slow, unless
// the CI environment variable is "true", where it does nothing.
func Skip(t testing.TB, what string) {
	t.Helper()
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skipf("-short: skips a test that %s (make test runs it)", what)
	}
}
