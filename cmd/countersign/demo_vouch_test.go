package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"countersign/internal/confirmation"
	"countersign/internal/demo"
)

// checkDemoAssistantIsVouchedFor opens tasks with the demo assistant's key
// as the demo shop's site would let it: with a task assertion signed with
// the site secret of the credentials file a task opens; without one it is
// refused, since the demo assistant may not act for any customer.
func checkDemoAssistantIsVouchedFor(t *testing.T, base string, creds demo.Credentials) {
	t.Helper()
	secret, err := hex.DecodeString(creds.SiteSecret)
	if err != nil || len(secret) < 32 || creds.Assistant == nil {
		t.Fatalf("the credentials file has no site secret (%q) or no assistant", creds.SiteSecret)
	}
	open := func(conversation, assertion string) int {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"customer_ref": "customer@demo.countersign.test", "conversation_id": conversation,
			"allowed_actions": []string{"issue_refund"}, "customer_assertion": assertion})
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/tasks", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+creds.Assistant.Key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	now := time.Now()
	signed := confirmation.SignTaskAssertion(secret, confirmation.Assertion{Sub: "customer@demo.countersign.test", Sys: "shop",
		Aud: creds.Assistant.Name, IssuedAt: now.Unix(), ExpiresAt: now.Add(5 * time.Minute).Unix(), Nonce: hex.EncodeToString(nonce)})
	if got := open("e2e-vouched", signed); got != http.StatusCreated {
		t.Errorf("a task the demo shop's site vouched for: %d, want 201", got)
	}
	if got := open("e2e-unvouched", ""); got != http.StatusForbidden {
		t.Errorf("a task nobody vouched for: %d, want 403", got)
	}
}
