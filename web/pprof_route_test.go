package web_test

import (
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
)

// TestNoProfilerOnTheConsoleAddress: Go's profiler is served only on
// -debug-addr's own listener; on the console's address /debug/pprof/ is
// not found, signed in or not.
func TestNoProfilerOnTheConsoleAddress(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	c := b.Client(t)
	paths := []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=1", "/debug/pprof/profile"}
	for _, p := range paths {
		if res := c.Get(p); res.StatusCode != 404 {
			t.Errorf("GET %s signed out: %d, want 404", p, res.StatusCode)
		}
	}
	c.MustSignIn(b.Users[accounts.Admin])
	for _, p := range paths {
		if res := c.Get(p); res.StatusCode != 404 {
			t.Errorf("GET %s as admin: %d, want 404", p, res.StatusCode)
		}
	}
}
