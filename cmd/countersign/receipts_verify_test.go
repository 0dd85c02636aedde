package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"countersign/internal/receipts"
)

// TestReceiptsVerify: a receipt made by internal/receipts verifies against
// its key set (a file or a URL) and is told in words; a changed claim, a
// key set without its kid, alg none and an HS256 signature made with the
// public key as secret are refused with the reason and exit status 1.
func TestReceiptsVerify(t *testing.T) {
	signer, err := receipts.NewSigner(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 18, 17, 10, 0, time.UTC)
	claims := map[string]any{"iss": "https://console.example", "sub": "inv_123", "iat": at.Unix(), "task_id": "tsk_9",
		"system": "shop", "action": "issue_refund", "state": "completed",
		"target":       map[string]any{"system": "shop", "kind": "order", "id": "ord_1", "display": "Order ord_1 (Walnut desk lamp)"},
		"args":         map[string]any{"order_id": "ord_1", "amount_cents": 1000},
		"result":       map[string]any{"reference": "re_42", "short_reference": "R-42", "amount_cents": 990, "currency": "EUR"},
		"verification": map[string]any{"verified": true, "evidence": "Read refund re_42 back", "at": at},
		"completed_at": at}
	jws, err := signer.Sign(claims)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, v any) string {
		p := filepath.Join(dir, name)
		b, ok := v.([]byte)
		if !ok {
			b, _ = json.Marshal(v)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jwks := write("jwks.json", signer.JWKS())
	keys := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(signer.JWKS())
	}))
	defer keys.Close()
	other := write("other.json", receipts.Ephemeral().JWKS())
	parts := strings.Split(jws, ".")
	b64 := base64.RawURLEncoding.EncodeToString
	tampered := strings.Replace(string(mustDecode(t, parts[1])), `"amount_cents":1000`, `"amount_cents":100000`, 1)
	hsHeader := b64([]byte(`{"alg":"HS256","typ":"countersign-receipt+jwt","kid":"` + signer.KeyID() + `"}`))
	x := signer.JWKS()["keys"].([]any)[0].(map[string]any)["x"].(string)
	mac := hmac.New(sha256.New, []byte(x))
	mac.Write([]byte(hsHeader + "." + parts[1]))

	for _, tc := range []struct {
		name, jwks, receipt string
		stdin               string
		code                int
		want                []string
	}{
		{"valid", jwks, write("r.jws", []byte(jws+"\n")), "", 0, []string{"VALID: signed with EdDSA by key " + signer.KeyID(),
			"Invocation:   inv_123 (task tsk_9)", "System:       shop, action issue_refund", "Target:       Order ord_1 (Walnut desk lamp) (order ord_1)",
			"What changed: amount_cents = 1000, order_id = \"ord_1\"", "Reference:    re_42 (the customer's: R-42)",
			"Verified at:  2026-12-01T18:17:10Z: Read refund re_42 back", "Amount:       €9.90 (as the system recorded it)",
			"State:        completed, as of ", "a later reversal is not in this receipt: GET /api/v1/invocations/inv_123 gives the state now"}},
		{"the API's answer on stdin, keys by URL", keys.URL, "-", `{"receipt":"` + jws + `","kid":"x"}`, 0, []string{"VALID", "Invocation:   inv_123"}},
		{"a changed claim", jwks, write("t.jws", []byte(parts[0]+"."+b64([]byte(tampered))+"."+parts[2])), "", 1,
			[]string{"NOT VALID: not a receipt signed with this key: the signature does not match (key " + signer.KeyID() + ")"}},
		{"unknown kid", other, write("u.jws", []byte(jws)), "", 1, []string{"no key of the key set has its kid (kid \"" + signer.KeyID() + "\")"}},
		{"alg none", jwks, write("n.jws", []byte(b64([]byte(`{"alg":"none","kid":"`+signer.KeyID()+`"}`))+"."+parts[1]+".")), "", 1,
			[]string{"the algorithm is not EdDSA (alg \"none\")"}},
		{"HS256 with the public key as secret", jwks, write("h.jws", []byte(hsHeader+"."+parts[1]+"."+b64(mac.Sum(nil)))), "", 1,
			[]string{"the algorithm is not EdDSA (alg \"HS256\")"}},
		{"not a JWS", jwks, write("x.jws", []byte("hello")), "", 1, []string{"not a compact JWS (1 parts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runReceipts(context.Background(), []string{"verify", "-jwks", tc.jwks, tc.receipt}, strings.NewReader(tc.stdin), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout.String(), stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String()+stderr.String(), w) {
					t.Errorf("output does not say %q:\n%s%s", w, stdout.String(), stderr.String())
				}
			}
			if tc.code != 0 && strings.Contains(stdout.String(), "Invocation:") {
				t.Errorf("a refused receipt's claims are printed as if they held:\n%s", stdout.String())
			}
		})
	}
}

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReceiptsVerifyFetchesKeysCarefully: a key set by URL is read over
// https, or http to this machine only; a redirect is not followed, and an
// answer larger than 1 MiB is refused.
func TestReceiptsVerifyFetchesKeysCarefully(t *testing.T) {
	var followed bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		case "/elsewhere":
			followed = true
			_, _ = w.Write([]byte(`{"keys":[]}`))
		case "/huge":
			_, _ = w.Write(bytes.Repeat([]byte(" "), 2<<20))
		}
	}))
	defer srv.Close()
	for _, tc := range []struct{ from, want string }{
		{"http://keys.example/jwks.json", "use https://"},
		{srv.URL + "/moved", "a redirect"},
		{srv.URL + "/huge", "larger than"},
	} {
		_, err := readKeySet(context.Background(), tc.from)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("readKeySet(%s) = %v, want an error saying %q", tc.from, err, tc.want)
		}
	}
	if followed {
		t.Error("the redirect was followed")
	}
}
