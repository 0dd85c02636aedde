package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"countersign/internal/slowtest"
	"countersign/web/webtest"
)

// typescriptDir is where `make test` installs openapi-typescript and the
// TypeScript compiler (.ci/install-deps, from npm); OPENAPI_TYPESCRIPT_DIR
// overrides it.
func typescriptDir() string {
	if d := os.Getenv("OPENAPI_TYPESCRIPT_DIR"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", ".cache", "openapi-typescript")
}

// typescriptTools skips the test under -short outside CI, and fails it
// when openapi-typescript, tsc or node is missing; it returns the folder
// of the first two and node's path.
func typescriptTools(t *testing.T) (bin, node string) {
	t.Helper()
	slowtest.Skip(t, "runs openapi-typescript, tsc and node")
	bin = filepath.Join(typescriptDir(), "node_modules", ".bin")
	for _, tool := range []string{"openapi-typescript", "tsc"} {
		if _, err := os.Stat(filepath.Join(bin, tool)); err != nil {
			t.Fatalf("%s is missing (run `make test`, whose .ci/install-deps fetches it from npm): %v", tool, err)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is missing (apt-get install -y nodejs): %v", err)
	}
	return bin, node
}

// TestATypedClientSendsArgumentsAndReadsAnswers generates TypeScript types
// from the document the console serves with openapi-typescript, compiles a
// small client written against them (testdata/typed-client/client.ts)
// with tsc --strict, and runs it with node against the console: it sends a
// proposal's arguments (refused by the compiler while args was a bare
// object, typed Record<string, never>), waits for the invocation and reads
// a refusal's fields and details. Every answer it gets is checked against
// the document by the test stack, with each object closed. A missing tool
// fails the test; only -short outside CI skips it.
func TestATypedClientSendsArgumentsAndReadsAnswers(t *testing.T) {
	bin, node := typescriptTools(t)
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	order := b.DamagedOrder(t)
	doc := b.Call(t, "", http.MethodGet, "/api/v1/openapi.json", nil).Want(t, http.StatusOK)

	work := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "typed-client", "client.ts"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"openapi.json": doc.Body,
		"client.ts":    string(src),
		"package.json": `{"type":"module","private":true}`,
		"tsconfig.json": `{"compilerOptions":{"strict":true,"noUncheckedIndexedAccess":true,"exactOptionalPropertyTypes":true,
			"target":"ES2022","module":"ES2022","moduleResolution":"bundler","lib":["ES2022","DOM"],"skipLibCheck":false,
			"outDir":"out"},"files":["client.ts"]}`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := func(env []string, name string, args ...string) []byte {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), append(env, "HOME="+work, "NO_COLOR=1", "npm_config_update_notifier=false")...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, out)
		}
		return out
	}
	run(nil, filepath.Join(bin, "openapi-typescript"), "openapi.json", "-o", "schema.d.ts")
	run(nil, filepath.Join(bin, "tsc"), "-p", "tsconfig.json")
	out := run([]string{"COUNTERSIGN_URL=" + b.Server.URL, "COUNTERSIGN_KEY=" + b.Key, "COUNTERSIGN_TASK=" + b.TaskID(),
		"COUNTERSIGN_ORDER=" + order}, node, filepath.Join("out", "client.js"))

	var got struct {
		ToolArgs       []string `json:"tool_args"`
		ProposedStatus int      `json:"proposed_status"`
		State          string   `json:"state"`
		Say            string   `json:"say"`
		AmountCents    float64  `json:"amount_cents"`
		QuoteLines     int      `json:"quote_lines"`
		WaitedState    string   `json:"waited_state"`
		Wait           string   `json:"wait"`
		RefusedStatus  int      `json:"refused_status"`
		RefusedCode    string   `json:"refused_code"`
		RefusedFields  []string `json:"refused_fields"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the client printed %s: %v", out, err)
	}
	if !slices.Contains(got.ToolArgs, "amount_cents") || got.ProposedStatus != http.StatusCreated || got.State != "awaiting_approval" ||
		got.Say == "" || got.AmountCents != 700 || got.QuoteLines == 0 {
		t.Errorf("the typed client's proposal: %s", out)
	}
	if got.WaitedState != "awaiting_approval" || got.Wait != "timeout" {
		t.Errorf("the typed client's wait: %s", out)
	}
	if got.RefusedStatus != http.StatusUnprocessableEntity || got.RefusedCode == "" || len(got.RefusedFields) == 0 {
		t.Errorf("the typed client's refusal: %s", out)
	}
}
