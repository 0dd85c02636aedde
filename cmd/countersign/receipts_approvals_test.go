package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/receipts"
	"countersign/internal/stepup"
	"countersign/internal/stepup/stepuptest"
)

// TestReceiptsVerifyChecksThePasskeyOfEachApproval: a receipt carrying a
// step-up approval verifies and says the passkey's signature holds; one
// whose assertion, arguments or approved hash were changed — and then
// signed again with the receipts key, so that only the approvals' check
// can catch it — is refused with the reason and exit status 1.
func TestReceiptsVerifyChecksThePasskeyOfEachApproval(t *testing.T) {
	signer, err := receipts.NewSigner(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jwks := filepath.Join(dir, "jwks.json")
	keys, _ := json.Marshal(signer.JWKS())
	if err := os.WriteFile(jwks, keys, 0o600); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"order_id": "ord_1", "amount_cents": json.Number("18000"), "reason_code": "damaged"}
	sum := sha256.Sum256(adapter.Canonical(args))
	key := stepuptest.Unregistered(t)
	up := key.Assert(t, "inv_123", 4, sum[:])
	claims := func(change func(args map[string]any, approval map[string]any)) string {
		t.Helper()
		a := map[string]any{}
		for k, v := range args {
			a[k] = v
		}
		raw, _ := json.Marshal(up)
		var step map[string]any
		_ = json.Unmarshal(raw, &step)
		approval := map[string]any{"user_id": 12, "name": "Sam Agent", "first_of_two": false, "version": 4, "args_hash": hex.EncodeToString(sum[:]),
			"identified_by": map[string]any{"method": "oidc", "step_up": map[string]any{"credential_id": step["credential_id"]}},
			"at":            time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC), "step_up": step}
		if change != nil {
			change(a, approval)
		}
		jws, err := signer.Sign(map[string]any{"sub": "inv_123", "iat": 1, "task_id": "tsk_9", "system": "shop", "action": "issue_refund",
			"state": "completed", "target": map[string]any{"kind": "order", "id": "ord_1", "display": "Order ord_1"}, "args": a,
			"approvals": []any{approval}})
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "r.jws")
		if err := os.WriteFile(p, []byte(jws), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	other := sha256.Sum256([]byte("other"))
	for _, tc := range []struct {
		name   string
		change func(args, approval map[string]any)
		code   int
		want   string
	}{
		{"valid", nil, 0, "approved with a passkey by Sam Agent: the passkey's signature holds"},
		{"a changed signature", func(_, a map[string]any) {
			s := a["step_up"].(map[string]any)
			s["signature"] = flipB64(t, s["signature"].(string))
		}, 1, "the passkey assertion of Sam Agent's approval does not hold"},
		{"another version", func(_, a map[string]any) { a["version"] = 5 }, 1, "the passkey assertion of Sam Agent's approval does not hold"},
		{"other arguments", func(args, _ map[string]any) { args["amount_cents"] = json.Number("180000") }, 1,
			"the receipt's arguments hash to"},
		{"other arguments and their hash", func(args, a map[string]any) {
			args["amount_cents"] = json.Number("180000")
			h := sha256.Sum256(adapter.Canonical(args))
			a["args_hash"] = hex.EncodeToString(h[:])
		}, 1, "the passkey assertion of Sam Agent's approval does not hold"},
		{"a hash that is not the arguments'", func(_, a map[string]any) { a["args_hash"] = hex.EncodeToString(other[:]) }, 1,
			"the receipt's arguments hash to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runReceipts(context.Background(), []string{"verify", "-jwks", jwks, claims(tc.change)}, strings.NewReader(""), &stdout, &stderr)
			out := stdout.String() + stderr.String()
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want %d saying %q:\n%s", code, tc.code, tc.want, out)
			}
			if tc.code != 0 && strings.Contains(stdout.String(), "VALID: signed") {
				t.Errorf("a refused receipt is told valid:\n%s", out)
			}
		})
	}
}

// flipB64 changes the last byte of an unpadded base64url value.
func flipB64(t *testing.T, s string) string {
	t.Helper()
	var b stepup.Bytes
	if err := b.UnmarshalJSON([]byte(`"` + s + `"`)); err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1
	out, _ := b.MarshalJSON()
	return strings.Trim(string(out), `"`)
}
