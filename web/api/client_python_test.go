package api_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/slowtest"
	"countersign/internal/webhooks"
	"countersign/web/webtest"
)

// pythonDir is the Python client package, web/api/clients/python.
const pythonDir = "clients/python"

// pythonTool skips the test under -short outside CI, and fails it when
// python3 is missing or older than 3.9 (.ci/install-deps installs it with
// apt); it returns python3's path.
func pythonTool(t *testing.T) string {
	t.Helper()
	slowtest.Skip(t, "runs python3")
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is missing (run `make test`, whose .ci/install-deps installs it, or apt-get install -y python3): %v", err)
	}
	if out, err := exec.Command(python, "-c", "import sys; print(sys.version.split()[0]); sys.exit(sys.version_info < (3, 9))").CombinedOutput(); err != nil {
		t.Fatalf("python3 %s: the Python client needs Python 3.9 or later (%v)", strings.TrimSpace(string(out)), err)
	}
	return python
}

// pythonRoute is one way the example's refund goes: how the policy routes
// it, the state the proposal answers, and what the test does as the
// person, the customer or the dispatcher once it was proposed.
type pythonRoute struct {
	name     string
	state    string
	via      string
	webhook  bool
	setup    func(t *testing.T)
	decide   func(t *testing.T, id string, page string)
	customer bool
}

// TestThePythonClientRunsTheRefundOnEachRoute runs the Python package's
// unit tests (python3 -m unittest) and its example (examples/refund.py: a
// host and a scripted stand-in for a model) against a console over real
// PostgreSQL, once on each route. The example opens its task with the
// business's assertion and proposes over the task's MCP server (the
// session's mcp_url, which the test checks). Then an agent approves (the
// outcome comes by an outcome webhook the package's receiver verifies), the customer
// confirms through the page the example handed its host UI (the long
// poll), or the policy runs it automatically (the long poll). Each run
// ends completed, the customer is last told the invocation's own say, and
// nothing the stand-in model was handed holds the confirmation page, the
// assertion or the key.
func TestThePythonClientRunsTheRefundOnEachRoute(t *testing.T) {
	python := pythonTool(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	unit := exec.CommandContext(ctx, python, "-m", "unittest", "discover", "-s", "tests", "-t", ".")
	unit.Dir = pythonDir
	unit.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	if out, err := unit.CombinedOutput(); err != nil {
		t.Fatalf("python3 -m unittest: %v\n%s", err, out)
	}

	// Real time: the webhook receiver checks each signature's timestamp
	// against its own clock.
	b := webtest.New(t, webtest.WithNow(time.Now), webtest.WithShop(), webtest.WithAssistant())
	b.Assistants.SetSiteSecrets(map[string][]byte{"shop": webtest.ShopSiteSecret})
	bot, key := b.NewVouchedAssistant(t, "py-client")
	order := b.DamagedOrder(t)
	agent, manager := b.Users[accounts.Agent], b.Users[accounts.Manager]

	routes := []pythonRoute{
		{name: "agent", state: "awaiting_approval", via: "webhook:invocation.completed", webhook: true, setup: func(*testing.T) {},
			decide: func(t *testing.T, id, _ string) {
				if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: agent.Actor(), InvocationID: id,
					Verb: controlplane.StaffApprove, ArgsHash: b.Invocation(t, id).ArgsHash}); err != nil {
					t.Fatal(err)
				}
				// The approval's delivery, then the same delivery again (an
				// admin's Resend: the same webhook-id, signed afresh), which
				// the receiver must drop; then the outcome.
				b.DeliverWebhooks(t)
				resendApproval(t, b, bot.ID, id)
				b.DeliverWebhooks(t)
				dispatch(t, b, id)
				b.DeliverWebhooks(t)
			}},
		{name: "customer", state: "awaiting_confirmation", via: "long_poll", customer: true,
			setup: func(t *testing.T) { b.StageForCustomer(t, "issue_refund") },
			decide: func(t *testing.T, id, page string) {
				if !strings.HasPrefix(page, b.Server.URL+"/c/") {
					t.Fatalf("the host's UI was handed %q, not the customer's confirmation page", page)
				}
				c := b.Client(t)
				req := c.Open(strings.TrimPrefix(page, b.Server.URL))
				if res := c.Post("/requests/"+id+"/confirm", url.Values{"_csrf": {c.PageCSRF(req)}}); res.StatusCode != http.StatusSeeOther {
					t.Fatalf("the customer's confirmation: %d, want 303\n%s", res.StatusCode, res.Text)
				}
				dispatch(t, b, id)
			}},
		{name: "automatic", state: "approved", via: "long_poll",
			setup: func(t *testing.T) {
				p, err := b.Control.Policy(ctx, "shop", "issue_refund")
				if err != nil {
					t.Fatal(err)
				}
				ceiling := int64(100_00)
				p.Stage, p.OwnerID, p.AutoMaxCents = controlplane.StageAutonomous, &manager.ID, &ceiling
				if _, err := b.Control.ChangePolicy(ctx, manager.Actor(), p, p.Version, "refunds up to $100 run by themselves in this test"); err != nil {
					t.Fatal(err)
				}
			},
			decide: func(t *testing.T, id, _ string) { dispatch(t, b, id) }},
	}
	for _, r := range routes {
		t.Run(r.name, func(t *testing.T) {
			r.setup(t)
			assertion := taskAssertion(t, b, bot.ID)
			env := []string{"COUNTERSIGN_URL=" + b.Server.URL, "COUNTERSIGN_KEY=" + key, "COUNTERSIGN_CUSTOMER=" + webtest.Jordan,
				"COUNTERSIGN_ASSERTION=" + assertion, "COUNTERSIGN_ORDER=" + order, "COUNTERSIGN_WAIT_SECONDS=30", "PYTHONDONTWRITEBYTECODE=1"}
			if r.webhook {
				env = append(env, "COUNTERSIGN_WEBHOOK_LISTEN=127.0.0.1:0")
			}
			ex := startExample(ctx, t, python, env)

			if r.webhook {
				line := ex.next(t, "webhook_url")
				admin := b.Users[accounts.Admin].ID
				_, secret, err := webhooks.New(b.Store, b.Now, webhooks.Config{AllowPrivate: true}).Register(ctx, bot.ID, &admin, line["webhook_url"].(string))
				if err != nil {
					t.Fatal(err)
				}
				ex.send(t, secret+"\n")
			}
			page := ""
			if r.customer {
				page, _ = ex.next(t, "show_customer")["show_customer"].(string)
			}
			proposed := ex.next(t, "proposed")
			id, _ := proposed["proposed"].(string)
			if proposed["state"] != r.state || id == "" {
				t.Fatalf("the example proposed %v, want a refund %s", proposed, r.state)
			}
			if want := b.Server.URL + "/mcp?task=" + b.Invocation(t, id).TaskID; proposed["mcp_url"] != want {
				t.Errorf("the session's MCP address %v, want %s", proposed["mcp_url"], want)
			}
			r.decide(t, id, page)

			settled := ex.next(t, "settled")
			ex.wait(t)
			if settled["settled"] != id || settled["state"] != "completed" {
				t.Errorf("the example's outcome: %v, want %s completed", settled, id)
			}
			if via, _ := settled["via"].([]any); len(via) != 1 || via[0] != r.via {
				t.Errorf("the example waited by %v, want %s", settled["via"], r.via)
			}
			if got, _ := json.Marshal(settled["webhook_events"]); r.webhook && string(got) != `["invocation.approved","invocation.completed"]` {
				t.Errorf("the receiver took %s, want the approval once (its resent delivery dropped) and the completion", got)
			}
			heard, _ := settled["customer_heard"].([]any)
			final := b.Call(t, key, http.MethodGet, "/api/v1/invocations/"+id, nil).Want(t, http.StatusOK)
			if len(heard) != 2 || heard[1] != final.JSON["say"] {
				t.Errorf("the customer heard %q, want the proposal's say and then %q", heard, final.JSON["say"])
			}
			saw, _ := json.Marshal(settled["model_saw"])
			if !bytes.Contains(saw, []byte(id)) {
				t.Fatalf("the model was handed nothing of the refund: %s", saw)
			}
			withheld := map[string]string{"the task assertion": assertion, "the API key": key, "a confirmation page": "/c/"}
			if r.customer {
				withheld["the confirmation page"] = page
				if !bytes.Contains(saw, []byte("asked to confirm on their own device")) {
					t.Errorf("the model was not told the customer was asked on their own device: %s", saw)
				}
			}
			for what, s := range withheld {
				if bytes.Contains(saw, []byte(s)) || bytes.Contains(saw, []byte(strings.ReplaceAll(s, "/", `\/`))) {
					t.Errorf("the model was handed %s: %s", what, saw)
				}
			}
		})
	}
}

// dispatch sends an approved invocation once, as the console's dispatcher
// would.
func dispatch(t *testing.T, b *webtest.Stack, id string) {
	t.Helper()
	if _, err := b.Control.Dispatch(context.Background(), id); err != nil {
		t.Fatal(err)
	}
}

// resendApproval has the approval's delivery of invocation id sent again,
// as an admin's Resend does.
func resendApproval(t *testing.T, b *webtest.Stack, assistantID, id string) {
	t.Helper()
	svc := webhooks.New(b.Store, b.Now, webhooks.Config{AllowPrivate: true})
	sent, err := svc.Deliveries(context.Background(), assistantID, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range sent {
		if d.InvocationID == id && d.Event == "invocation.approved" && d.State == webhooks.Delivered {
			if err := svc.Resend(context.Background(), assistantID, d.ID); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no delivered approval of %s among %+v", id, sent)
}

// taskAssertion is a fresh task assertion of the shop's site for Jordan
// Lee and the assistant aud, on the stack's (real) clock.
func taskAssertion(t *testing.T, b *webtest.Stack, aud string) string {
	t.Helper()
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		t.Fatal(err)
	}
	now := b.Now()
	return confirmation.SignTaskAssertion(webtest.ShopSiteSecret, confirmation.Assertion{Sub: webtest.Jordan, Sys: "shop", Aud: aud,
		IssuedAt: now.Unix(), ExpiresAt: now.Add(5 * time.Minute).Unix(), Nonce: hex.EncodeToString(nonce)})
}

// example is a running examples/refund.py: its JSON lines as they come,
// its standard input and its standard error.
type example struct {
	cmd    *exec.Cmd
	lines  chan map[string]any
	stdin  io.WriteCloser
	stderr *bytes.Buffer
}

// startExample starts the example with env and reads its lines.
func startExample(ctx context.Context, t *testing.T, python string, env []string) *example {
	t.Helper()
	cmd := exec.CommandContext(ctx, python, filepath.Join("examples", "refund.py"))
	cmd.Dir = pythonDir
	cmd.Env = append(os.Environ(), env...)
	ex := &example{cmd: cmd, lines: make(chan map[string]any, 16), stderr: &bytes.Buffer{}}
	cmd.Stderr = ex.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if ex.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	go func() {
		defer close(ex.lines)
		scan := bufio.NewScanner(stdout)
		scan.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for scan.Scan() {
			var line map[string]any
			if json.Unmarshal(scan.Bytes(), &line) != nil {
				line = map[string]any{"unreadable": scan.Text()}
			}
			ex.lines <- line
		}
	}()
	return ex
}

// next returns the example's next line, which must carry key.
func (ex *example) next(t *testing.T, key string) map[string]any {
	t.Helper()
	line, ok := <-ex.lines
	if !ok {
		_ = ex.cmd.Wait()
		t.Fatalf("the example ended before a %q line: %s", key, ex.stderr)
	}
	if _, has := line[key]; !has {
		t.Fatalf("the example printed %v, want a %q line\n%s", line, key, ex.stderr)
	}
	return line
}

// send writes s to the example's standard input.
func (ex *example) send(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(ex.stdin, s); err != nil {
		t.Fatal(err)
	}
}

// wait waits for the example to exit and fails the test unless it exited
// cleanly having printed nothing more.
func (ex *example) wait(t *testing.T) {
	t.Helper()
	for line := range ex.lines {
		t.Errorf("the example printed more: %v", line)
	}
	if err := ex.cmd.Wait(); err != nil {
		t.Errorf("the example: %v\n%s", err, ex.stderr)
	}
}
