package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSystemsDraftThenCheck: `systems draft` writes a file from the shop's
// OpenAPI document that `systems check` loads and whose TODOs it names;
// a file without TODOs checks clean; a -write that is no write is refused
// naming the operation.
func TestSystemsDraftThenCheck(t *testing.T) {
	out := filepath.Join(t.TempDir(), "shop.json")
	var stdout, stderr bytes.Buffer
	code := runSystems([]string{"draft", "-openapi", "../../internal/httpadapter/testdata/openapi/shop.yaml", "-out", out,
		"-write", "changeShippingAddress,createRefund"}, &stdout, &stderr, nil)
	if code != 0 {
		t.Fatalf("draft: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "set DEMO_SHOP_TOKEN before loading it") {
		t.Errorf("draft does not name the variable to set: %s", stderr.String())
	}
	env := func(k string) string {
		return map[string]string{"DEMO_SHOP_TOKEN": "t", "PLANS_URL": "http://plans.example"}[k]
	}
	stdout.Reset()
	if code := runSystems([]string{"check", out}, &stdout, &stderr, env); code != 1 {
		t.Errorf("check of a draft: exit %d, want 1 (TODOs left)", code)
	}
	got := stdout.String()
	for _, want := range []string{"shop.json:", "/actions/0/guards/0/message: left to write: \"TODO: write the rule", "/actions/1/quote/title", "TODOs left",
		"read tool get_order shows /risk_score, internal data the assistant must not see"} {
		if !strings.Contains(got, want) {
			t.Errorf("check does not say %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "does not load") {
		t.Errorf("the draft does not load:\n%s", got)
	}

	stdout.Reset()
	if code := runSystems([]string{"check", "../../internal/httpadapter/testdata/example/plans.json"}, &stdout, &stderr, env); code != 0 {
		t.Errorf("check of a finished file: exit %d: %s", code, stdout.String())
	}

	// A finished file whose object has no owner is open to every customer.
	plans, err := os.ReadFile("../../internal/httpadapter/testdata/example/plans.json")
	if err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(t.TempDir(), "open.json")
	ownerless := regexp.MustCompile(`"owner": "[^"]*",?`).ReplaceAll(plans, nil)
	if err := os.WriteFile(open, ownerless, 0o600); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := runSystems([]string{"check", open}, &stdout, &stderr, env); code != 1 || !strings.Contains(stdout.String(), "has no owner, so every customer could read and change every") {
		t.Errorf("check of a file without owner: exit %d: %s", code, stdout.String())
	}

	stderr.Reset()
	if code := runSystems([]string{"draft", "-openapi", "../../internal/httpadapter/testdata/openapi/shop.yaml", "-out", out,
		"-write", "createRefund"}, &stdout, &stderr, nil); code != 1 || !strings.Contains(stderr.String(), "exists; a draft does not replace it") {
		t.Errorf("a second draft to the same -out: exit %d: %s", code, stderr.String())
	}

	stderr.Reset()
	code = runSystems([]string{"draft", "-openapi", "../../internal/httpadapter/testdata/openapi/shop.yaml", "-write", "getOrder"}, &stdout, &stderr, nil)
	if code != 1 || !strings.Contains(stderr.String(), "-write getOrder: it is GET /orders/{id}, a read") {
		t.Errorf("draft -write getOrder: exit %d, %s", code, stderr.String())
	}
}

// TestSystemsDraftOfAFormEncodedOAuthAPI: a Stripe-shaped document (form
// bodies, OAuth 2 client credentials) drafts a file that `systems check`
// loads once the client's id and secret are set, naming only its TODOs.
func TestSystemsDraftOfAFormEncodedOAuthAPI(t *testing.T) {
	out := filepath.Join(t.TempDir(), "payments.json")
	var stdout, stderr bytes.Buffer
	if code := runSystems([]string{"draft", "-openapi", "../../internal/httpadapter/testdata/openapi/payments.yaml", "-out", out,
		"-write", "PostRefunds,PostChargeLabels"}, &stdout, &stderr, nil); code != 0 {
		t.Fatalf("draft: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "set PAYMENTS_CLIENT_ID, PAYMENTS_CLIENT_SECRET before loading it") {
		t.Errorf("draft does not name the client's variables: %s", stderr.String())
	}
	env := func(k string) string {
		return map[string]string{"PAYMENTS_CLIENT_ID": "id", "PAYMENTS_CLIENT_SECRET": "secret"}[k]
	}
	stdout.Reset()
	if code := runSystems([]string{"check", out}, &stdout, &stderr, env); code != 1 {
		t.Errorf("check of a draft: exit %d, want 1 (TODOs left)", code)
	}
	if got := stdout.String(); strings.Contains(got, "does not load") || !strings.Contains(got, "TODOs left") {
		t.Errorf("check of the draft:\n%s", got)
	}
}
