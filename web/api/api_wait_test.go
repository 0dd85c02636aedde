package api_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/web/webtest"
)

// waited is one answer to GET /invocations/{id}?wait=, sent from a
// goroutine of its own.
type waited struct {
	status int
	header string
	state  string
	took   time.Duration
	err    error
}

// getWaiting sends GET path with key and returns its answer on a channel.
func getWaiting(b *webtest.Stack, key, path string) <-chan waited {
	done := make(chan waited, 1)
	go func() {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodGet, b.Server.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- waited{err: err}
			return
		}
		defer res.Body.Close()
		var body struct {
			State string `json:"state"`
		}
		err = json.NewDecoder(res.Body).Decode(&body)
		done <- waited{status: res.StatusCode, header: res.Header.Get("Countersign-Wait"), state: body.State, took: time.Since(start), err: err}
	}()
	return done
}

// reject is an agent's rejection of the request id.
func reject(t *testing.T, b *webtest.Stack, id string) {
	t.Helper()
	if _, err := b.Control.StaffDecide(context.Background(), controlplane.StaffDecision{Actor: b.Users[accounts.Agent].Actor(),
		InvocationID: id, Verb: controlplane.StaffReject, Reason: controlplane.OtherReason, Other: "not this time"}); err != nil {
		t.Fatal(err)
	}
}

// TestInvocationWaitAnswersWhenItChanges: a long poll on a refund waiting
// for an agent answers with the rejection as soon as it is recorded,
// saying why it answered; whether the rejection lands before the wait
// listens or after, ?state= names what the caller saw, so it is "changed".
func TestInvocationWaitAnswersWhenItChanges(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	id := b.ProposeRefund(t, b.DamagedOrder(t))
	done := getWaiting(b, b.Key, "/api/v1/invocations/"+id+"?wait=30s&state=awaiting_approval")
	reject(t, b, id)
	got := <-done
	if got.err != nil || got.status != http.StatusOK || got.state != "rejected" || got.header != "changed" {
		t.Fatalf("wait: %d %q, Countersign-Wait %q, %v; want 200 rejected, changed", got.status, got.state, got.header, got.err)
	}
	if got.took > 15*time.Second {
		t.Errorf("it answered after %s: at its deadline, not when the request changed", got.took)
	}

	// Terminal: nothing more will happen, so it answers at once.
	got = <-getWaiting(b, b.Key, "/api/v1/invocations/"+id+"?wait=30")
	if got.status != http.StatusOK || got.state != "rejected" || got.header != "final" || got.took > 15*time.Second {
		t.Errorf("wait on a rejected request: %d %q %q after %s, want final at once", got.status, got.state, got.header, got.took)
	}
}

// TestInvocationWaitAnswersAtTheDeadline: nothing happens, so the answer
// comes when the wait runs out, with the state as it is; without wait the
// answer is the plain read, without the header.
func TestInvocationWaitAnswersAtTheDeadline(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	id := b.ProposeRefund(t, b.DamagedOrder(t))
	got := <-getWaiting(b, b.Key, "/api/v1/invocations/"+id+"?wait=1500ms")
	if got.status != http.StatusOK || got.state != "awaiting_approval" || got.header != "timeout" {
		t.Fatalf("wait with nothing happening: %d %q %q, want 200 awaiting_approval timeout", got.status, got.state, got.header)
	}
	if got.took < 1500*time.Millisecond {
		t.Errorf("it answered after %s, before its wait of 1.5s ran out", got.took)
	}
	for _, q := range []string{"", "?wait=0"} {
		res := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id+q, nil).Want(t, http.StatusOK)
		if h := res.Header.Get("Countersign-Wait"); h != "" {
			t.Errorf("GET%s answered Countersign-Wait %q: it did not wait", q, h)
		}
	}
}

// TestInvocationWaitRefusesBadValues: a wait that is not a duration of at
// most 30 seconds, or a state that is none, is a 400 naming the field and
// the fix, before anything is read.
func TestInvocationWaitRefusesBadValues(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	id := b.ProposeRefund(t, b.DamagedOrder(t))
	for q, field := range map[string]string{"wait=31s": "wait", "wait=31": "wait", "wait=-1s": "wait", "wait=1h": "wait",
		"wait=soon": "wait", "wait=1.5": "wait", "wait=%2B5s": "wait", "wait=10s&state=done": "state"} {
		res := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id+"?"+q, nil).Want(t, http.StatusBadRequest)
		fields, _ := res.JSON["fields"].(map[string]any)
		fix, _ := fields[field].(string)
		if res.JSON["code"] != "invalid_parameter" || fix == "" {
			t.Errorf("?%s: %s, want invalid_parameter naming %s", q, res.Body, field)
		}
		if field == "wait" && !strings.Contains(fix, "30 seconds") {
			t.Errorf("?%s: the fix %q does not say the limit", q, fix)
		}
	}
}

// TestInvocationWaitOfAnotherAssistantIsNotFound: another assistant's
// invocation is a 404 with a wait as without one, at once: a wait shows
// nothing of another's request, not even how long it stays unchanged.
func TestInvocationWaitOfAnotherAssistantIsNotFound(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	id := b.ProposeRefund(t, b.DamagedOrder(t))
	_, other := b.NewAssistant(t, "other-bot")
	plain := b.Call(t, other, http.MethodGet, "/api/v1/invocations/"+id, nil).Want(t, http.StatusNotFound)
	got := <-getWaiting(b, other, "/api/v1/invocations/"+id+"?wait=20s")
	if got.status != http.StatusNotFound || got.header != "" || got.took > 10*time.Second {
		t.Fatalf("another assistant's wait: %d, Countersign-Wait %q after %s; want 404 at once", got.status, got.header, got.took)
	}
	waitedRes := b.Call(t, other, http.MethodGet, "/api/v1/invocations/"+id+"?wait=1", nil).Want(t, http.StatusNotFound)
	if waitedRes.Body != plain.Body {
		t.Errorf("404 with a wait %s differs from without %s", waitedRes.Body, plain.Body)
	}
}

// TestMCPWaitForOutcome: the MCP tool waits as the API does, tells the
// model what to say meanwhile, refuses a wait over 30 seconds with the
// field and the fix, and treats another assistant's invocation as unknown.
func TestMCPWaitForOutcome(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	cs, err := mcpSession(t, b, b.Key, b.TaskID())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var desc string
	for _, tool := range listed.Tools {
		if tool.Name == "wait_for_outcome" {
			desc = tool.Description
		}
	}
	if !strings.Contains(desc, "before you call it tell them the sentence in say") {
		t.Errorf("wait_for_outcome does not say what to tell the customer meanwhile: %q", desc)
	}

	id := b.ProposeRefund(t, b.DamagedOrder(t))
	got := callTool(t, cs, "wait_for_outcome", map[string]any{"invocation_id": id, "seconds": 1})
	if got["state"] != "awaiting_approval" || got["say"] == "" {
		t.Errorf("wait_for_outcome with nothing happening: %v", got)
	}
	reject(t, b, id)
	got = callTool(t, cs, "wait_for_outcome", map[string]any{"invocation_id": id, "state": "awaiting_approval"})
	if got["state"] != "rejected" {
		t.Errorf("wait_for_outcome after the rejection: %v", got["state"])
	}

	toolErr := func(cs *mcp.ClientSession, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for_outcome", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			t.Fatalf("wait_for_outcome %v: no error", args)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		return out
	}
	bad := toolErr(cs, map[string]any{"invocation_id": id, "seconds": 31})
	if f, _ := bad["fields"].(map[string]any); f["seconds"] == nil {
		t.Errorf("seconds 31: %v, want the field named", bad)
	}
	_, otherKey := b.NewAssistant(t, "other-bot")
	task := b.NewTask(t, otherKey, "conv-other", []string{"issue_refund"})
	ocs, err := mcpSession(t, b, otherKey, task["id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	defer ocs.Close()
	if nf := toolErr(ocs, map[string]any{"invocation_id": id, "seconds": 5}); nf["code"] != "not_found" {
		t.Errorf("another assistant's invocation: %v, want not_found", nf)
	}
}

// TestLongPollsAnswerAtShutdown: when the console shuts down, a long poll
// in flight answers at once with the state as it is (Countersign-Wait:
// timeout) instead of holding the shutdown until its grace runs out and
// being cut. The shutdown starts once the server reads the request: it
// then waits for that request's answer, and ReleaseWaits answers every
// wait, held then or begun after (TestReleaseWaitsAnswersEveryWaitAtOnce
// holds one first).
func TestLongPollsAnswerAtShutdown(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	id := b.ProposeRefund(t, b.DamagedOrder(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reading := make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- b.Web.ServeOn(ctx, &readSignal{Listener: ln, reading: reading}, time.Minute, "", "")
	}()
	req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/api/v1/invocations/"+id+"?wait=30s", nil)
	req.Header.Set("Authorization", "Bearer "+b.Key)
	answered := make(chan waited, 1)
	go func() {
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- waited{err: err}
			return
		}
		defer res.Body.Close()
		var body struct {
			State string `json:"state"`
		}
		err = json.NewDecoder(res.Body).Decode(&body)
		answered <- waited{status: res.StatusCode, header: res.Header.Get("Countersign-Wait"), state: body.State, took: time.Since(start), err: err}
	}()
	<-reading
	stop()
	got := <-answered
	if got.err != nil || got.status != http.StatusOK || got.header != "timeout" || got.state != "awaiting_approval" {
		t.Fatalf("a long poll at shutdown: %d %q %q %v, want 200 timeout awaiting_approval", got.status, got.header, got.state, got.err)
	}
	if got.took > 15*time.Second {
		t.Errorf("it answered after %s: the shutdown waited for its deadline", got.took)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// readSignal closes reading when the server first reads from a connection
// it accepted: the server tracks the connection by then, so a shutdown
// waits for its request's answer.
type readSignal struct {
	net.Listener
	reading chan struct{}
	once    sync.Once
}

func (l *readSignal) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &signalConn{Conn: c, l: l}, nil
}

type signalConn struct {
	net.Conn
	l *readSignal
}

func (c *signalConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.l.once.Do(func() { close(c.l.reading) })
	}
	return n, err
}
