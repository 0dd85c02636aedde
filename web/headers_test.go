package web_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/static"
)

func TestSecurityHeadersOnPagesErrorsAndStatic(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	c := b.Client(t)
	cases := []struct {
		path   string
		status int
	}{
		{"/sign-in", http.StatusOK},
		{"/no-such-page", http.StatusNotFound},
		{static.URL("app.css"), http.StatusOK},
		{"/static/app.css", http.StatusNotFound},
	}
	nonces := map[string]bool{}
	for _, tc := range cases {
		res := c.Get(tc.path)
		if res.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", tc.path, res.StatusCode, tc.status)
		}
		csp := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'", "default-src 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", tc.path, csp, want)
			}
		}
		m := regexp.MustCompile(`'nonce-([A-Za-z0-9_-]{16,})'`).FindStringSubmatch(csp)
		if m == nil {
			t.Errorf("%s: CSP has no nonce: %q", tc.path, csp)
		} else {
			if nonces[m[1]] {
				t.Errorf("%s: nonce reused across responses", tc.path)
			}
			nonces[m[1]] = true
		}
		if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options = %q", tc.path, got)
		}
		if res.Header.Get("Referrer-Policy") == "" {
			t.Errorf("%s: no Referrer-Policy", tc.path)
		}
		if res.Header.Get("Strict-Transport-Security") != "" {
			t.Errorf("%s: HSTS sent over plain HTTP", tc.path)
		}
		if strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") && m != nil {
			if !strings.Contains(res.Text, `nonce="`+m[1]+`"`) {
				t.Errorf("%s: page script does not carry the CSP nonce", tc.path)
			}
		}
	}
	if got := c.Get(static.URL("app.css")).Header.Get("Cache-Control"); !strings.Contains(got, "immutable") {
		t.Errorf("static Cache-Control = %q, want a long immutable cache", got)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	c := b.Client(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		if res := c.Get(path); res.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s", path, res.StatusCode, res.Text)
		}
	}
	b.Store.Pool().Close()
	if res := c.Get("/readyz"); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the database gone: %d, want 503", res.StatusCode)
	}
	if res := c.Get("/healthz"); res.StatusCode != http.StatusOK {
		t.Errorf("/healthz with the database gone: %d, want 200 (the process is up)", res.StatusCode)
	}
}
