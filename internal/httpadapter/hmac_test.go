package httpadapter_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// hmacPayments serves the payments system behind a check of every
// request's HMAC-SHA256 under key, over what sign says, and loads
// testdata/example/payments.json with auth, its signing key from secret.
func hmacPayments(t *testing.T, auth, secret string, sign func(r *http.Request, body []byte) (header, want string)) (*httpadapter.Adapter, *paymentsSystem) {
	t.Helper()
	ps := startPayments(t)
	ps.authorized = func(r *http.Request) bool {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		header, want := sign(r, body)
		return hmac.Equal([]byte(r.Header.Get(header)), []byte(want))
	}
	raw, err := os.ReadFile("testdata/example/payments.json")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PAYMENTS_URL": ps.URL, "PAYMENTS_SIGNING_KEY": secret}
	file := strings.Replace(string(raw), `{"type": "bearer", "secret_env": "PAYMENTS_SECRET_KEY"}`, auth, 1)
	a, err := httpadapter.Load("payments.json", []byte(file), httpadapter.Config{Now: clock,
		Ledger: adapter.NewLedger(store.New(dbtest.New(t)), clock), Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	return a, ps
}

func mac(key string, parts ...string) []byte {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(strings.Join(parts, "")))
	return m.Sum(nil)
}

// TestHMACSignedRequests: "hmac" signs every read and write as the file
// says (the body alone, hex, after a prefix; or the timestamp, method,
// path with its query and body joined by a separator, base64, the
// timestamp in its own header), and the system, recomputing it, takes
// them; under a wrong key it refuses a read and a write, which then
// changes nothing.
func TestHMACSignedRequests(t *testing.T) {
	t.Parallel()
	const key = "whsec-0123456789"
	cases := []struct {
		name, auth string
		sign       func(r *http.Request, body []byte) (string, string)
	}{
		{"the body, hex",
			`{"type": "hmac", "header": "X-Signature", "secret_env": "PAYMENTS_SIGNING_KEY", "signed": ["body"], "prefix": "sha256="}`,
			func(r *http.Request, body []byte) (string, string) {
				return "X-Signature", "sha256=" + hex.EncodeToString(mac(key, string(body)))
			}},
		{"timestamp, method, path and body, base64",
			`{"type": "hmac", "header": "X-Signature", "secret_env": "PAYMENTS_SIGNING_KEY", "signed": ["timestamp", "method", "path", "body"],
			  "separator": ".", "encoding": "base64", "timestamp_header": "X-Timestamp"}`,
			func(r *http.Request, body []byte) (string, string) {
				if r.Header.Get("X-Timestamp") != strconv.FormatInt(testNow.Unix(), 10) {
					return "X-Timestamp", "the adapter's clock"
				}
				return "X-Signature", base64.StdEncoding.EncodeToString(mac(key, r.Header.Get("X-Timestamp"), ".", r.Method, ".",
					r.URL.RequestURI(), ".", string(body)))
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, ps := hmacPayments(t, tc.auth, key, tc.sign)
			if err := readCharge(t, a); err != nil {
				t.Fatalf("a signed read: %v", err)
			}
			if _, err := refund(t, a, "k-1"); err != nil {
				t.Fatalf("a signed write: %v", err)
			}
			if n := ps.effects("k-1"); n != 1 {
				t.Errorf("%d effects under k-1, want 1", n)
			}

			wrong, ps := hmacPayments(t, tc.auth, "not-the-key", tc.sign)
			if ae, ok := adapter.AsError(readCharge(t, wrong)); !ok || ae.Outcome == adapter.Unknown {
				t.Errorf("a read signed with the wrong key: %v, want refused or not sent", ae)
			}
			args := raw(t, map[string]any{"charge_id": "ch_1", "amount_cents": 100, "reason": "requested_by_customer"})
			_, err := wrong.Execute(context.Background(), ada, adapter.Call{Action: "refund_charge", Args: args, IdempotencyKey: "k-2"})
			if ae, ok := adapter.AsError(err); !ok || ae.Outcome == adapter.Unknown || ps.effects("") != 0 {
				t.Errorf("a write signed with the wrong key: %v with %d effects, want refused, none", err, ps.effects(""))
			}
		})
	}
}

// TestAuthCheckedAtLoad: an OAuth 2 or hmac authentication that cannot
// work does not load, naming the field and the fix, and never a secret's
// value.
func TestAuthCheckedAtLoad(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/example/payments.json")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PAYMENTS_URL": "http://127.0.0.1:1", "ID": "countersign", "SECRET": "cs-0123456789", "KEY": "k"}
	cases := []struct{ auth, want string }{
		{`{"type": "oauth2_client_credentials", "client_id_env": "ID", "client_secret_env": "SECRET"}`,
			`/auth: OAuth 2 needs the token endpoint (fix: add "token_url"`},
		{`{"type": "oauth2_client_credentials", "token_url": "/t", "token_url_env": "T", "client_id_env": "ID", "client_secret_env": "SECRET"}`,
			`/auth/token_url: the file gives both token_url and token_url_env`},
		{`{"type": "oauth2_client_credentials", "token_url": "/t", "client_id_env": "ID", "client_secret_env": "UNSET"}`,
			`/auth/client_secret_env: the environment variable UNSET is not set (fix: set UNSET to the OAuth 2 client secret before starting`},
		{`{"type": "oauth2_client_credentials", "token_url": "/t", "client_id_env": "ID"}`,
			`/auth: missing property 'client_secret_env'`},
		{`{"type": "oauth2_client_credentials", "token_url": "ftp://x", "client_id_env": "ID", "client_secret_env": "SECRET"}`,
			`/auth/token_url: 'ftp://x' does not match pattern`},
		{`{"type": "oauth2_refresh_token", "token_url": "/t", "client_secret_env": "SECRET", "refresh_token_env": "KEY"}`,
			`/auth/client_secret_env: a client secret without a client id (fix: add "client_id_env")`},
		{`{"type": "bearer", "secret_env": "KEY", "scopes": ["a"]}`, `/auth/scopes: false schema`},
		{`{"type": "oauth2_refresh_token", "token_url": "/t", "refresh_token_env": "KEY", "scopes": ["a"]}`, `/auth/scopes: false schema`},
		{`{"type": "hmac", "header": "X-Signature", "secret_env": "KEY", "signed": ["timestamp", "body"]}`,
			`/auth/signed: the signature covers a timestamp, but no header says which it was (fix: add "timestamp_header"`},
		{`{"type": "hmac", "header": "X-Signature", "secret_env": "KEY", "signed": ["body"], "timestamp_header": "X-Time"}`,
			`/auth/timestamp_header: a timestamp header, but the signature does not cover the timestamp`},
		{`{"type": "hmac", "header": "X-Signature", "secret_env": "KEY", "signed": ["body", "headers"]}`,
			`/auth/signed/1: value must be one of 'method', 'path', 'timestamp', 'body'`},
	}
	for _, tc := range cases {
		file := strings.Replace(string(raw), `{"type": "bearer", "secret_env": "PAYMENTS_SECRET_KEY"}`, tc.auth, 1)
		_, err := httpadapter.Load("payments.json", []byte(file), httpadapter.Config{Getenv: func(k string) string { return env[k] }})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v\nwant an error with %q", tc.auth, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "cs-0123456789") {
			t.Errorf("%s: the error shows the secret: %v", tc.auth, err)
		}
	}
}
