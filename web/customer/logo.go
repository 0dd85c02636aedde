package customer

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/adapter"
	"countersign/internal/safehttp"
)

// A business's logo is served by the console, never linked: a customer's
// page that loads an image from a third party tells it about every visit,
// and the pages' Content-Security-Policy allows images of this site only.
// The console fetches each logo on first use, in the background of the
// page that first asks, keeps it in memory and serves it at
// /brand/<system>/logo; until it has one, or when it cannot fetch it, a
// page shows the business's name alone, and a failure is said in the log.
//
// Anyone can make a page ask for a logo, and the address is a business's
// description, not the console's own: the fetch goes through safehttp
// (https only, public addresses only, checked on the address connected
// to; no redirect followed) with a size and a time limit, and a failed
// fetch is tried again only after a back-off, never on every visit.

const (
	// maxLogoBytes bounds a logo the console keeps: a 32×32 header image.
	maxLogoBytes = 256 << 10
	// logoFetchTimeout bounds the one fetch of a logo, body included (the
	// client's timeout; tests set a shorter one).
	logoFetchTimeout = 5 * time.Second
	// logoRetryFirst is how long a failed logo waits before it is fetched
	// again; each further failure doubles it, up to logoRetryMax.
	logoRetryFirst = time.Minute
	logoRetryMax   = time.Hour
)

// logoTypes are the image types a logo may be, as the bytes say (not as
// the sender claims). SVG is not one: it is a document that can hold
// script and links.
var logoTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true, "image/gif": true}

// logos holds the fetched logo of each system, keyed by system and URL (a
// finite set: the connected systems). mu guards the map and every logo's
// fields; no fetch runs under it.
type logos struct {
	client *http.Client
	log    *slog.Logger
	now    func() time.Time
	mu     sync.Mutex
	by     map[string]*logo
}

// logo is one system's logo; body nil while it could not be fetched.
type logo struct {
	body     []byte
	ctype    string
	failures int
	retryAt  time.Time
	// fetching is closed when the fetch under way ends; nil when none
	// is, so that there is one fetch at a time per system.
	fetching chan struct{}
}

// newLogos fetches logos with a safehttp client built from opts. opts
// never allows private addresses here (a logo is the business's public
// image): tests reach their own server through opts.Test.
func newLogos(opts safehttp.Options, log *slog.Logger, now func() time.Time) *logos {
	opts.AllowPrivate = false
	if opts.Timeout <= 0 {
		opts.Timeout = logoFetchTimeout
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	return &logos{client: safehttp.NewClient(opts), log: log, now: now, by: map[string]*logo{}}
}

// cached is system's logo at raw if it has been fetched, nil otherwise,
// without waiting: a page renders at once with the business's name, and
// the first page to ask (past any back-off) starts the fetch in the
// background, so a slow logo host never holds a page.
func (ls *logos) cached(system, raw string) *logo {
	l, start, _ := ls.claim(system, raw)
	if start {
		go ls.run(system, raw, l)
	}
	return ls.ready(l)
}

// get is system's logo at raw, fetched on first use; nil when there is
// none to show. It waits for a fetch under way (or until ctx ends). A
// failed fetch is logged and not tried again before its back-off has
// passed.
func (ls *logos) get(ctx context.Context, system, raw string) *logo {
	l, start, wait := ls.claim(system, raw)
	switch {
	case start:
		ls.run(system, raw, l)
	case wait != nil:
		select {
		case <-wait:
		case <-ctx.Done():
			return nil
		}
	}
	return ls.ready(l)
}

// claim is the logo of system at raw (nil for no address), whether the
// caller is to fetch it now (then it is marked under way), and the channel
// of a fetch already under way.
func (ls *logos) claim(system, raw string) (l *logo, start bool, wait <-chan struct{}) {
	if raw == "" {
		return nil, false, nil
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l = ls.by[system+"\x00"+raw]
	if l == nil {
		l = &logo{}
		ls.by[system+"\x00"+raw] = l
	}
	switch {
	case l.body != nil:
		return l, false, nil
	case l.fetching != nil:
		return l, false, l.fetching
	case ls.now().Before(l.retryAt):
		return l, false, nil
	}
	l.fetching = make(chan struct{})
	return l, true, nil
}

// run fetches l, claimed by claim, and keeps the result: the image, or
// the failure and when to try again.
func (ls *logos) run(system, raw string, l *logo) {
	body, ctype, err := ls.fetch(raw)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	defer func() { close(l.fetching); l.fetching = nil }()
	if err != nil {
		l.failures++
		wait := min(logoRetryFirst<<min(l.failures-1, 10), logoRetryMax)
		l.retryAt = ls.now().Add(wait)
		ls.log.Warn("the business's logo could not be fetched; its pages show its name alone",
			"system", system, "url", raw, "error", err, "failures", l.failures, "retry_after", wait)
		return
	}
	l.body, l.ctype = body, ctype
}

// ready is l when it has an image to show, else nil.
func (ls *logos) ready(l *logo) *logo {
	if l == nil {
		return nil
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l.body == nil {
		return nil
	}
	return l
}

// fetch reads the image at raw: an https:// address answering 200 with at
// most maxLogoBytes whose bytes are one of logoTypes.
func (ls *logos) fetch(raw string) ([]byte, string, error) {
	if err := adapter.CheckLogoURL(raw); err != nil {
		return nil, "", err
	}
	// Not the page's context: the result is kept, so a visitor who leaves
	// must not make the logo fail for everyone.
	ctx, cancel := context.WithTimeout(context.Background(), ls.client.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "image/png, image/jpeg, image/webp, image/gif")
	res, err := ls.client.Do(req)
	if err != nil {
		return nil, "", ls.timedOut(err)
	}
	defer res.Body.Close()
	if to := safehttp.Redirect(res); to != "" {
		return nil, "", &logoError{"the server answered " + res.Status + ", a redirect to " + to + ", which is not followed: give the image's own address"}
	}
	if res.StatusCode != http.StatusOK {
		return nil, "", &logoError{"the server answered " + res.Status}
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxLogoBytes+1))
	if err == nil && ctx.Err() != nil {
		// A body cut short by the deadline can read as a clean end: what
		// arrived in time is not the whole image.
		err = ctx.Err()
	}
	if err != nil {
		return nil, "", ls.timedOut(err)
	}
	if len(body) > maxLogoBytes {
		return nil, "", &logoError{"the image is larger than 256 kB"}
	}
	ctype := http.DetectContentType(body)
	if !logoTypes[ctype] {
		return nil, "", &logoError{"the image is " + ctype + ", not PNG, JPEG, WebP or GIF"}
	}
	return body, ctype, nil
}

// timedOut says a fetch that ran out of time in those words, whichever
// part of the answer it was waiting for; any other error is as it is.
func (ls *logos) timedOut(err error) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return &logoError{"the server did not send the whole image within " + ls.client.Timeout.String()}
	}
	return err
}

type logoError struct{ msg string }

func (e *logoError) Error() string { return e.msg }

// logoPath is where the console serves system's logo.
func logoPath(system string) string { return "/brand/" + url.PathEscape(system) + "/logo" }

// handleLogo answers GET /brand/:system/logo: the system's logo as the
// console fetched it, or 404. Unlike a page, it waits for a fetch under
// way (or starts one past the back-off): it is asked for only by a page
// that showed the logo, or by someone asking for it directly.
func (h *Handler) handleLogo(c echo.Context) error {
	reg := h.cfg.Registry
	if reg == nil {
		return echo.ErrNotFound
	}
	s, err := reg.System(c.Param("system"))
	if err != nil {
		return echo.ErrNotFound
	}
	l := h.logos.get(c.Request().Context(), s.Name(), adapter.BrandOf(s).LogoURL)
	if l == nil {
		return echo.ErrNotFound
	}
	hd := c.Response().Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "public, max-age=86400")
	return c.Blob(http.StatusOK, l.ctype, l.body)
}
