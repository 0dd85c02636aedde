package web_test

import (
	"bytes"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
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
// external https image, is fetched once by the console and served from its
// own address (the pages allow images of this site only, and a third party
// must not learn of each visit), as a PNG that is not sniffed and may be
// cached; the page points at that address, never at the shop's server.
func TestCustomerPagesServeTheShopsLogoThemselves(t *testing.T) {
	t.Parallel()
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 32, 32))); err != nil {
		t.Fatal(err)
	}
	logo, hits := logoServer(t, "image/png", img.Bytes())
	b := setup(t, bundleOpts{shop: true, logo: logo})
	b.stageForCustomer(t, customerActions...)
	_, link := b.pendingRefund(t)
	c := b.client(t)
	doc := c.open(link).doc(t)
	src, _ := doc.Find(`header img[data-testid="brand-logo"]`).Attr("src")
	if src != "/brand/shop/logo" {
		t.Fatalf("logo src %q, want the console's /brand/shop/logo", src)
	}
	res, err := http.Get(b.srv.URL + src)
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
	c.get("/requests")
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
	b := setup(t, bundleOpts{shop: true, logo: logo})
	b.stageForCustomer(t, customerActions...)
	_, link := b.pendingRefund(t)
	res := b.client(t).open(link)
	if n := res.doc(t).Find(`header img`).Length(); n != 0 || text(res, t, "brand-name") != shopName {
		t.Errorf("%d logo images, name %q: want the name alone", n, text(res, t, "brand-name"))
	}
	r, err := http.Get(b.srv.URL + "/brand/shop/logo")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound {
		t.Errorf("logo route %d, want 404", r.StatusCode)
	}
}
