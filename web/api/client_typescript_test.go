package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"countersign/web/webtest"
)

// clientDir is the TypeScript client package, web/api/clients/typescript.
const clientDir = "clients/typescript"

// TestTheTypeScriptClientRunsTheRefund checks the TypeScript package
// against the console: its types are what openapi-typescript makes of the
// document served now (src/schema.d.ts is regenerated and must not
// differ), it compiles under tsc --strict, its result filter passes its
// checks (test/filter.ts: the customer's page leaves a tool result for the
// host's UI, never the model's copy; test/wait.ts: the long poll asks
// for 1 to 30 seconds), and its example runs the refund
// over real HTTP: the task opens with the business's assertion in the
// client, the refund is proposed, and the example's long poll returns as
// soon as an agent rejects it. The example prints a line once it
// proposed, which is when the test has the agent decide.
func TestTheTypeScriptClientRunsTheRefund(t *testing.T) {
	bin, node := typescriptTools(t)
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	b.Assistants.SetSiteSecrets(map[string][]byte{"shop": webtest.ShopSiteSecret})
	bot, key := b.NewVouchedAssistant(t, "ts-client")
	order := b.DamagedOrder(t)
	doc := b.Call(t, "", http.MethodGet, "/api/v1/openapi.json", nil).Want(t, http.StatusOK)

	work := t.TempDir()
	if err := os.CopyFS(work, os.DirFS(clientDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "openapi.json"), []byte(doc.Body), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HOME="+work, "NO_COLOR=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, out)
		}
	}
	run(filepath.Join(bin, "openapi-typescript"), "openapi.json", "-o", "generated.d.ts")
	committed, _ := fs.ReadFile(os.DirFS(clientDir), "src/schema.d.ts")
	generated, _ := os.ReadFile(filepath.Join(work, "generated.d.ts"))
	if string(committed) != string(generated) {
		t.Errorf("%s/src/schema.d.ts is not what openapi-typescript makes of the document: regenerate it "+
			"(COUNTERSIGN_OPENAPI=<the console>/api/v1/openapi.json npm run generate) and commit it", clientDir)
	}
	run(filepath.Join(bin, "tsc"), "-p", "tsconfig.json")
	run(node, filepath.Join("dist", "test", "filter.js"))
	run(node, filepath.Join("dist", "test", "wait.js"))

	cmd := exec.CommandContext(ctx, node, filepath.Join("dist", "examples", "refund.js"))
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "COUNTERSIGN_URL="+b.Server.URL, "COUNTERSIGN_KEY="+key, "COUNTERSIGN_CUSTOMER="+webtest.Jordan,
		"COUNTERSIGN_ASSERTION="+b.VouchFor(bot.ID, webtest.Jordan, nil), "COUNTERSIGN_ORDER="+order)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		_ = cmd.Wait()
		t.Fatalf("the example printed nothing: %s", stderr.String())
	}
	var first map[string]any
	if err := json.Unmarshal(lines.Bytes(), &first); err != nil {
		t.Fatalf("the example's first line %q: %v", lines.Text(), err)
	}
	id, _ := first["proposed"].(string)
	if first["state"] != "awaiting_approval" || first["mcp_url"] != b.Server.URL+"/mcp?task="+b.Invocation(t, id).TaskID {
		t.Errorf("the example's proposal: %s", lines.Text())
	}
	reject(t, b, id)
	if !lines.Scan() {
		_ = cmd.Wait()
		t.Fatalf("the example printed no outcome: %s", stderr.String())
	}
	var settled map[string]any
	_ = json.Unmarshal(lines.Bytes(), &settled)
	if settled["settled"] != id || settled["state"] != "rejected" {
		t.Errorf("the example's outcome: %s", lines.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("the example: %v\n%s", err, stderr.String())
	}
}
