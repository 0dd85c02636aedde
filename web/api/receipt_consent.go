package api

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/consent"
	"countersign/internal/controlplane"
)

// consentJSON is the customer's decision a receipt carries: the evidence
// as recorded (proof kind, decision, quote version and digest, and the
// passkey's assertion when one was used), the customer, the quote as it
// was shown — so anyone can recompute its digest and check the passkey
// offline — and args_hash, the hex SHA-256 of the canonical arguments the
// quote was made from.
type consentJSON struct {
	consent.Evidence
	Customer string          `json:"customer"`
	Quote    json.RawMessage `json:"quote"`
	ArgsHash string          `json:"args_hash"`
	At       time.Time       `json:"at"`
}

// receiptConsent is the customer's recorded decision on inv, nil when no
// customer decided it.
func (h *Handler) receiptConsent(ctx context.Context, inv controlplane.Invocation) (*consentJSON, error) {
	c, ok, err := h.cfg.Control.Consent(ctx, inv.ID)
	if err != nil || !ok {
		return nil, err
	}
	return &consentJSON{Evidence: c.Evidence, Customer: c.Customer, Quote: c.Quote, ArgsHash: hex.EncodeToString(c.ArgsHash), At: c.At}, nil
}

// argsDigest is the hex adapter.ArgsHash of args; empty when args is
// not a JSON object.
func argsDigest(args json.RawMessage) string {
	sum, ok := adapter.ArgsHash(args)
	if !ok {
		return ""
	}
	return hex.EncodeToString(sum)
}

// receiptConsentSchema is consentJSON's schema.
func receiptConsentSchema() map[string]any {
	str, b64 := typ("string"), typ("string", "unpadded base64url")
	return withDesc(obj([]string{"proof", "decision", "quote_version", "quote_digest", "customer", "quote", "args_hash", "at"}, map[string]any{
		"proof":         typ("string", "how the customer proved who they are: link, code, account, assertion or passkey"),
		"decision":      enum("confirm", "decline"),
		"quote_version": typ("integer", "the request's version the customer was shown"),
		"quote_digest":  withDesc(b64, "SHA-256 of the quote's canonical JSON (keys sorted, no spaces, numbers as written)"),
		"customer":      typ("string", "the customer's reference"),
		"quote":         freeObject("the quote as shown: its digest is quote_digest"),
		"args_hash":     typ("string", "hex SHA-256 of the canonical arguments the quote was made from"),
		"at":            map[string]any{"type": "string", "format": "date-time"},
		"passkey": withDesc(obj([]string{"credential_id", "public_key", "rp_id", "origin", "authenticator_data", "client_data_json", "signature"},
			map[string]any{"credential_id": b64, "public_key": withDesc(b64, "COSE_Key, unpadded base64url"), "rp_id": str, "origin": str,
				"authenticator_data": b64, "client_data_json": b64, "signature": b64}),
			"the customer's passkey assertion: its challenge is SHA-256(\"countersign customer decision v1\" ‖ len(sub) ‖ sub ‖ quote_version ‖ len(digest) ‖ quote_digest ‖ len(decision) ‖ decision)"),
	}), "the customer's decision that let the write leave; absent when no customer decided")
}
