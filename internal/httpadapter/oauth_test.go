package httpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// testClock is a clock a test moves: the adapter's, the ledger's and the
// token server's, so that tokens expire when the test says.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// tokenServer is an OAuth 2 token endpoint: client credentials (the
// client in a Basic header or in the form) and refresh tokens, which it
// rotates, refusing one used before. Its tokens expire after lifetime on
// clock; expireAll ends every token early, as a server whose clock runs
// ahead or that revoked them.
type tokenServer struct {
	clock            *testClock
	lifetime         time.Duration
	clientID, secret string

	mu       sync.Mutex
	expiry   map[string]time.Time
	grants   []string // what each token request asked, in order
	refresh  string   // the one refresh token that works now
	refused  int      // requests to the API with a token it did not accept
	rotation int
	// hold, when set, is called first by every token request.
	hold func()
}

func (ts *tokenServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ts.mu.Lock()
	hold := ts.hold
	ts.mu.Unlock()
	if hold != nil {
		hold()
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = r.ParseForm()
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	grant := r.PostForm.Get("grant_type")
	ts.grants = append(ts.grants, strings.TrimSpace(fmt.Sprintf("%s basic=%t scope=%s audience=%s refresh=%s", grant, basic,
		r.PostForm.Get("scope"), r.PostForm.Get("audience"), r.PostForm.Get("refresh_token"))))
	if id != ts.clientID || secret != ts.secret {
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": "invalid_client",
			"error_description": fmt.Sprintf("the client %q with secret %q is not known", id, secret)})
		return
	}
	answer := map[string]any{"token_type": "bearer", "expires_in": int(ts.lifetime.Seconds())}
	if grant == "refresh_token" {
		if r.PostForm.Get("refresh_token") != ts.refresh {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": "invalid_grant", "error_description": fmt.Sprintf("the refresh token %q was used before", r.PostForm.Get("refresh_token"))})
			return
		}
		ts.rotation++
		ts.refresh = fmt.Sprintf("rt-%d", ts.rotation)
		answer["refresh_token"] = ts.refresh
	}
	tok := fmt.Sprintf("tok-%d", len(ts.expiry)+1)
	ts.expiry[tok] = ts.clock.now().Add(ts.lifetime)
	answer["access_token"] = tok
	_ = json.NewEncoder(w).Encode(answer)
}

// authorized says whether r carries a token that has not expired.
func (ts *tokenServer) authorized(r *http.Request) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	exp, ok := ts.expiry[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	if !ok || !ts.clock.now().Before(exp) {
		ts.refused++
		return false
	}
	return true
}

func (ts *tokenServer) expireAll() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for k := range ts.expiry {
		ts.expiry[k] = time.Time{}
	}
}

func (ts *tokenServer) counts() (grants, refused int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.grants), ts.refused
}

// oauthPayments serves the payments system with the token endpoint at
// /oauth/token beside it, and loads testdata/example/payments.json with
// its auth replaced by auth.
func oauthPayments(t *testing.T, auth string, env map[string]string, log *slog.Logger) (*httpadapter.Adapter, *paymentsSystem, *tokenServer, *testClock, error) {
	t.Helper()
	clk := &testClock{t: testNow}
	ts := &tokenServer{clock: clk, lifetime: 10 * time.Minute, clientID: "countersign", secret: "cs-0123456789",
		expiry: map[string]time.Time{}, refresh: "rt-0"}
	ps := startPayments(t)
	ps.authorized = ts.authorized
	mux := http.NewServeMux()
	mux.Handle("/oauth/token", ts)
	mux.HandleFunc("/", ps.serve)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	raw, err := os.ReadFile("testdata/example/payments.json")
	if err != nil {
		t.Fatal(err)
	}
	file := strings.Replace(string(raw), `{"type": "bearer", "secret_env": "PAYMENTS_SECRET_KEY"}`, auth, 1)
	env["PAYMENTS_URL"] = hs.URL
	env["PAYMENTS_TOKEN_URL"] = hs.URL + "/oauth/token"
	a, err := httpadapter.Load("payments.json", []byte(file), httpadapter.Config{Now: clk.now, Logger: log,
		Ledger: adapter.NewLedger(store.New(dbtest.New(t)), clk.now), Getenv: func(k string) string { return env[k] }})
	return a, ps, ts, clk, err
}

// refund dry-runs and executes a refund of 100 cents of ch_1 under key.
func refund(t *testing.T, a *httpadapter.Adapter, key string) (adapter.Call, error) {
	t.Helper()
	args := raw(t, map[string]any{"charge_id": "ch_1", "amount_cents": 100, "reason": "requested_by_customer"})
	q, err := a.DryRun(context.Background(), ada, "refund_charge", args)
	if err != nil {
		return adapter.Call{}, err
	}
	call := adapter.Call{Action: "refund_charge", Args: args, IdempotencyKey: key, Quote: q}
	_, err = a.Execute(context.Background(), ada, call)
	return call, err
}

func readCharge(t *testing.T, a *httpadapter.Adapter) error {
	t.Helper()
	_, err := a.Read(context.Background(), ada, "get_charge", raw(t, map[string]any{"charge_id": "ch_1"}))
	return err
}

const clientCredentials = `{"type": "oauth2_client_credentials", "token_url": "/oauth/token", "client_id_env": "PAYMENTS_CLIENT_ID",
  "client_secret_env": "PAYMENTS_CLIENT_SECRET", "scopes": ["charges:read", "refunds:write"], "audience": "https://payments.example"}`

// TestOAuthTokensExpireMidTest: with client credentials, one token serves
// reads and writes until shortly before it expires, when the next request
// fetches another first; a token the system stops taking early is
// refetched on its 401 and the read sent again; a write answered 401 is
// unknown and never sent a second time (the system's count per key), even
// though the file's rules call every other 4xx a refusal, and the next
// write goes out with a fresh token.
func TestOAuthTokensExpireMidTest(t *testing.T) {
	t.Parallel()
	a, ps, ts, clk, err := oauthPayments(t, clientCredentials,
		map[string]string{"PAYMENTS_CLIENT_ID": "countersign", "PAYMENTS_CLIENT_SECRET": "cs-0123456789"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := readCharge(t, a); err != nil {
		t.Fatal(err)
	}
	if _, err := refund(t, a, "k-1"); err != nil {
		t.Fatal(err)
	}
	if grants, refused := ts.counts(); grants != 1 || refused != 0 || ts.grants[0] != "client_credentials basic=true scope=charges:read refunds:write audience=https://payments.example refresh=" {
		t.Fatalf("token requests %q and %d refusals, want one with the scopes and audience, and none refused", ts.grants, refused)
	}

	// Nine and a half minutes into a ten-minute token: renewed before use.
	clk.advance(9*time.Minute + 30*time.Second)
	if err := readCharge(t, a); err != nil {
		t.Fatal(err)
	}
	if grants, refused := ts.counts(); grants != 2 || refused != 0 {
		t.Errorf("%d token requests and %d refusals after 9m30s, want a new token fetched before the old one lapsed", grants, refused)
	}

	// The system stops taking the token early: the read is sent again.
	ts.expireAll()
	if err := readCharge(t, a); err != nil {
		t.Fatalf("a read whose token lapsed early: %v, want it sent again with a new token", err)
	}
	if grants, refused := ts.counts(); grants != 3 || refused != 1 {
		t.Errorf("%d token requests and %d refusals, want one refusal and a third token", grants, refused)
	}

	// The token lapses while the write travels: unknown, never resent.
	ps.mu.Lock()
	ps.expireOnRefund = true
	ps.mu.Unlock()
	call, err := refund(t, a, "k-2")
	if ae, ok := adapter.AsError(err); !ok || ae.Outcome != adapter.Unknown {
		t.Fatalf("a write answered 401: %v, want unknown", err)
	}
	if _, err := a.Execute(context.Background(), ada, call); err == nil {
		t.Errorf("the unknown write again: no error, want its unknown outcome from the ledger")
	}
	if n, e := ps.sends("k-2"), ps.effects("k-2"); n != 1 || e != 0 {
		t.Errorf("k-2 reached the system %d times with %d effects, want once, none", n, e)
	}
	if _, err := refund(t, a, "k-3"); err != nil {
		t.Fatalf("the write after: %v", err)
	}
	if n, e := ps.sends("k-3"), ps.effects("k-3"); n != 1 || e != 1 {
		t.Errorf("k-3 reached the system %d times with %d effects, want once, one", n, e)
	}
	if grants, _ := ts.counts(); grants != 4 {
		t.Errorf("%d token requests, want a fourth after the write's 401", grants)
	}
}

// TestOAuthRefreshTokenRotates: oauth2_refresh_token starts from the
// environment's refresh token and, the endpoint rotating it, uses the new
// one next time (the old one is refused by then).
func TestOAuthRefreshTokenRotates(t *testing.T) {
	t.Parallel()
	a, _, ts, clk, err := oauthPayments(t, `{"type": "oauth2_refresh_token", "token_url_env": "PAYMENTS_TOKEN_URL",
		"refresh_token_env": "PAYMENTS_REFRESH_TOKEN", "client_id_env": "PAYMENTS_CLIENT_ID", "client_secret_env": "PAYMENTS_CLIENT_SECRET", "client_auth": "body"}`,
		map[string]string{"PAYMENTS_CLIENT_ID": "countersign", "PAYMENTS_CLIENT_SECRET": "cs-0123456789", "PAYMENTS_REFRESH_TOKEN": "rt-0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := readCharge(t, a); err != nil {
			t.Fatal(err)
		}
		clk.advance(10 * time.Minute)
	}
	want := []string{"refresh_token basic=false scope= audience= refresh=rt-0", "refresh_token basic=false scope= audience= refresh=rt-1",
		"refresh_token basic=false scope= audience= refresh=rt-2"}
	if got := strings.Join(ts.grants, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("token requests:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// TestOAuthRotatedRefreshTokenNeverInAnError: a refresh token the endpoint
// rotated to, refused later and echoed in the endpoint's answer, is in no
// error, as the environment's one is not.
func TestOAuthRotatedRefreshTokenNeverInAnError(t *testing.T) {
	t.Parallel()
	a, _, ts, clk, err := oauthPayments(t, `{"type": "oauth2_refresh_token", "token_url": "/oauth/token",
		"refresh_token_env": "PAYMENTS_REFRESH_TOKEN", "client_id_env": "PAYMENTS_CLIENT_ID", "client_secret_env": "PAYMENTS_CLIENT_SECRET"}`,
		map[string]string{"PAYMENTS_CLIENT_ID": "countersign", "PAYMENTS_CLIENT_SECRET": "cs-0123456789", "PAYMENTS_REFRESH_TOKEN": "rt-0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := readCharge(t, a); err != nil {
		t.Fatal(err)
	}
	ts.mu.Lock()
	ts.refresh = "revoked" // the adapter holds rt-1, which the endpoint no longer takes
	ts.mu.Unlock()
	clk.advance(10 * time.Minute)
	err = readCharge(t, a)
	if ae, ok := adapter.AsError(err); !ok || ae.Code != "system_authentication_failed" {
		t.Fatalf("%v, want system_authentication_failed", err)
	}
	if !strings.Contains(err.Error(), "invalid_grant") || strings.Contains(err.Error(), "rt-1") {
		t.Errorf("the error %q should say invalid_grant and never the rotated refresh token", err)
	}
}

// TestOAuthRefusedCredentialsSendNothing: when the token endpoint refuses
// the client, a read and a write answer system_authentication_failed, not
// sent and not retryable, naming the variables to check; the write never
// reaches the system, and the secret (which this endpoint echoes) is in no
// error and no log line.
func TestOAuthRefusedCredentialsSendNothing(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	const wrong = "not-the-secret-4242"
	a, ps, _, _, err := oauthPayments(t, clientCredentials,
		map[string]string{"PAYMENTS_CLIENT_ID": "countersign", "PAYMENTS_CLIENT_SECRET": wrong},
		slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	readErr := readCharge(t, a)
	args := raw(t, map[string]any{"charge_id": "ch_1", "amount_cents": 100, "reason": "requested_by_customer"})
	_, writeErr := a.Execute(context.Background(), ada, adapter.Call{Action: "refund_charge", Args: args, IdempotencyKey: "k-1"})
	for _, err := range []error{readErr, writeErr} {
		ae, ok := adapter.AsError(err)
		if !ok || ae.Code != "system_authentication_failed" || ae.Outcome != adapter.NotSent || ae.Retryable ||
			!strings.Contains(ae.Hint, "PAYMENTS_CLIENT_ID, PAYMENTS_CLIENT_SECRET") {
			t.Errorf("%v, want system_authentication_failed, not sent, naming the variables", err)
		}
		if !strings.Contains(err.Error(), "invalid_client") || strings.Contains(err.Error(), wrong) {
			t.Errorf("the error %q should say invalid_client and never the secret", err)
		}
	}
	if strings.Contains(logs.String(), wrong) {
		t.Errorf("the secret is in the log:\n%s", logs.String())
	}
	if n := ps.sends("k-1"); n != 0 {
		t.Errorf("the write reached the system %d times without a token", n)
	}
}
