package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/web/browsertest"
	"countersign/web/webtest"
)

// sdkDir is where `make test` puts the MCP TypeScript SDK (fetched from
// npm by .ci/install-deps); MCP_SDK overrides it.
func sdkDir() string {
	if p := os.Getenv("MCP_SDK"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", ".cache", "mcp-sdk")
}

// TestTheTypeScriptSDKConnectsWithOAuth runs the MCP TypeScript SDK's own
// OAuth client (testdata/oauth_sdk_client.mjs) against the console with
// nothing but the MCP URL: it discovers the authorization server from the
// 401, registers itself (or presents its metadata document), sends the
// person to the consent page — which the test answers as a signed-in
// agent — checks nothing but what the SDK checks, exchanges the code,
// lists the tools, and refreshes when its access token is refused. The
// browser variant signs in and consents in Chromium.
func TestTheTypeScriptSDKConnectsWithOAuth(t *testing.T) {
	t.Parallel()
	modules := filepath.Join(sdkDir(), "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatalf("the MCP TypeScript SDK is missing (run `make test`, which fetches it from npm): %v", err)
	}
	for _, kind := range []string{"registration", "metadata document", "browser"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			var fetches atomic.Int32
			docs := documentServer(t, &fetches)
			b := webtest.New(t, webtest.WithClientDocuments(docs))
			args := []string{sdkScript(t, modules), b.Server.URL + "/mcp"}
			if kind == "metadata document" {
				args = append(args, docs.URL+"/good.json")
			}
			consent, redirect := httpConsent(t, b)
			if kind == "browser" {
				consent, redirect = browserConsent(t, b)
			}
			got := runSDKClient(t, args, redirect, consent)
			if r := got["redirected"]["redirected"].(map[string]any); r["iss"] != b.Server.URL || r["error"] != nil {
				t.Errorf("the consent's redirect: %v", r)
			}
			id, _ := got["client_id"]["client_id"].(string)
			if want := docs.URL + "/good.json"; (kind != "metadata document" && !strings.HasPrefix(id, "ocl_")) || (kind == "metadata document" && id != want) {
				t.Errorf("the client's id: %q", id)
			}
			tools := func(k string) []any { l, _ := got[k]["tools"].([]any); return l }
			if !slices.Contains(tools("client_id"), any("open_task")) || !slices.Contains(tools("refreshed"), any("open_task")) {
				t.Errorf("tools listed: %v then %v", tools("client_id"), tools("refreshed"))
			}
			if got["refreshed"]["refreshed"] != true {
				t.Errorf("the spoiled access token was not refreshed: %v", got["refreshed"])
			}
		})
	}
}

// httpConsent answers the consent page over HTTP as a signed-in agent
// acting as themselves, and returns where the browser was sent; the
// redirect URI is the SDK script's default.
func httpConsent(t *testing.T, b *webtest.Stack) (func(authorize *url.URL) string, string) {
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	return func(to *url.URL) string { return c.Consent(to.Query(), "self", "allow").String() }, ""
}

// browserConsent answers the consent page in Chromium on a phone-sized
// screen: the agent signs in through the form the page leads to, the page
// fits the screen and passes axe-core's checks,
// they choose themselves and connect; the browser lands on a callback
// server of the test's, whose address is the client's redirect URI.
func browserConsent(t *testing.T, b *webtest.Stack) (func(authorize *url.URL) string, string) {
	landed := make(chan string, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case landed <- "http://" + r.Host + r.URL.RequestURI():
		default:
		}
		_, _ = io.WriteString(w, "Connected; you can close this window.")
	}))
	t.Cleanup(cb.Close)
	ctx := browsertest.New(t, 90*time.Second)
	agent := b.Users[accounts.Agent]
	return func(to *url.URL) string {
		err := chromedp.Do(ctx,
			chromedp.EmulateViewport(390, 844),
			chromedp.Navigate(to.String()),
			chromedp.WaitVisible(chromedp.CSS(`#email`)),
			chromedp.SendKeys(chromedp.CSS(`#email`), agent.Email),
			chromedp.SendKeys(chromedp.CSS(`#password`), agent.Password),
			chromedp.Submit(chromedp.CSS(`[data-testid="sign-in-form"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="oauth-form"]`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		browsertest.CheckAccessibility(t, ctx, "the consent page")
		fits, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= document.documentElement.clientWidth`))
		if err != nil || !fits {
			t.Errorf("the consent page is wider than a phone (390 px): %v", err)
		}
		browsertest.Screenshot(t, ctx, "oauth-consent-phone.png")
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#act-as-0`)),
			chromedp.Click(chromedp.CSS(`[data-testid="oauth-allow"]`))); err != nil {
			t.Fatal(err)
		}
		select {
		case u := <-landed:
			return u
		case <-time.After(30 * time.Second):
			t.Fatal("the browser never reached the client's redirect URI")
			return ""
		}
	}, cb.URL + "/callback"
}

// runSDKClient runs the SDK client script with args, answers its
// authorization with consent, and returns its JSON lines by key.
func runSDKClient(t *testing.T, args []string, redirect string, consent func(*url.URL) string) map[string]map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "NO_COLOR=1")
	if redirect != "" {
		cmd.Env = append(cmd.Env, "REDIRECT_URI="+redirect)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]any{}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		var line map[string]any
		if err := json.Unmarshal(lines.Bytes(), &line); err != nil {
			t.Fatalf("the client printed %q", lines.Text())
		}
		if u, ok := line["authorize"].(string); ok {
			to, err := url.Parse(u)
			if err != nil || !strings.Contains(u, "/oauth/authorize?") {
				t.Fatalf("the client was sent to %q", u)
			}
			_, _ = io.WriteString(stdin, consent(to)+"\n")
			continue
		}
		for k := range line {
			got[k] = line
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the SDK client: %v\n%v\n%s", err, got, stderr.String())
	}
	return got
}

// sdkScript copies the SDK client script into a folder whose
// node_modules is the SDK's, where node's module resolution finds it.
func sdkScript(t *testing.T, modules string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "oauth_sdk_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "client.mjs")
	if err := os.WriteFile(script, src, 0o600); err != nil {
		t.Fatal(err)
	}
	return script
}
