package safehttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/internal/safehttp"
)

// TestClientReachesOnlyPublicHTTPS: a production client refuses, at
// connect time, a loopback server by its address and by a name that
// resolves to it, the metadata address and a private address; it refuses
// plain http before connecting; it follows no redirect. A test's
// allowance reaches exactly its own server and nothing else on loopback.
func TestClientReachesOnlyPublicHTTPS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "https://127.0.0.1:1/elsewhere", http.StatusFound)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	production := safehttp.NewClient(safehttp.Options{Timeout: 2 * time.Second})
	for _, tc := range []struct{ url, refused string }{
		{srv.URL, "refused to connect to 127.0.0.1: a loopback address"},
		{"https://localhost:" + u.Port(), "a loopback address"},
		{"https://169.254.169.254/latest/meta-data/", "refused to connect to 169.254.169.254: a link-local address"},
		{"https://10.1.2.3/logo.png", "refused to connect to 10.1.2.3: a private address"},
		{"https://[::ffff:192.168.0.1]/", "a private address"},
		{"http://example.com/logo.png", "not an https:// address"},
	} {
		res, err := get(production, tc.url)
		if err == nil {
			res.Body.Close()
			t.Errorf("%s: answered %s, want refused (%s)", tc.url, res.Status, tc.refused)
		} else if !strings.Contains(err.Error(), tc.refused) {
			t.Errorf("%s: %v, want %q", tc.url, err, tc.refused)
		}
	}

	allowed := safehttp.NewClient(safehttp.Options{Timeout: 2 * time.Second,
		Test: &safehttp.TestAllowance{Addrs: []string{u.Host}, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}})
	res, err := get(allowed, srv.URL+"/moved")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || safehttp.Redirect(res) != "https://127.0.0.1:1/elsewhere" {
		t.Errorf("redirect: %s to %q, want the 302 itself, not followed", res.Status, safehttp.Redirect(res))
	}
	if _, err := get(allowed, "https://127.0.0.1:1/elsewhere"); err == nil || !strings.Contains(err.Error(), "a loopback address") {
		t.Errorf("another loopback port under a test allowance: %v, want refused", err)
	}
}

func get(c *http.Client, raw string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, raw, nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}
