package safehttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
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
	for _, tc := range []struct {
		url  string
		addr string // "" when it may be either of the name's addresses
		want safehttp.Reason
	}{
		{srv.URL, "127.0.0.1", safehttp.LoopbackAddr},
		{"https://localhost:" + u.Port(), "", safehttp.LoopbackAddr},
		{"https://169.254.169.254/latest/meta-data/", "169.254.169.254", safehttp.LinkLocalAddr},
		{"https://10.1.2.3/logo.png", "10.1.2.3", safehttp.PrivateAddr},
		{"https://[::ffff:192.168.0.1]/", "", safehttp.PrivateAddr},
		{"http://example.com/logo.png", "http://example.com/logo.png", safehttp.NotHTTPS},
	} {
		res, err := get(production, tc.url)
		if err == nil {
			res.Body.Close()
			t.Errorf("%s: answered %s, want refused (%s)", tc.url, res.Status, tc.want)
			continue
		}
		var refused *safehttp.RefusedError
		if !errors.As(err, &refused) || refused.Reason != tc.want || tc.addr != "" && refused.Addr != tc.addr {
			t.Errorf("%s: %v, want refused %s as %s", tc.url, err, tc.addr, tc.want)
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
	var refused *safehttp.RefusedError
	if _, err := get(allowed, "https://127.0.0.1:1/elsewhere"); !errors.As(err, &refused) || refused.Reason != safehttp.LoopbackAddr || refused.Addr != "127.0.0.1" {
		t.Errorf("another loopback port under a test allowance: %v, want refused as a loopback address", err)
	}
}

func get(c *http.Client, raw string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, raw, nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}
