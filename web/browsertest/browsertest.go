// Package browsertest starts headless Chromium for tests of the pages people
// use. Chromium is a required dependency (`make test` installs it): a test
// that needs it fails, never skips, when it is missing.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ExecPath finds Chromium: CHROMIUM_PATH, else chromium or
// chromium-browser on PATH.
func ExecPath() (string, error) {
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// New starts a private headless Chromium for this test and returns a tab's
// context, which ends with the test or after timeout.
func New(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	path, err := ExecPath()
	if err != nil {
		t.Fatalf("browsertest: Chromium not found (run `make test`, which installs it, or apt-get install -y chromium): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browserCtx, cancelTab := chromedp.NewContext(allocCtx)
	// The first run starts the browser, which lives as long as the context of
	// that run: so no timeout on it, only on what the test does afterwards.
	if err := chromedp.Do(browserCtx); err != nil {
		cancelTab()
		cancelAlloc()
		t.Fatalf("browsertest: start Chromium: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(browserCtx, timeout)
	t.Cleanup(func() { cancelTimeout(); cancelTab(); cancelAlloc() })
	return ctx
}
