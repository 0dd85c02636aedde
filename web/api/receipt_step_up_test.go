package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/stepup"
	"countersign/internal/stepup/stepuptest"
	"countersign/web/webtest"
)

// TestAReceiptCarriesTheStaffApprovalAndItsStepUp: the receipt of a write
// a policy asked step-up for names the approver, how they were
// identified, the version and arguments hash approved — the SHA-256 of
// the receipt's own arguments, canonical — and the passkey assertion,
// which verifies offline for that approval.
func TestAReceiptCarriesTheStaffApprovalAndItsStepUp(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	if _, err := b.Store.Pool().Exec(ctx, `UPDATE policies SET step_up_every = true WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	id := b.ProposeRefund(t, b.DamagedOrder(t))
	u := b.Users[accounts.Agent]
	inv := b.Invocation(t, id)
	up := stepuptest.Register(t, b.Store, b.Accounts, u.User).Assert(t, id, int64(inv.Version), inv.ArgsHash)
	actor := u.Actor().IdentifiedAs(controlplane.Identification{Method: "password+passkey"})
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: actor, InvocationID: id, Verb: controlplane.StaffApprove,
		Version: inv.Version, ArgsHash: inv.ArgsHash, StepUp: up}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Control.Dispatch(ctx, id); err != nil {
		t.Fatal(err)
	}
	res := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id+"/receipt", nil).Want(t, http.StatusOK)
	jwks := b.Call(t, "", http.MethodGet, "/api/v1/receipts/jwks.json", nil).Want(t, http.StatusOK).JSON
	signed, ok := verifyReceipt(t, res.JSON["receipt"].(string), jwks)
	if !ok {
		t.Fatal("the receipt does not verify")
	}
	raw, _ := json.Marshal(signed)
	var claims struct {
		Args      json.RawMessage `json:"args"`
		Approvals []struct {
			UserID       int64                       `json:"user_id"`
			Name         string                      `json:"name"`
			IdentifiedBy controlplane.Identification `json:"identified_by"`
			Version      int64                       `json:"version"`
			ArgsHash     string                      `json:"args_hash"`
			StepUp       *stepup.Assertion           `json:"step_up"`
		} `json:"approvals"`
	}
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	if len(claims.Approvals) != 1 {
		t.Fatalf("the receipt carries %d approvals, want 1: %s", len(claims.Approvals), raw)
	}
	a := claims.Approvals[0]
	if a.UserID != u.ID || a.Name != u.Name || a.IdentifiedBy.Method != "password+passkey" || a.IdentifiedBy.StepUp == nil ||
		a.Version != int64(inv.Version) || a.StepUp == nil {
		t.Fatalf("the approval as signed: %+v", a)
	}
	hash, _ := hex.DecodeString(a.ArgsHash)
	dec := json.NewDecoder(bytes.NewReader(claims.Args))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(adapter.Canonical(args)); !bytes.Equal(sum[:], hash) || !bytes.Equal(hash, inv.ArgsHash) {
		t.Errorf("the receipt's arguments hash to %x; the approval names %s, the request %x", sum, a.ArgsHash, inv.ArgsHash)
	}
	if err := a.StepUp.Verify(id, a.Version, hash); err != nil {
		t.Errorf("the receipt's assertion: %v", err)
	}
}
