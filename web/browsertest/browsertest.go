// Package browsertest starts headless Chromium for tests of the pages people
// use. Chromium is a required dependency (`make test` installs it): a test
// that needs it fails, never skips, when it is missing.
package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/internal/chromium"
	"countersign/internal/slowtest"
)

// ExecPath finds Chromium: CHROMIUM_PATH, else chromium or
// chromium-browser on PATH (package chromium).
func ExecPath() (string, error) { return chromium.Path() }

// New starts a private headless Chromium for this test and returns a tab's
// context, which ends with the test or after timeout. Under -short (outside
// CI) it skips the test instead: see package slowtest.
func New(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	slowtest.Skip(t, "drives headless Chromium")
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

// Violation is one accessibility rule axe-core found broken.
type Violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []string `json:"target"`
		HTML   string   `json:"html"`
	} `json:"nodes"`
}

// AxePath is where `make test` puts axe-core (fetched from npm by
// .ci/install-deps); AXE_PATH overrides it.
func AxePath() string {
	if p := os.Getenv("AXE_PATH"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", ".cache", "axe-core", "axe.min.js")
}

// Axe injects axe-core into the current page and returns the violations
// whose impact is serious or critical. It fails the test when axe-core is
// missing (run `make test`, which fetches it).
func Axe(t testing.TB, ctx context.Context) []Violation {
	t.Helper()
	var serious []Violation
	for _, v := range AxeAll(t, ctx) {
		if v.Impact == "serious" || v.Impact == "critical" {
			serious = append(serious, v)
		}
	}
	return serious
}

// AxeAll is Axe with every violation axe-core reports, whatever its
// impact (minor and moderate too): for pages held to "axe clean".
func AxeAll(t testing.TB, ctx context.Context) []Violation {
	t.Helper()
	src, err := os.ReadFile(AxePath())
	if err != nil {
		t.Fatalf("browsertest: axe-core not found (run `make test`, which fetches it from npm): %v", err)
	}
	// The page's CSP allows only its own scripts; the DevTools protocol
	// evaluates outside it.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](string(src)+"\n;true")); err != nil {
		t.Fatalf("browsertest: inject axe-core: %v", err)
	}
	res, err := chromedp.Run(ctx, chromedp.Evaluate[[]Violation](
		`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations)`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("browsertest: run axe-core: %v", err)
	}
	return res
}

// CheckAccessibility fails the test (without stopping it) for every serious
// or critical axe-core violation on the current page, naming the page.
func CheckAccessibility(t testing.TB, ctx context.Context, page string) {
	t.Helper()
	if v := Axe(t, ctx); len(v) > 0 {
		t.Errorf("%s: %d serious accessibility violations: %+v", page, len(v), v)
	}
}

// ScreenshotDir is where Screenshot writes: $SCREENSHOT_DIR when set, else
// countersign-screenshots under the temp dir. Browser tests save one PNG per
// page state a reader looks at, so a reviewer can judge the pages by eye.
func ScreenshotDir() string {
	if dir := os.Getenv("SCREENSHOT_DIR"); dir != "" {
		return dir
	}
	return filepath.Join(os.TempDir(), "countersign-screenshots")
}

// Screenshot saves a PNG of the whole current page under ScreenshotDir and
// returns its path.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 is PNG
	if err != nil {
		t.Fatalf("browsertest: screenshot: %v", err)
	}
	dir := ScreenshotDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("browsertest: screenshot: %v", err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("browsertest: screenshot: %v", err)
	}
	t.Logf("screenshot: %s", path)
	return path
}
