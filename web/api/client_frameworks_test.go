package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/web/webtest"
)

// frameworksDir is where `make test` installs the agent frameworks the
// TypeScript package's adapters are written for (.ci/install-deps, from
// npm); TS_FRAMEWORKS_DIR overrides it.
func frameworksDir() string {
	if d := os.Getenv("TS_FRAMEWORKS_DIR"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", ".cache", "ts-frameworks")
}

// buildFrameworkExamples copies the TypeScript package into a temporary
// folder, links the frameworks' node_modules beside it and compiles the
// package with its adapters and examples (tsconfig.frameworks.json,
// tsc --strict); it returns the folder and node's path.
func buildFrameworkExamples(t *testing.T) (work, node string) {
	t.Helper()
	bin, node := typescriptTools(t)
	modules := filepath.Join(frameworksDir(), "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "ai")); err != nil {
		t.Fatalf("the agent frameworks are missing (run `make test`, whose .ci/install-deps fetches them from npm): %v", err)
	}
	work = t.TempDir()
	if err := os.CopyFS(work, os.DirFS(clientDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "tsc"), "-p", "tsconfig.frameworks.json")
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc -p tsconfig.frameworks.json: %v\n%s", err, out)
	}
	return work, node
}

// refundRoute is one way a refund is decided: the policy it runs under,
// the amount, the state the proposal waits in and who moves it on.
type refundRoute struct {
	name    string
	cents   int
	setup   func(t *testing.T, b *webtest.Stack)
	waits   controlplane.State
	decide  func(t *testing.T, b *webtest.Stack, id, page string)
	hasPage bool
}

// refundRoutes are the three routes of the refund scenario: the customer
// confirms on their page (stage 4), an agent approves (stage 3, the
// stack's policy), the policy runs it (stage 5, within its maximum).
var refundRoutes = []refundRoute{
	{name: "customer", cents: 700, hasPage: true, waits: controlplane.AwaitingConfirmation,
		setup: func(t *testing.T, b *webtest.Stack) { b.StageForCustomer(t, "issue_refund") },
		decide: func(t *testing.T, b *webtest.Stack, id, page string) {
			c := b.Client(t)
			res := c.Open(strings.TrimPrefix(page, b.Server.URL))
			if got := c.Post("/requests/"+id+"/confirm", url.Values{"_csrf": {c.PageCSRF(res)}}); got.StatusCode != http.StatusSeeOther {
				t.Fatalf("the customer's confirmation: %d\n%s", got.StatusCode, got.Text)
			}
		}},
	{name: "agent", cents: 700, waits: controlplane.AwaitingApproval,
		setup: func(*testing.T, *webtest.Stack) {},
		decide: func(t *testing.T, b *webtest.Stack, id, _ string) {
			inv := b.Invocation(t, id)
			if _, err := b.Control.StaffDecide(context.Background(), controlplane.StaffDecision{Actor: b.Users[accounts.Agent].Actor(),
				InvocationID: id, Verb: controlplane.StaffApprove, Version: inv.Version, ArgsHash: inv.ArgsHash}); err != nil {
				t.Fatal(err)
			}
		}},
	{name: "automatic", cents: 700, waits: controlplane.Approved,
		setup: func(t *testing.T, b *webtest.Stack) {
			ctx := context.Background()
			m := b.Users[accounts.Manager]
			p, err := b.Control.Policy(ctx, "shop", "issue_refund")
			if err != nil {
				t.Fatal(err)
			}
			most := int64(5000)
			p.Stage, p.AutoMaxCents, p.OwnerID = controlplane.StageAutonomous, &most, &m.ID
			if _, err := b.Control.ChangePolicy(ctx, controlplane.UserActor(m.ID, string(accounts.Manager), m.Name), p, p.Version,
				"refunds run by themselves in this test"); err != nil {
				t.Fatal(err)
			}
		},
		decide: func(*testing.T, *webtest.Stack, string, string) {}},
}

// runFrameworkRefund runs a compiled framework example (its path under
// dist/) on each route against a console over real PostgreSQL and checks
// what its model was given: the example prints {"page"} when the host's
// UI is handed the customer's page, {"proposed"} when its model read the
// proposal, and {"outcome", "model_saw"} at the end, every prompt its mock
// model received included.
func runFrameworkRefund(t *testing.T, work, node, example string) {
	for _, r := range refundRoutes {
		t.Run(r.name, func(t *testing.T) {
			b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
			b.Assistants.SetSiteSecrets(map[string][]byte{"shop": webtest.ShopSiteSecret})
			bot, key := b.NewVouchedAssistant(t, "framework")
			order := b.DamagedOrder(t)
			r.setup(t, b)
			assertion := b.VouchFor(bot.ID, webtest.Jordan, nil)

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, filepath.Join("dist", "examples", "frameworks", example))
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "HOME="+work, "NO_COLOR=1", "COUNTERSIGN_URL="+b.Server.URL, "COUNTERSIGN_KEY="+key,
				"COUNTERSIGN_CUSTOMER="+webtest.Jordan, "COUNTERSIGN_ASSERTION="+assertion, "COUNTERSIGN_ORDER="+order,
				"COUNTERSIGN_CENTS="+strconv.Itoa(r.cents))
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// A failed check stops the example rather than leave it waiting.
			defer func() {
				cancel()
				_ = cmd.Wait()
			}()
			lines := bufio.NewScanner(stdout)
			lines.Buffer(nil, 16<<20)
			// Each line is the next thing the example must say; anything else
			// stops it at once rather than leaving it waiting.
			next := func(want string) map[string]any {
				t.Helper()
				var m map[string]any
				if !lines.Scan() || json.Unmarshal(lines.Bytes(), &m) != nil || m[want] == nil {
					cancel()
					_ = cmd.Wait()
					t.Fatalf("the example printed %q where a %q line was due: %s", lines.Text(), want, stderr.String())
				}
				return m
			}
			page := ""
			if r.hasPage {
				page, _ = next("page")["page"].(string)
				if !strings.HasPrefix(page, b.Server.URL+"/c/") {
					t.Fatalf("the host's UI was handed %q, want the customer's page", page)
				}
			}
			proposed := next("proposed")
			id, _ := proposed["proposed"].(string)
			if proposed["state"] != string(r.waits) {
				t.Fatalf("the model read the proposal in %v, want %s", proposed["state"], r.waits)
			}
			r.decide(t, b, id, page)
			if _, err := b.Control.Dispatch(context.Background(), id); err != nil {
				t.Fatal(err)
			}
			out := next("outcome")
			if out["outcome"] != id || out["state"] != "completed" {
				t.Errorf("the example's outcome: %v %v, want %s completed (it said %q)", out["outcome"], out["state"], id, out["said"])
			}
			saw, _ := json.Marshal(out["model_saw"])
			if !bytes.Contains(saw, []byte(id)) {
				t.Errorf("the model never read its invocation: %s", saw)
			}
			for what, s := range map[string]string{"the customer's page": b.Server.URL + "/c/", "the task assertion": assertion} {
				if bytes.Contains(saw, []byte(s)) {
					t.Errorf("the model was given %s", what)
				}
			}
			if page != "" && bytes.Contains(saw, []byte(strings.TrimPrefix(page, b.Server.URL))) {
				t.Errorf("the model was given the customer's page's path")
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("the example: %v\n%s", err, stderr.String())
			}
		})
	}
}

// TestTheVercelAISDKExampleRunsTheRefundOnEachRoute runs
// examples/frameworks/ai-sdk.ts, the AI SDK's MockLanguageModelV4 driving
// the task's tools through aiSDKTools, on the customer's, the agent's
// and the automatic route: the task opens with the business's assertion
// outside the model, the customer's page reaches the host's UI and not
// the model, and the model's wait_for_outcome returns the completed
// refund.
func TestTheVercelAISDKExampleRunsTheRefundOnEachRoute(t *testing.T) {
	work, node := buildFrameworkExamples(t)
	t.Parallel()
	runFrameworkRefund(t, work, node, "ai-sdk.js")
}

// TestTheOpenAIAgentsExampleRunsTheRefundOnEachRoute runs
// examples/frameworks/openai-agents.ts, an Agent whose scripted Model
// (the SDK ships no mock one) drives the task's tools through
// CountersignMCPServer, on the customer's, the agent's and the automatic
// route, with the same checks as the AI SDK's example.
func TestTheOpenAIAgentsExampleRunsTheRefundOnEachRoute(t *testing.T) {
	work, node := buildFrameworkExamples(t)
	t.Parallel()
	runFrameworkRefund(t, work, node, "openai-agents.js")
}

// TestTheLangChainExampleRunsTheRefundOnEachRoute runs
// examples/frameworks/langchain.ts, a LangGraph agent (createReactAgent)
// whose model is LangChain's FakeStreamingChatModel taught the script,
// with the task's tools from langChainTools, on the customer's, the
// agent's and the automatic route, with the same checks as the AI SDK's
// example.
func TestTheLangChainExampleRunsTheRefundOnEachRoute(t *testing.T) {
	work, node := buildFrameworkExamples(t)
	t.Parallel()
	runFrameworkRefund(t, work, node, "langchain.js")
}

// TestTheMCPSDKExampleTakesThePageAsAnElicitation runs
// examples/frameworks/mcp-sdk.ts, the MCP TypeScript SDK's client
// declaring URL elicitation through connectTask, on each route: with no
// result filter, the customer's page reaches the host's UI only as the
// server's -32042 elicitation, and the tool results the script reads
// carry neither it nor the assertion.
func TestTheMCPSDKExampleTakesThePageAsAnElicitation(t *testing.T) {
	work, node := buildFrameworkExamples(t)
	t.Parallel()
	runFrameworkRefund(t, work, node, "mcp-sdk.js")
}
