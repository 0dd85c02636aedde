package customer_test

import (
	"bytes"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"countersign/web/webtest"
)

// logoServer serves body as /logo.png with the content type ctype over
// TLS, counting the fetches.
func logoServer(t *testing.T, ctype string, body []byte) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/logo.png" {
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		w.Header().Set("Content-Type", ctype)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestCustomerPagesServeTheShopsLogoThemselves: the shop's logo, an
// external https image, is fetched once by the console, in the background
// of the first page, and served from its own address (the pages allow
// images of this site only, and a third party must not learn of each
// visit), as a PNG that is not sniffed and may be cached; a page once it
// is fetched points at that address, never at the shop's server.
func TestCustomerPagesServeTheShopsLogoThemselves(t *testing.T) {
	t.Parallel()
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 32, 32))); err != nil {
		t.Fatal(err)
	}
	logo, hits := logoServer(t, "image/png", img.Bytes())
	b := webtest.New(t, webtest.WithShop(), webtest.WithLogo(logo))
	b.StageForCustomer(t, webtest.CustomerActions...)
	_, link := b.PendingRefund(t)
	c := b.Client(t)
	page := c.Open(link).Request.URL.Path
	// The logo route waits for the fetch the page started.
	res, err := http.Get(b.Server.URL + "/brand/shop/logo")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/png" || res.Header.Get("X-Content-Type-Options") != "nosniff" ||
		res.Header.Get("Cache-Control") == "" || !bytes.Equal(body, img.Bytes()) {
		t.Errorf("logo: %d %q nosniff %q cache %q, %d bytes (want %d)", res.StatusCode, res.Header.Get("Content-Type"),
			res.Header.Get("X-Content-Type-Options"), res.Header.Get("Cache-Control"), len(body), img.Len())
	}
	src, _ := c.Get(page).Doc(t).Find(`header img[data-testid="brand-logo"]`).Attr("src")
	if src != "/brand/shop/logo" {
		t.Errorf("logo src %q, want the console's /brand/shop/logo", src)
	}
	c.Get("/requests")
	if n := hits.Load(); n != 1 {
		t.Errorf("the logo was fetched %d times, want once", n)
	}
}

// TestCustomerPagesWithoutAnImageLogoShowTheName: a logo that is an SVG
// (a document that can hold script), whatever it claims to be, is not
// kept: the page shows the shop's name alone and the route answers 404.
func TestCustomerPagesWithoutAnImageLogoShowTheName(t *testing.T) {
	t.Parallel()
	logo, _ := logoServer(t, "image/png", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`))
	b := webtest.New(t, webtest.WithShop(), webtest.WithLogo(logo))
	b.StageForCustomer(t, webtest.CustomerActions...)
	_, link := b.PendingRefund(t)
	res := b.Client(t).Open(link)
	if n := res.Doc(t).Find(`header img`).Length(); n != 0 || webtest.TextByTestID(res, t, "brand-name") != webtest.ShopName {
		t.Errorf("%d logo images, name %q: want the name alone", n, webtest.TextByTestID(res, t, "brand-name"))
	}
	r, err := http.Get(b.Server.URL + "/brand/shop/logo")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound {
		t.Errorf("logo route %d, want 404", r.StatusCode)
	}
}

// hostileLogoServer is a TLS logo server that misbehaves by path: it
// redirects, sends too much, or stalls; it counts every request.
func hostileLogoServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	var self string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		pngHead := []byte("\x89PNG\r\n\x1a\n")
		switch r.URL.Path {
		case "/to-http":
			http.Redirect(w, r, "http://"+strings.TrimPrefix(self, "https://")+"/logo.png", http.StatusFound)
		case "/to-loopback":
			http.Redirect(w, r, self+"/logo.png", http.StatusMovedPermanently)
		case "/to-metadata":
			http.Redirect(w, r, "https://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-private":
			http.Redirect(w, r, "https://10.0.0.7/logo.png", http.StatusTemporaryRedirect)
		case "/big.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(append(pngHead, make([]byte, 300<<10)...))
		case "/slow.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(pngHead)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	self = srv.URL
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestCustomerPagesRefuseAHostileLogo: a logo address that redirects
// (to http, to loopback, to the metadata address, to a private address),
// points at the metadata or a private address itself, is plain http, or
// answers with too large or too slow a body is refused with the reason in
// the log; the page renders with the shop's name alone and the logo route
// answers 404 once the fetch the page started has failed.
func TestCustomerPagesRefuseAHostileLogo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, url, reason string }{
		{"redirect to http", "{logo}/to-http", "302 Found, a redirect to http://127.0.0.1"},
		{"redirect to loopback", "{logo}/to-loopback", "301 Moved Permanently, a redirect to https://127.0.0.1"},
		{"redirect to the metadata address", "{logo}/to-metadata", "a redirect to https://169.254.169.254/"},
		{"redirect to a private address", "{logo}/to-private", "a redirect to https://10.0.0.7/"},
		{"the metadata address", "https://169.254.169.254/logo.png", "refused to connect to 169.254.169.254: a link-local address"},
		{"a private address", "https://10.0.0.7/logo.png", "refused to connect to 10.0.0.7: a private address"},
		{"another loopback port", "https://127.0.0.1:1/logo.png", "refused to connect to 127.0.0.1: a loopback address"},
		{"plain http", "http://example.com/logo.png", "is not an https:// URL"},
		{"an oversize body", "{logo}/big.png", "larger than 256 kB"},
		{"a slow body", "{logo}/slow.png", "did not send the whole image within 2s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			logo, _ := hostileLogoServer(t)
			logs := &webtest.LockedBuffer{}
			b := webtest.New(t, webtest.WithShop(), webtest.WithLogo(logo), webtest.WithLogoURL(tc.url), webtest.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
			b.StageForCustomer(t, webtest.CustomerActions...)
			_, link := b.PendingRefund(t)
			res := b.Client(t).Open(link)
			if n := res.Doc(t).Find(`header img`).Length(); n != 0 || webtest.TextByTestID(res, t, "brand-name") != webtest.ShopName {
				t.Errorf("%d logo images, name %q: want the name alone", n, webtest.TextByTestID(res, t, "brand-name"))
			}
			// The logo route waits for the fetch the page started.
			r, err := http.Get(b.Server.URL + "/brand/shop/logo")
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			if r.StatusCode != http.StatusNotFound {
				t.Errorf("logo route %d, want 404", r.StatusCode)
			}
			if got := logs.String(); !strings.Contains(got, "logo could not be fetched") || !strings.Contains(got, tc.reason) {
				t.Errorf("log %q, want the refusal with %q", got, tc.reason)
			}
		})
	}
}

// TestCustomerPagesBackOffAFailedLogo: a logo that fails is not fetched
// again on every visit (anyone can ask for the logo route, without a
// session): further requests within the back-off fetch nothing; after it,
// one fetches once more, and the next failure waits twice as long.
func TestCustomerPagesBackOffAFailedLogo(t *testing.T) {
	t.Parallel()
	logo, hits := hostileLogoServer(t)
	b := webtest.New(t, webtest.WithShop(), webtest.WithLogo(logo), webtest.WithLogoURL("{logo}/missing.png"))
	visit := func() {
		r, err := http.Get(b.Server.URL + "/brand/shop/logo")
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
	}
	for _, step := range []struct {
		advance time.Duration
		want    int32
	}{{0, 1}, {0, 1}, {59 * time.Second, 1}, {2 * time.Second, 2}, {0, 2}, {90 * time.Second, 2}, {31 * time.Second, 3}} {
		b.Clock.Advance(step.advance)
		visit()
		visit()
		if n := hits.Load(); n != step.want {
			t.Fatalf("after %s more: %d fetches, want %d", step.advance, n, step.want)
		}
	}
}
