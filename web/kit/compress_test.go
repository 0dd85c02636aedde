package kit_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/static"
)

// gzipGet sends GET path with the given Accept-Encoding (none when empty)
// and returns the response with its body as sent, undecoded.
func gzipGet(c *webtest.Client, path, acceptEncoding string) (*http.Response, []byte) {
	c.T.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.Stack.Server.URL+path, nil)
	if acceptEncoding != "" {
		// Set by hand, so Go's transport does not decode it for us.
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		c.T.Fatal(err)
	}
	return res, body
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("gzip body: %v", err)
	}
	return out
}

func wantVary(t *testing.T, res *http.Response) {
	t.Helper()
	for _, v := range res.Header.Values("Vary") {
		if strings.Contains(v, "Accept-Encoding") {
			return
		}
	}
	t.Errorf("%s: Vary %q lacks Accept-Encoding", res.Request.URL.Path, res.Header.Values("Vary"))
}

// TestStaticFilesGzipWhenAsked: htmx and the stylesheet go gzipped to a
// client that accepts gzip and as they are to one that does not; both
// forms carry the same immutable Cache-Control and Vary: Accept-Encoding,
// and the gzipped one decodes to the very bytes embedded.
func TestStaticFilesGzipWhenAsked(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	c := b.Client(t)
	for _, name := range []string{"htmx.min.js", "app.css", "console.js"} {
		url := static.URL(name)
		want, err := os.ReadFile("../../static/" + name)
		if err != nil {
			t.Fatal(err)
		}
		res, body := gzipGet(c, url, "gzip, deflate, br")
		if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: status %d, Content-Encoding %q, want 200 gzip", name, res.StatusCode, res.Header.Get("Content-Encoding"))
		}
		if got := gunzip(t, body); !bytes.Equal(got, want) {
			t.Errorf("%s: gzipped body decodes to %d bytes, want the %d embedded", name, len(got), len(want))
		}
		if name == "htmx.min.js" && len(body) > len(want)/2 {
			t.Errorf("htmx: %d bytes gzipped of %d", len(body), len(want))
		}
		t.Logf("%s: %d bytes, %d gzipped", name, len(want), len(body))
		wantVary(t, res)
		cache := res.Header.Get("Cache-Control")

		plain, raw := gzipGet(c, url, "")
		if plain.Header.Get("Content-Encoding") != "" || !bytes.Equal(raw, want) {
			t.Errorf("%s without Accept-Encoding: Content-Encoding %q, %d bytes", name, plain.Header.Get("Content-Encoding"), len(raw))
		}
		wantVary(t, plain)
		if plain.Header.Get("Cache-Control") != cache || !strings.Contains(cache, "immutable") {
			t.Errorf("%s: Cache-Control %q gzipped, %q plain", name, cache, plain.Header.Get("Cache-Control"))
		}
		refused, raw := gzipGet(c, url, "gzip;q=0, identity")
		if refused.Header.Get("Content-Encoding") != "" || !bytes.Equal(raw, want) {
			t.Errorf("%s with gzip;q=0: Content-Encoding %q", name, refused.Header.Get("Content-Encoding"))
		}
	}
}

// TestPagesAndJSONGzipButNotTinyBodiesOrRedirects: a console page and the
// OpenAPI document go gzipped and decode to what they say; a redirect and
// the health probe's few bytes go as they are.
func TestPagesAndJSONGzipButNotTinyBodiesOrRedirects(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])

	res, body := gzipGet(c, "/queue", "gzip")
	if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("/queue: status %d, Content-Encoding %q", res.StatusCode, res.Header.Get("Content-Encoding"))
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(gunzip(t, body)))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Find(`input[name="_csrf"]`).Length() == 0 && doc.Find(`[data-testid]`).Length() == 0 {
		t.Errorf("/queue decoded is not the page")
	}
	wantVary(t, res)

	res, body = gzipGet(c, "/api/v1/openapi.json", "gzip")
	if res.Header.Get("Content-Encoding") != "gzip" || !bytes.HasPrefix(bytes.TrimSpace(gunzip(t, body)), []byte("{")) {
		t.Errorf("openapi.json: Content-Encoding %q", res.Header.Get("Content-Encoding"))
	}

	res, body = gzipGet(c, "/healthz", "gzip")
	if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "" || len(body) == 0 {
		t.Errorf("/healthz: status %d, Content-Encoding %q, body %q", res.StatusCode, res.Header.Get("Content-Encoding"), body)
	}
	res, _ = gzipGet(c, "/", "gzip")
	if res.Header.Get("Content-Encoding") != "" && res.StatusCode/100 == 3 {
		t.Errorf("a redirect went gzipped")
	}
}

// TestTaskEventStreamIsNeverGzipped: the live task view's event stream goes
// out as it is, even to a client that accepts gzip, and its first event
// arrives while the stream stays open (a gzip writer would hold it).
func TestTaskEventStreamIsNeverGzipped(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.Server.URL+"/tasks/"+f.Task.ID+"/events", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ce := res.Header.Get("Content-Encoding"); ce != "" || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("event stream: Content-Encoding %q, Content-Type %q", ce, res.Header.Get("Content-Type"))
	}
	lines := bufio.NewReader(res.Body)
	for {
		l, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before its first comment: %v", err)
		}
		if strings.HasPrefix(l, ": watching") {
			return
		}
	}
}
