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

	"countersign/internal/adapter"
	"countersign/internal/consent"
	"countersign/internal/receipts"
	"countersign/internal/stepup/stepuptest"
)

// TestReceiptsVerifyChecksTheCustomersConsent: receipts of writes the
// customer confirmed with the mail's link, a code, their account or a
// passkey, and of a staff step-up approval, verify and say who said yes,
// how and to what; each tampering — the quote, its digest, the arguments
// (alone, or with their digest and the quote's hash), the quote's target,
// the customer's passkey assertion — re-signed with the receipts key so
// only these checks can catch it, is refused with its name and exit 1.
func TestReceiptsVerifyChecksTheCustomersConsent(t *testing.T) {
	signer, err := receipts.NewSigner(bytes.Repeat([]byte{9}, 32))
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
	quote := `{"title":"Refund $180.00 for order ord_1","target":{"system":"shop","kind":"order","id":"ord_1","display":"Order ord_1"},` +
		`"lines":[{"label":"Refund","to":"$180.00 to card ending 4242","emphasis":true}],"consequences":[],"amount_cents":18000,"currency":"USD",` +
		`"confirm_label":"Refund","decline_label":"Keep","reversible":false}`
	digest, _ := consent.QuoteDigest(json.RawMessage(quote))
	key := stepuptest.Unregistered(t)
	passkey := key.AssertChallenge(t, consent.Challenge("inv_123", 4, digest, consent.Confirm))
	staff := key.Assert(t, "inv_123", 4, sum[:])
	// write signs claims for a write whose customer proved it with proof
	// (none: a staff step-up approval), after change.
	write := func(proof string, change func(claims, cs map[string]any)) string {
		t.Helper()
		a := map[string]any{}
		for k, v := range args {
			a[k] = v
		}
		claims := map[string]any{"sub": "inv_123", "iat": 1, "task_id": "tsk_9", "system": "shop", "action": "issue_refund",
			"state": "completed", "target": map[string]any{"kind": "order", "id": "ord_1", "display": "Order ord_1"}, "args": a,
			"approvals": []any{}, "args_digest": hex.EncodeToString(sum[:])}
		var cs map[string]any
		if proof == "" {
			raw, _ := json.Marshal(staff)
			var step map[string]any
			_ = json.Unmarshal(raw, &step)
			claims["approvals"] = []any{map[string]any{"user_id": 12, "name": "Sam Agent", "version": 4, "args_hash": hex.EncodeToString(sum[:]),
				"identified_by": map[string]any{"method": "password+passkey"}, "at": "2026-12-01T18:00:00Z", "step_up": step}}
		} else {
			ev := consent.Evidence{Proof: proof, Decision: consent.Confirm, QuoteVersion: 4, QuoteDigest: digest}
			if proof == "passkey" {
				ev.Passkey = passkey
			}
			raw, _ := json.Marshal(ev)
			_ = json.Unmarshal(raw, &cs)
			cs["customer"], cs["quote"], cs["args_hash"], cs["at"] = "jordan.lee@example.com", json.RawMessage(quote), hex.EncodeToString(sum[:]), "2026-12-01T18:00:00Z"
			claims["consent"] = cs
		}
		if change != nil {
			change(claims, cs)
		}
		jws, err := signer.Sign(claims)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "r.jws")
		if err := os.WriteFile(p, []byte(jws), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const said = " the quote: Refund $180.00 for order ord_1; Refund: $180.00 to card ending 4242; amount $180.00"
	for _, tc := range []struct {
		name, proof string
		change      func(claims, cs map[string]any)
		code        int
		want        string
	}{
		{"confirmed with the mail's link", "link", nil, 0, "jordan.lee@example.com confirmed with the link from their mailbox" + said},
		{"confirmed with a code", "code", nil, 0, "jordan.lee@example.com confirmed with a code e-mailed to them" + said},
		{"confirmed with their account", "account", nil, 0, "jordan.lee@example.com confirmed signed in to their account" + said},
		{"confirmed with a passkey", "passkey", nil, 0, "the customer's passkey signed this decision on this quote: its signature holds"},
		{"approved by staff with a step-up", "", nil, 0, "approved with a passkey by Sam Agent: the passkey's signature holds"},
		{"the proof passkey without its assertion", "passkey", func(_, cs map[string]any) { delete(cs, "passkey") }, 1,
			"the customer's passkey assertion does not hold"},
		{"a changed quote", "link", func(_, cs map[string]any) {
			cs["quote"] = json.RawMessage(strings.Replace(quote, "$180.00 to card", "$1,800.00 to card", 1))
		}, 1, "the quote digest does not hold"},
		{"a changed quote digest", "code", func(_, cs map[string]any) { cs["quote_digest"] = flipB64(t, cs["quote_digest"].(string)) }, 1,
			"the quote digest does not hold"},
		{"changed arguments", "link", func(c, _ map[string]any) { c["args"].(map[string]any)["amount_cents"] = json.Number("180000") }, 1,
			"the arguments were changed"},
		{"changed arguments with their digest", "link", func(c, _ map[string]any) {
			c["args"].(map[string]any)["amount_cents"] = json.Number("180000")
			h := sha256.Sum256(adapter.Canonical(c["args"].(map[string]any)))
			c["args_digest"] = hex.EncodeToString(h[:])
		}, 1, "the arguments sent are not the ones the quote was made from"},
		{"changed arguments of a staff approval", "", func(c, _ map[string]any) {
			c["args"].(map[string]any)["amount_cents"] = json.Number("180000")
			h := sha256.Sum256(adapter.Canonical(c["args"].(map[string]any)))
			c["args_digest"] = hex.EncodeToString(h[:])
		}, 1, "the receipt's arguments hash to"},
		{"another target", "account", func(c, _ map[string]any) { c["target"] = map[string]any{"kind": "order", "id": "ord_2"} }, 1,
			"the quote is of order ord_1, and the write was of order ord_2"},
		{"a changed passkey signature", "passkey", func(_, cs map[string]any) {
			p := cs["passkey"].(map[string]any)
			p["signature"] = flipB64(t, p["signature"].(string))
		}, 1, "the customer's passkey assertion does not hold"},
		{"a link's decision turned", "link", func(_, cs map[string]any) { cs["decision"] = consent.Decline }, 1,
			`the customer's recorded decision is "decline", not a confirmation`},
		{"a passkey's decision turned", "passkey", func(_, cs map[string]any) { cs["decision"] = consent.Decline }, 1,
			"the customer's passkey assertion does not hold"},
		{"a changed staff assertion", "", func(c, _ map[string]any) {
			s := c["approvals"].([]any)[0].(map[string]any)["step_up"].(map[string]any)
			s["signature"] = flipB64(t, s["signature"].(string))
		}, 1, "the passkey assertion of Sam Agent's approval does not hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runReceipts(context.Background(), []string{"verify", "-jwks", jwks, write(tc.proof, tc.change)}, strings.NewReader(""), &stdout, &stderr)
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
