package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"countersign/internal/demo"
	"countersign/internal/slowtest"
)

// TestDemoModeEndToEnd runs the real binary as `make run` does: it starts
// the embedded cluster, seeds and prints the demo users, serves the sign-in
// page, keeps the same passwords and the signed-in sessions across a
// restart, and on SIGINT stops itself and the cluster.
func TestDemoModeEndToEnd(t *testing.T) {
	slowtest.Skip(t, "builds the console, starts it twice and stops it with SIGINT")
	t.Parallel()
	bin := consoleBinary(t)
	dataDir := consoleDataDir(t)

	first := startConsole(t, bin, dataDir)
	creds, err := demo.Load(filepath.Join(dataDir, "demo-credentials"))
	if err != nil || len(creds.Users) != 4 {
		t.Fatalf("demo-credentials: %d users, %v", len(creds.Users), err)
	}
	for _, u := range creds.Users {
		if !strings.Contains(first.stdout, u.Email+" ") || !strings.Contains(first.stdout, u.Password) {
			t.Errorf("stdout does not print the sign-in of %s", u.Email)
		}
	}
	// Each pending confirmation's mail is in the mail folder by the time
	// its link is printed.
	mails, _ := filepath.Glob(filepath.Join(dataDir, "mail", "*.eml"))
	if links := printedLinks(t, first); links == 0 || len(mails) != links {
		t.Errorf("%d mails in the mail folder at start for %d printed links; want one each", len(mails), links)
	}
	res, err := http.Get(first.url + "/sign-in")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /sign-in: %v %v", res, err)
	}
	res.Body.Close()
	agent := checkDemoSettlesItsLostRefund(t, first.url, creds)
	checkDemoAssistantIsVouchedFor(t, first.url, creds)
	first.stop(t)

	second := startConsole(t, bin, dataDir)
	again, _ := demo.Load(filepath.Join(dataDir, "demo-credentials"))
	for i := range creds.Users {
		if again.Users[i].Password != creds.Users[i].Password {
			t.Errorf("password of %s changed across restarts", creds.Users[i].Email)
		}
	}
	if again.SiteSecret != creds.SiteSecret {
		t.Errorf("the demo shop's site secret changed across restarts")
	}
	// The jar holds the agent's cookie for 127.0.0.1 whatever the port.
	agent.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err = agent.Get(second.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("the agent's session after a restart: %d, want 200", res.StatusCode)
	}
	second.stop(t)
}

// printedLinks reads c's printout after the sign-ins up to the blank line
// that ends its confirmation links (the demo customer's, then those of the
// customers in other languages) and counts them.
func printedLinks(t *testing.T, c *console) int {
	t.Helper()
	timeout := time.After(30 * time.Second)
	n := 0
	for {
		select {
		case line, ok := <-c.lines:
			switch {
			case ok && strings.Contains(line, "/c/"):
				n++
			case !ok || (n > 0 && strings.TrimSpace(line) == ""):
				return n
			}
		case <-timeout:
			t.Fatalf("no confirmation links printed")
		}
	}
}

type console struct {
	cmd    *exec.Cmd
	url    string
	stdout string
	stderr *strings.Builder
	done   chan error
	// lines are the lines printed after the demo sign-ins.
	lines <-chan string
}

// startConsole starts the demo console; env adds variables ("K=V").
// consoleDataDir is a console's -data-dir that the test removes, with
// the embedded PostgreSQL inside it: the folder is open to the postgres
// OS user, so the cluster does not fall back to a folder under the temp
// dir (pgcluster.Start), which nothing would remove (a run of make test
// left 79 MB there per console).
func consoleDataDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "countersign-console-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func startConsole(t *testing.T, bin, dataDir string, env ...string) *console {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(bin, "-addr", addr, "-data-dir", dataDir, "-log-format", "json")
	cmd.Env = append(append(os.Environ(), "DATABASE_URL="), env...)
	stdout, _ := cmd.StdoutPipe()
	c := &console{cmd: cmd, url: "http://" + addr, stderr: &strings.Builder{}, done: make(chan error, 1)}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// The demo sign-ins are printed before the server listens.
	lines := make(chan string, 100)
	c.lines = lines
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() { c.done <- cmd.Wait() }()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var out strings.Builder
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("console exited before serving:\n%s\n%s", out.String(), c.stderr.String())
			}
			out.WriteString(line + "\n")
			if strings.HasPrefix(strings.TrimSpace(line), "admin ") {
				c.stdout = out.String()
				waitReady(ctx, t, c)
				if _, err := os.Stat(filepath.Join(dataDir, "pg", "PG_VERSION")); err != nil {
					t.Fatalf("the console's PostgreSQL is not under its data dir, where the test removes it: %v", err)
				}
				return c
			}
		case <-ctx.Done():
			t.Fatalf("console did not print the demo sign-ins:\n%s\n%s", out.String(), c.stderr.String())
		}
	}
}

func waitReady(ctx context.Context, t *testing.T, c *console) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if res, err := http.Get(c.url + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("console never became ready:\n%s", c.stderr.String())
		case <-tick.C:
		}
	}
}

func (c *console) stop(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.done:
		if err != nil {
			t.Errorf("console exit: %v\n%s", err, c.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("console did not stop on SIGINT:\n%s", c.stderr.String())
	}
	if !strings.Contains(c.stderr.String(), `"msg":"postgres stopped"`) {
		t.Errorf("cluster was not stopped cleanly:\n%s", c.stderr.String())
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// checkDemoSettlesItsLostRefund signs in as the demo agent and finds the
// demo's refund whose acknowledgement was lost: its task says the result
// needs checking and offers to inspect the original call until the
// console's own reconciliation completes it, which its timeline then
// says. It returns the agent's signed-in client.
func checkDemoSettlesItsLostRefund(t *testing.T, base string, creds demo.Credentials) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	page := func(path string) string {
		t.Helper()
		res, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, res.StatusCode)
		}
		return string(b)
	}
	tok := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindStringSubmatch(page("/sign-in"))
	if tok == nil {
		t.Fatal("no CSRF token on the sign-in page")
	}
	var agent demo.User
	for _, u := range creds.Users {
		if u.Role == "agent" {
			agent = u
		}
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/sign-in", strings.NewReader(url.Values{
		"_csrf": {tok[1]}, "email": {agent.Email}, "password": {agent.Password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	first := regexp.MustCompile(`href="(/tasks/tsk_[0-9a-f]+)"`).FindStringSubmatch(page("/tasks?q=demo-lost-acknowledgement"))
	if first == nil {
		t.Fatal("the demo has no task with a lost acknowledgement")
	}
	// The console's own reconciliation looks the refund up 15 s after its
	// answer was lost, finds it in the shop's ledger and completes it.
	task := page(first[1])
	for deadline := time.Now().Add(90 * time.Second); !strings.Contains(task, "The automatic check settled") && time.Now().Before(deadline); {
		if !strings.Contains(task, "Result needs checking") || !strings.Contains(task, `data-testid="inspect"`) {
			t.Fatalf("the demo's refund with a lost acknowledgement %s neither needs checking nor was settled by the console", first[1])
		}
		time.Sleep(time.Second)
		task = page(first[1])
	}
	if !strings.Contains(task, "The automatic check settled") || !strings.Contains(task, "it is now completed") {
		t.Errorf("the console did not settle the demo's refund with a lost acknowledgement by itself (%s)", first[1])
	}
	return c
}
