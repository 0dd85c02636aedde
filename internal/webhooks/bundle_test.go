package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/internal/clocktest"
	"countersign/internal/webhooks"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// testBundle is a database with one assistant ("ast_hook") whose endpoint
// is an httptest receiver, and a task of that assistant.
type testBundle struct {
	ctx   context.Context
	url   string
	pool  *pgxpool.Pool
	st    *store.Store
	clock *clocktest.Clock
	svc   *webhooks.Service
	recv  *receiver
	// recvURL is the receiver's address (http://127.0.0.1:port).
	recvURL string
	secret  string
}

// received is one POST the receiver got.
type received struct {
	delivery string
	event    string
	payload  webhooks.Payload
	// sigErr is what a Standard Webhooks receiver made of the signature
	// (specVerify); legacy is the Countersign-Signature header, if any.
	sigErr error
	legacy string
	body   []byte
	at     time.Time
}

// receiver is the assistant's endpoint: it verifies every signature with
// the test's clock and answers what respond says (200 when nil).
type receiver struct {
	t       *testing.T
	clock   *clocktest.Clock
	secret  string
	mu      sync.Mutex
	got     []received
	respond func(r received, seen int) (int, string)
}

func (rv *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	got := received{delivery: r.Header.Get(webhooks.DeliveryHeader), event: r.Header.Get(webhooks.EventHeader),
		legacy: r.Header.Get(webhooks.SignatureHeader), body: body}
	rv.mu.Lock()
	got.at = rv.clock.Now()
	got.sigErr = specVerify(rv.secret, r.Header, body, got.at)
	if id := r.Header.Get("webhook-id"); got.sigErr == nil && id != got.delivery {
		got.sigErr = fmt.Errorf("webhook-id %q is not the delivery's id %q", id, got.delivery)
	}
	if err := json.Unmarshal(body, &got.payload); err != nil {
		got.sigErr = fmt.Errorf("body: %w", err)
	}
	seen := 0
	for _, g := range rv.got {
		if g.payload.EventID == got.payload.EventID {
			seen++
		}
	}
	rv.got = append(rv.got, got)
	respond := rv.respond
	rv.mu.Unlock()
	status, text := http.StatusOK, "thanks"
	if respond != nil {
		status, text = respond(got, seen)
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text)
}

func (rv *receiver) all() []received {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return append([]received(nil), rv.got...)
}

// eventIDs is what arrived, in order, as event ids.
func (rv *receiver) eventIDs() []int64 {
	var ids []int64
	for _, g := range rv.all() {
		ids = append(ids, g.payload.EventID)
	}
	return ids
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{ctx: context.Background(), url: dbtest.NewURL(t), clock: clocktest.New(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC))}
	b.pool = b.openPool(t)
	b.st = store.New(b.pool)
	b.svc = webhooks.New(b.st, b.clock.Now, webhooks.Config{AllowPrivate: true})
	for _, id := range []string{"ast_hook", "ast_other"} {
		if _, err := b.st.InsertAssistant(b.ctx, store.Assistant{ID: id, Name: id, CreatedAt: b.clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	b.exec(t, `INSERT INTO tasks (id, assistant_id, customer_ref, conversation_id, allowed_actions, write_budget, inflight_limit,
		rate_per_minute, expires_at, state, created_at, updated_at)
		VALUES ('tsk_hook', 'ast_hook', 'ada@example.test', 'conv-1', '{issue_refund}', 5, 1, 60, $1, 'active', $2, $2),
		       ('tsk_other', 'ast_other', 'bo@example.test', 'conv-2', '{issue_refund}', 5, 1, 60, $1, 'active', $2, $2)`,
		b.clock.Now().Add(time.Hour), b.clock.Now())
	b.recv = &receiver{t: t, clock: b.clock}
	srv := httptest.NewServer(b.recv)
	t.Cleanup(srv.Close)
	b.recvURL = srv.URL
	ep, secret, err := b.svc.Register(b.ctx, "ast_hook", nil, srv.URL+"/outcomes")
	if err != nil {
		t.Fatal(err)
	}
	if ep.URL != srv.URL+"/outcomes" {
		t.Fatalf("endpoint %s", ep.URL)
	}
	b.secret, b.recv.secret = secret, secret
	return b
}

func (b *testBundle) openPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := store.Open(b.ctx, b.url, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func (b *testBundle) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := b.pool.Exec(b.ctx, sql, args...); err != nil {
		t.Fatal(err)
	}
}

// invocation adds an invocation to the task.
func (b *testBundle) invocation(t *testing.T, task, id string) {
	t.Helper()
	b.exec(t, `INSERT INTO invocations (id, task_id, conversation_id, system, action, target_kind, target_id, target_display, state,
		proposed_args, args_hash, quote, idempotency_key, policy_stage, policy_version, created_at, updated_at)
		VALUES ($1, $2, 'conv', 'shop', 'issue_refund', 'order', 'ord_1', 'Order #1', 'awaiting_approval', '{}', '\x00', '{}', $3, 3, 1, $4, $4)`,
		id, task, "key-"+id, b.clock.Now())
}

// event records an event of an invocation and returns its id.
func (b *testBundle) event(t *testing.T, task, invocation, action string) int64 {
	t.Helper()
	var id int64
	err := b.pool.QueryRow(b.ctx, `INSERT INTO events (at, actor_kind, actor_id, action, task_id, invocation_id)
		VALUES ($1, 'system', 'test', $2, $3, $4) RETURNING id`, b.clock.Now(), action, task, invocation).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// worker is one console instance's worker, on its own pool; it renders an
// invocation as {"id": …}.
func (b *testBundle) worker(t *testing.T) *webhooks.Worker {
	t.Helper()
	return b.workerRendering(t, func(_ context.Context, id string) (any, error) { return map[string]string{"id": id}, nil })
}

func (b *testBundle) workerRendering(t *testing.T, render webhooks.Render) *webhooks.Worker {
	t.Helper()
	return webhooks.NewWorker(store.New(b.openPool(t)), render, webhooks.Config{AllowPrivate: true}, b.clock.Now, nil)
}

// workerWith is a worker with a configuration of its own.
func (b *testBundle) workerWith(t *testing.T, cfg webhooks.Config) *webhooks.Worker {
	t.Helper()
	render := func(_ context.Context, id string) (any, error) { return map[string]string{"id": id}, nil }
	return webhooks.NewWorker(store.New(b.openPool(t)), render, cfg, b.clock.Now, nil)
}

func (b *testBundle) deliveries(t *testing.T) []webhooks.Delivery {
	t.Helper()
	list, err := b.svc.Deliveries(b.ctx, "ast_hook", 100)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func mustN(t *testing.T, what string, n int, err error, want int) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if n != want {
		t.Fatalf("%s = %d, want %d", what, n, want)
	}
}
