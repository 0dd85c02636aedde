package api_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"countersign/internal/controlplane"
	"countersign/web/webtest"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/accounts"
)

// verifyReceipt checks a compact JWS as any holder of the JWKS would, with
// nothing of Countersign's code: the key named by kid, alg EdDSA, the
// Ed25519 signature of "<header>.<payload>".
func verifyReceipt(t *testing.T, jws string, jwks map[string]any) (map[string]any, bool) {
	t.Helper()
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return nil, false
	}
	rawHeader, _ := base64.RawURLEncoding.DecodeString(parts[0])
	rawClaims, _ := base64.RawURLEncoding.DecodeString(parts[1])
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	var header map[string]any
	var claims map[string]any
	if json.Unmarshal(rawHeader, &header) != nil || json.Unmarshal(rawClaims, &claims) != nil || header["alg"] != "EdDSA" {
		return nil, false
	}
	for _, k := range jwks["keys"].([]any) {
		key := k.(map[string]any)
		if key["kid"] != header["kid"] || key["kty"] != "OKP" || key["crv"] != "Ed25519" {
			continue
		}
		x, _ := base64.RawURLEncoding.DecodeString(key["x"].(string))
		return claims, len(x) == ed25519.PublicKeySize && ed25519.Verify(x, []byte(parts[0]+"."+parts[1]), sig)
	}
	return nil, false
}

// TestACompletedWriteHasASignedReceipt: a receipt is refused before the
// write completes, then verifies under the public JWKS and says what the
// API says of the write; changed claims do not verify; another assistant
// cannot have it.
func TestACompletedWriteHasASignedReceipt(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	id := b.ProposeRefund(t, b.DamagedOrder(t))
	path := "/api/v1/invocations/" + id + "/receipt"
	early := b.Call(t, b.Key, http.MethodGet, path, nil).Want(t, http.StatusConflict)
	if early.JSON["code"] != "not_completed" {
		t.Errorf("before completion: %s", early.Body)
	}
	if pending := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id, nil).Want(t, http.StatusOK); pending.JSON["receipt_url"] != nil {
		t.Errorf("an invocation awaiting approval names a receipt: %v", pending.JSON["receipt_url"])
	}
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: b.Users[accounts.Agent].Actor(), InvocationID: id, Verb: controlplane.StaffApprove, Version: b.Invocation(t, id).Version, ArgsHash: b.Invocation(t, id).ArgsHash}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Control.Dispatch(ctx, id); err != nil {
		t.Fatal(err)
	}
	inv := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id, nil).Want(t, http.StatusOK)
	if inv.JSON["state"] != "completed" {
		t.Fatalf("state %v", inv.JSON["state"])
	}
	if got := inv.JSON["receipt_url"]; got != b.Server.URL+path {
		t.Errorf("receipt_url %v, want %s", got, b.Server.URL+path)
	}
	res := b.Call(t, b.Key, http.MethodGet, path, nil).Want(t, http.StatusOK)
	jwks := b.Call(t, "", http.MethodGet, "/api/v1/receipts/jwks.json", nil).Want(t, http.StatusOK).JSON
	jws := res.JSON["receipt"].(string)
	claims, ok := verifyReceipt(t, jws, jwks)
	if !ok {
		t.Fatalf("the receipt does not verify under %v: %s", jwks, jws)
	}
	if diff := cmp.Diff(res.JSON["claims"], any(claims)); diff != "" {
		t.Errorf("claims shown differ from the signed ones (-shown +signed):\n%s", diff)
	}
	// The receipt says what the shop itself paid, not only what was asked.
	if r, _ := claims["result"].(map[string]any); r["amount_cents"] == nil || r["amount_cents"] != inv.JSON["quote"].(map[string]any)["amount_cents"] {
		t.Errorf("the receipt's result %v does not say the amount the shop refunded", claims["result"])
	}
	args := inv.JSON["args"].(map[string]any)
	for k, want := range map[string]any{"sub": id, "task_id": b.TaskID(), "system": "shop", "action": "issue_refund", "state": "completed",
		"args": args["effective"], "result": inv.JSON["result"], "verification": inv.JSON["verification"], "target": inv.JSON["target"]} {
		if diff := cmp.Diff(want, claims[k]); diff != "" {
			t.Errorf("claim %s (-api +receipt):\n%s", k, diff)
		}
	}

	// The issuer is never the caller's Host header (this console has no
	// -public-url: no issuer at all).
	req, _ := http.NewRequest(http.MethodGet, b.Server.URL+path, nil)
	req.Host = "shop.example.com"
	req.Header.Set("Authorization", "Bearer "+b.Key)
	hostRes, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var hosted struct {
		Claims map[string]any `json:"claims"`
	}
	err = json.NewDecoder(hostRes.Body).Decode(&hosted)
	hostRes.Body.Close()
	if err != nil || hostRes.StatusCode != http.StatusOK {
		t.Fatalf("the receipt with another Host: %d, %v", hostRes.StatusCode, err)
	}
	if iss, ok := hosted.Claims["iss"]; ok {
		t.Errorf("a receipt asked for with Host shop.example.com names the issuer %v", iss)
	}

	parts := strings.Split(jws, ".")
	claims["result"].(map[string]any)["reference"] = "re_forged"
	forged, _ := json.Marshal(claims)
	if _, ok := verifyReceipt(t, parts[0]+"."+base64.RawURLEncoding.EncodeToString(forged)+"."+parts[2], jwks); ok {
		t.Error("a receipt with a changed reference verifies")
	}
	_, otherKey := b.NewAssistant(t, "other-bot")
	b.Call(t, otherKey, http.MethodGet, path, nil).Want(t, http.StatusNotFound)
}
