package notify_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/notify"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// smtpSink is a tiny SMTP server that keeps every message it receives.
type smtpSink struct {
	addr string
	mu   sync.Mutex
	msgs []string
}

func newSMTPSink(t *testing.T) *smtpSink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &smtpSink{addr: ln.Addr().String()}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(conn)
		}
	}()
	return s
}

func (s *smtpSink) serve(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	say := func(line string) { _, _ = io.WriteString(conn, line+"\r\n") }
	say("220 sink ready")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			say("250 sink")
		case strings.HasPrefix(cmd, "DATA"):
			say("354 go on")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				b.WriteString(l)
			}
			s.mu.Lock()
			s.msgs = append(s.msgs, b.String())
			s.mu.Unlock()
			say("250 kept")
		case strings.HasPrefix(cmd, "QUIT"):
			say("221 bye")
			return
		default:
			say("250 ok")
		}
	}
}

func (s *smtpSink) messages() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.msgs...)
}

func TestNoticesReachTheWebhookAndMailOnceWithDeepLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	st := store.New(pool)
	now := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	mustExec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(`INSERT INTO tasks (id, customer_ref, conversation_id, allowed_actions, write_budget, inflight_limit, rate_per_minute,
		expires_at, state, created_at, updated_at) VALUES ('tsk_n', 'ada@example.test', 'conv', '{issue_refund}', 5, 1, 60, $1, 'active', $2, $2)`,
		now.Add(time.Hour), now)
	insert := func(id, state string, created time.Time, deadline time.Time) {
		mustExec(`INSERT INTO invocations (id, task_id, conversation_id, system, action, target_kind, target_id, target_display, state,
			proposed_args, args_hash, quote, idempotency_key, policy_stage, policy_version, deadline_at, created_at, updated_at)
			VALUES ($1, 'tsk_n', 'conv', 'shop', 'issue_refund', 'order', 'ord_1', 'Order #1', $2, '{}', '\x00', $3, $4, 3, 1, $5, $6, $6)`,
			id, state, `{"title":"Refund $42.00 on order #1"}`, "key-"+id, deadline, created)
	}
	insert("inv_new", "awaiting_approval", now.Add(-time.Minute), now.Add(24*time.Hour))
	insert("inv_close", "awaiting_approval", now.Add(-3*time.Hour), now.Add(5*time.Minute))
	insert("inv_unknown", "unverified", now.Add(-2*time.Minute), now.Add(time.Hour))
	insert("inv_old", "awaiting_approval", now.Add(-48*time.Hour), now.Add(20*time.Hour))

	var mu sync.Mutex
	var posts []map[string]any
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		mu.Lock()
		posts = append(posts, body)
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	sink := newSMTPSink(t)

	cfg := notify.Config{BaseURL: "https://console.example.test/", WebhookURL: hook.URL, SMTPAddr: sink.addr,
		From: "countersign@example.test", To: []string{"support@example.test"}}
	n1 := notify.New(cfg, st, func() time.Time { return now }, nil)
	n2 := notify.New(cfg, st, func() time.Time { return now }, nil) // a second console instance
	a, err := n1.SendDue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := n2.SendDue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a != 3 || b != 0 {
		t.Fatalf("sent %d then %d, want 3 then 0 (arrival, deadline, unverified; each once)", a, b)
	}
	want := map[string]string{
		"arrived":    "https://console.example.test/queue/inv_new",
		"deadline":   "https://console.example.test/queue/inv_close",
		"unverified": "https://console.example.test/tasks/tsk_n?inspect=inv_unknown#inspect",
	}
	mu.Lock()
	defer mu.Unlock()
	if len(posts) != 3 {
		t.Fatalf("%d webhook posts, want 3", len(posts))
	}
	for _, p := range posts {
		kind, _ := p["kind"].(string)
		text, _ := p["text"].(string)
		if p["link"] != want[kind] || !strings.Contains(text, "<"+want[kind]+"|Open in Countersign>") {
			t.Errorf("%s post = %v, want the deep link %s in Slack's <link|label> form", kind, p, want[kind])
		}
		if !strings.Contains(text, "Refund $42.00 on order #1") {
			t.Errorf("%s post does not name the request: %q", kind, text)
		}
	}
	mails := sink.messages()
	if len(mails) != 3 {
		t.Fatalf("%d mails, want 3", len(mails))
	}
	joined := strings.Join(mails, "\n---\n")
	for _, link := range want {
		if !strings.Contains(joined, "Open it: "+link) {
			t.Errorf("no mail carries %s:\n%s", link, joined)
		}
	}
	if !strings.Contains(joined, "Subject: [Countersign] Result needs checking") {
		t.Errorf("no mail says a result needs checking:\n%s", joined)
	}
}
