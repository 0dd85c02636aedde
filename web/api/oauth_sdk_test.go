package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
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

	"countersign/internal/accounts"
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
// lists the tools, and refreshes when its access token is refused.
func TestTheTypeScriptSDKConnectsWithOAuth(t *testing.T) {
	t.Parallel()
	modules := filepath.Join(sdkDir(), "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatalf("the MCP TypeScript SDK is missing (run `make test`, which fetches it from npm): %v", err)
	}
	for _, kind := range []string{"registration", "metadata document"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			var fetches atomic.Int32
			docs := documentServer(t, &fetches)
			b := webtest.New(t, webtest.WithClientDocuments(docs))
			c := b.Client(t)
			c.MustSignIn(b.Users[accounts.Agent])
			args := []string{sdkScript(t, modules), b.Server.URL + "/mcp"}
			if kind == "metadata document" {
				args = append(args, docs.URL+"/good.json")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", args...)
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "NO_COLOR=1")
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
					if err != nil || !strings.HasPrefix(u, b.Server.URL+"/oauth/authorize?") {
						t.Fatalf("the client was sent to %q", u)
					}
					back := c.Consent(to.Query(), "self", "allow")
					_, _ = io.WriteString(stdin, back.String()+"\n")
					continue
				}
				for k := range line {
					got[k] = line
				}
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("the SDK client: %v\n%v\n%s", err, got, stderr.String())
			}
			if r := got["redirected"]["redirected"].(map[string]any); r["iss"] != b.Server.URL || r["error"] != nil {
				t.Errorf("the consent's redirect: %v", r)
			}
			id, _ := got["client_id"]["client_id"].(string)
			if want := docs.URL + "/good.json"; (kind == "registration" && !strings.HasPrefix(id, "ocl_")) || (kind != "registration" && id != want) {
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
