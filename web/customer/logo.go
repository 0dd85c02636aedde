package customer

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/adapter"
)

// A business's logo is served by the console, never linked: a customer's
// page that loads an image from a third party tells it about every visit,
// and the pages' Content-Security-Policy allows images of this site only.
// The console fetches each logo once, on first use, keeps it in memory and
// serves it at /brand/<system>/logo; a logo it cannot fetch leaves the
// page with the business's name alone, and is said once in the log.

const (
	// maxLogoBytes bounds a logo the console keeps: a 32×32 header image.
	maxLogoBytes = 256 << 10
	// logoFetchTimeout bounds the one fetch of a logo.
	logoFetchTimeout = 5 * time.Second
)

// logoTypes are the image types a logo may be, as the bytes say (not as
// the sender claims). SVG is not one: it is a document that can hold
// script and links.
var logoTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true, "image/gif": true}

// logos holds the fetched logo of each system, keyed by system and URL (a
// finite set: the connected systems).
type logos struct {
	client *http.Client
	log    *slog.Logger
	mu     sync.Mutex
	by     map[string]*logo
}

// logo is one system's logo: fetched once; body nil when it could not be.
type logo struct {
	once  sync.Once
	body  []byte
	ctype string
}

func newLogos(client *http.Client, log *slog.Logger) *logos {
	if client == nil {
		client = &http.Client{Timeout: logoFetchTimeout}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &logos{client: client, log: log, by: map[string]*logo{}}
}

// get is system's logo at raw, fetched on first use; nil when there is
// none to show.
func (ls *logos) get(system, raw string) *logo {
	if raw == "" || adapter.CheckLogoURL(raw) != nil {
		return nil
	}
	ls.mu.Lock()
	l := ls.by[system+"\x00"+raw]
	if l == nil {
		l = &logo{}
		ls.by[system+"\x00"+raw] = l
	}
	ls.mu.Unlock()
	l.once.Do(func() {
		body, ctype, err := ls.fetch(raw)
		if err != nil {
			ls.log.Warn("the business's logo could not be fetched; its pages show its name alone",
				"system", system, "url", raw, "error", err)
			return
		}
		l.body, l.ctype = body, ctype
	})
	if l.body == nil {
		return nil
	}
	return l
}

// fetch reads the image at raw: a 200 answer of at most maxLogoBytes whose
// bytes are one of logoTypes.
func (ls *logos) fetch(raw string) ([]byte, string, error) {
	// Not the page's context: the result is kept, so a visitor who leaves
	// must not make the logo fail for everyone.
	ctx, cancel := context.WithTimeout(context.Background(), logoFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "image/png, image/jpeg, image/webp, image/gif")
	res, err := ls.client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, "", &logoError{"the server answered " + res.Status}
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxLogoBytes+1))
	if err != nil {
		return nil, "", err
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

type logoError struct{ msg string }

func (e *logoError) Error() string { return e.msg }

// logoPath is where the console serves system's logo.
func logoPath(system string) string { return "/brand/" + url.PathEscape(system) + "/logo" }

// handleLogo answers GET /brand/:system/logo: the system's logo as the
// console fetched it, or 404.
func (h *Handler) handleLogo(c echo.Context) error {
	reg := h.cfg.Registry
	if reg == nil {
		return echo.ErrNotFound
	}
	s, err := reg.System(c.Param("system"))
	if err != nil {
		return echo.ErrNotFound
	}
	l := h.logos.get(s.Name(), adapter.BrandOf(s).LogoURL)
	if l == nil {
		return echo.ErrNotFound
	}
	hd := c.Response().Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "public, max-age=86400")
	return c.Blob(http.StatusOK, l.ctype, l.body)
}
