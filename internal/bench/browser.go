package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"countersign/internal/chromium"
)

// navigationTiming is what the bench reads of a navigation's timing entry.
type navigationTiming struct {
	LoadEventEnd float64 `json:"loadEventEnd"`
	Status       int     `json:"responseStatus"`
}

// pageLoad is what headless Chromium measured of one page.
type pageLoad struct {
	loadMS float64 // median of the navigations' loadEventEnd, from the navigation's start
	nodes  int     // elements in the document after load
}

// loadInChromium opens path as the person whose session cookie is cookie,
// once to warm the browser's cache of the static files (content-hashed, a
// year's cache) and then n times, and returns the median load time
// (Navigation Timing's loadEventEnd: the HTML, its styles and scripts,
// parsed, laid out and run) and the number of elements.
func loadInChromium(ctx context.Context, base, path, cookie string, n int) (pageLoad, error) {
	bin, err := chromium.Path()
	if err != nil {
		return pageLoad{}, fmt.Errorf("bench: Chromium not found (make test installs it; or set CHROMIUM_PATH): %w", err)
	}
	dir, err := os.MkdirTemp("", "countersign-bench-chromium-")
	if err != nil {
		return pageLoad{}, err
	}
	defer os.RemoveAll(dir)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.UserDataDir(dir),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelTab := chromedp.NewContext(actx)
	defer cancelTab()
	tctx, cancel := context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()

	u, err := url.Parse(base)
	if err != nil {
		return pageLoad{}, err
	}
	name, value, ok := strings.Cut(strings.Split(cookie, ";")[0], "=")
	if !ok {
		return pageLoad{}, fmt.Errorf("bench: a cookie header without a cookie: %q", cookie)
	}
	httpOnly := true
	setCookie := chromedp.Action[chromedp.Void](func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, network.SetCookie, network.SetCookieParams{Name: strings.TrimSpace(name), Value: value,
			Domain: u.Hostname(), Path: "/", HTTPOnly: &httpOnly, SameSite: network.CookieSameSiteLax})
		return chromedp.Void{}, err
	})
	var times []float64
	var out pageLoad
	for i := 0; i <= n; i++ {
		var timing navigationTiming
		var actions []chromedp.Action[chromedp.Void]
		if i == 0 {
			actions = append(actions, setCookie)
		}
		actions = append(actions, chromedp.Navigate(base+path))
		if err := chromedp.Do(tctx, actions...); err != nil {
			return pageLoad{}, fmt.Errorf("bench: %s in Chromium: %w", path, err)
		}
		if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`performance.getEntriesByType('navigation')[0].loadEventEnd > 0`,
			chromedp.WithPollingInterval(5*time.Millisecond))); err != nil {
			return pageLoad{}, fmt.Errorf("bench: %s in Chromium: %w", path, err)
		}
		var err error
		if timing, err = chromedp.Run(tctx, chromedp.Evaluate[navigationTiming](`(() => { const e = performance.getEntriesByType('navigation')[0]; return {loadEventEnd: e.loadEventEnd, responseStatus: e.responseStatus || 200}; })()`)); err != nil {
			return pageLoad{}, fmt.Errorf("bench: %s in Chromium: %w", path, err)
		}
		if out.nodes, err = chromedp.Run(tctx, chromedp.Evaluate[int](`document.getElementsByTagName('*').length`)); err != nil {
			return pageLoad{}, fmt.Errorf("bench: %s in Chromium: %w", path, err)
		}
		if timing.Status != http.StatusOK {
			return pageLoad{}, fmt.Errorf("bench: %s in Chromium answered %d", path, timing.Status)
		}
		if i > 0 {
			times = append(times, timing.LoadEventEnd)
		}
	}
	slices.Sort(times)
	out.loadMS = times[len(times)/2]
	return out, nil
}
