package web_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"countersign/internal/accounts"
)

// statements records the SQL statements a console sends while on.
type statements struct {
	mu  sync.Mutex
	on  bool
	sql []string
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on {
		s.sql = append(s.sql, strings.Join(strings.Fields(d.SQL), " "))
	}
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// during returns the statements sent while fn ran.
func (s *statements) during(fn func()) []string {
	s.mu.Lock()
	s.on, s.sql = true, nil
	s.mu.Unlock()
	fn()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on = false
	return s.sql
}

// TestQueuePageRoundTrips: a signed-in agent's queue page costs three
// statements — the session with its user, the queue, the navigation
// badge's counts — and the session and its user come from one query.
func TestQueuePageRoundTrips(t *testing.T) {
	t.Parallel()
	rec := &statements{}
	b := setup(t, bundleOpts{queries: rec})
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	c.get("/queue") // the session's last-seen write, at most once a minute, is behind us
	var res response
	sql := rec.during(func() { res = c.get("/queue") })
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/queue: %d", res.StatusCode)
	}
	if len(sql) > 3 {
		t.Errorf("/queue sent %d statements, want at most 3:\n%s", len(sql), strings.Join(sql, "\n"))
	}
	var sessions, users int
	for _, q := range sql {
		if strings.Contains(q, "FROM sessions") && strings.Contains(q, "JOIN users") {
			sessions++
		} else if strings.Contains(q, "FROM users") || strings.Contains(q, "FROM sessions") {
			users++
		}
	}
	if sessions != 1 || users != 0 {
		t.Errorf("the session and its user took %d joined and %d separate statements, want one joined:\n%s", sessions, users, strings.Join(sql, "\n"))
	}
	if res.doc(t).Find(`[data-testid="signed-in-as"], header`).Length() == 0 {
		t.Errorf("the page does not show its header")
	}
}

// TestDisabledUsersSessionStillIgnored: the user read with the session is
// judged as before: once disabled, the session signs no one in.
func TestDisabledUsersSessionStillIgnored(t *testing.T) {
	t.Parallel()
	b := setup(t)
	u := b.createUser(t, accounts.Agent)
	c := b.client(t)
	c.mustSignIn(u)
	if res := c.get("/queue"); res.StatusCode != http.StatusOK {
		t.Fatalf("/queue signed in: %d", res.StatusCode)
	}
	if _, err := b.store.Pool().Exec(context.Background(), `UPDATE users SET disabled_at = now() WHERE id = $1`, u.ID); err != nil {
		t.Fatal(err)
	}
	if res := c.get("/queue"); res.StatusCode == http.StatusOK {
		t.Fatalf("/queue after the user was disabled: %d, want a sign-in redirect or refusal", res.StatusCode)
	}
}
