package httpadapter_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
	"countersign/internal/shopadapter"
)

func readShopFile(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/shop-http.json")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func shopEnv(name string) string {
	switch name {
	case "SHOP_URL":
		return "http://127.0.0.1:1"
	case "SHOP_TOKEN":
		return "shop_test_token"
	}
	return ""
}

// TestShopDescriptionLoads: the example file is valid and complete.
func TestShopDescriptionLoads(t *testing.T) {
	a, err := httpadapter.Load("shop-http.json", readShopFile(t), httpadapter.Config{Getenv: shopEnv})
	if err != nil {
		t.Fatal(err)
	}
	var actions, reads []string
	for _, s := range a.Actions() {
		actions = append(actions, s.Name)
	}
	for _, s := range a.ReadTools() {
		reads = append(reads, s.Name)
	}
	if a.Name() != "shop-http" || strings.Join(actions, " ") != "issue_refund resend_receipt update_product_description change_shipping_address" ||
		strings.Join(reads, " ") != "get_order list_orders get_invoice list_products" {
		t.Errorf("loaded %s with actions %v and read tools %v", a.Name(), actions, reads)
	}
}

// TestLoadErrorsNameTheLineAndTheFix breaks the example file one way at a
// time: each error names the file, the line of the broken value, and a fix.
func TestLoadErrorsNameTheLineAndTheFix(t *testing.T) {
	cases := []struct {
		name, old, new string
		env            func(string) string
		want           []string
	}{
		{"risk not in the enum", `"risk": "irreversible"`, `"risk": "maybe"`, nil,
			[]string{"/actions/0/risk", "fix: reversible or irreversible"}},
		{"guidance missing", `"guidance": "Use it when the customer asks for a copy`, `"guide": "Use it when the customer asks for a copy`, nil,
			[]string{"/actions/1/guide: additional properties 'guide' not allowed", "/actions/1: missing property 'guidance'"}},
		{"a guard that is not CEL", `"require": "target.status == 'paid'"`, `"require": "target.status =="`, nil,
			[]string{"/actions/1/guards/0/require", "does not compile", "fix: write a CEL expression"}},
		{"an unknown object kind", `"target": {"kind": "invoice", "param": "invoice_id"}`, `"target": {"kind": "receipt", "param": "invoice_id"}`, nil,
			[]string{"/actions/1/target/kind", `no object kind "receipt"`, "fix: use one of: invoice, order, product"}},
		{"an unclosed placeholder", `"title": "Resend the receipt for invoice {target.number}"`, `"title": "Resend the receipt for invoice {target.number"`, nil,
			[]string{"/actions/1/quote/title", "no closing }"}},
		{"the base URL's variable unset", "", "", func(string) string { return "" },
			[]string{"/base_url_env", "SHOP_URL is not set", "fix: set SHOP_URL"}},
		{"a secret's variable unset", `"auth": {"type": "bearer", "secret_env": "SHOP_TOKEN"}`, `"auth": {"type": "bearer", "secret_env": "SHOP_HTTP_TOKEN"}`, nil,
			[]string{"/auth/secret_env", "SHOP_HTTP_TOKEN is not set", "never written in the file"}},
		{"a secret in the file", `"auth": {"type": "bearer", "secret_env": "SHOP_TOKEN"}`, `"auth": {"type": "bearer", "token": "sk_live_123"}`, nil,
			[]string{"/auth", "token"}},
		{"an outcome that does not exist", `"system_code": "charge_already_refunded", "code": "amount_above_refundable", "outcome": "refused"`,
			`"system_code": "charge_already_refunded", "code": "amount_above_refundable", "outcome": "failed"`, nil,
			[]string{"/errors/rules/5/outcome", "fix: refused (nothing changed)"}},
		{"a stage that does not exist", `"default_stage": 5`, `"default_stage": 2`, nil,
			[]string{"/actions/1/default_stage", "fix: the policy stage the action starts at"}},
		{"done words ending in a full stop", `"done_words": "Refunded"`, `"done_words": "Refunded."`, nil,
			[]string{"/actions/0/done_words", "fix: what the assistant tells the customer once the action is done, without the full stop"}},
		{"an amount in an unknown unit", `"amount": "/data/amount_cents"`, `"amount": "/data/amount_cents", "amount_unit": "dollars"`, nil,
			[]string{"/effects/amount_unit", "fix: cents (the default: minor units"}},
		{"paging two ways at once", `"amount": "/data/amount_cents"`, `"amount": "/data/amount_cents", "paging": {"link": true, "next": "/next", "param": "cursor"}`, nil,
			[]string{"/effects/paging: paging gives more than one way to the next page", "fix: keep one of"}},
		{"an identity an assistant could set", `"identity": {"name": "order_number", "value": "object.number"}`,
			`"identity": {"name": "order_number", "value": "args.order_number"}`, nil,
			[]string{"/objects/order/identity/value", "uses args, which is not bound here", "fix: here an expression may use object"}},
		{"an identity of the principal's account", `"identity": {"name": "order_number", "value": "object.number"}`,
			`"identity": {"name": "order_number", "value": "account.id"}`, nil,
			[]string{"/objects/order/identity/value", "uses account, which is not bound here"}},
		{"an identity with no name", `"identity": {"name": "order_number", "value": "object.number"}`,
			`"identity": {"value": "object.number"}`, nil,
			[]string{"/objects/order/identity: missing property 'name'"}},
		{"an identity name that is not a business name", `"identity": {"name": "order_number", "value": "object.number"}`,
			`"identity": {"name": "Order Number", "value": "object.number"}`, nil,
			[]string{"/objects/order/identity/name", "fix: the key's business name"}},
		{"a reject reason that is not a sentence", `"The receipt goes only to the e-mail address on file."`, `"on file"`, nil,
			[]string{"/actions/1/reject_reasons/0", "fix: the preset reasons an agent picks from"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := readShopFile(t)
			var line int
			if tc.old != "" {
				i := bytes.Index(raw, []byte(tc.old))
				if i < 0 {
					t.Fatalf("the example file has no %s", tc.old)
				}
				line = bytes.Count(raw[:i], []byte("\n")) + 1
				raw = bytes.Replace(raw, []byte(tc.old), []byte(tc.new), 1)
			} else {
				line = bytes.Count(raw[:bytes.Index(raw, []byte(`"base_url_env"`))], []byte("\n")) + 1
			}
			env := tc.env
			if env == nil {
				env = shopEnv
			}
			_, err := httpadapter.Load("shop-http.json", raw, httpadapter.Config{Getenv: env})
			if err == nil {
				t.Fatal("the broken file loaded")
			}
			var fe *httpadapter.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FileError", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, fmt.Sprintf("shop-http.json:%d: ", line)) {
				t.Errorf("error %q does not name line %d", msg, line)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
}

// TestLoadDirRefusesTwoFilesOfOneName: every system has its own name.
func TestLoadDirRefusesTwoFilesOfOneName(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.json", "b.json"} {
		if err := os.WriteFile(dir+"/"+f, readShopFile(t), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, err := httpadapter.LoadDir(dir, httpadapter.Config{Getenv: shopEnv})
	if err == nil || !strings.Contains(err.Error(), "b.json:1: /name") {
		t.Errorf("LoadDir: %v, want b.json refused for its name", err)
	}
}

// TestREADMEShowsTheExampleFile: the example in this package's README.md
// (the description-file format reference) is the tested file.
func TestREADMEShowsTheExampleFile(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(readme, bytes.TrimSpace(readShopFile(t))) {
		t.Error("internal/httpadapter/README.md does not contain internal/httpadapter/testdata/shop-http.json verbatim; copy it into its example section")
	}
}

// TestShopFileSaysWhatTheShopAdapterSays: the example file gives each of
// its actions the first stage, the word for done and the reject reasons
// of the shop adapter's action it describes, so the two shops behave alike
// in the console; the values come from the file, not from the name.
func TestShopFileSaysWhatTheShopAdapterSays(t *testing.T) {
	a, err := httpadapter.Load("shop-http.json", readShopFile(t), httpadapter.Config{Getenv: shopEnv})
	if err != nil {
		t.Fatal(err)
	}
	shop := map[string]adapter.ActionSpec{}
	for _, s := range shopadapter.New(shopadapter.Config{}).Actions() {
		shop[s.Name] = s
	}
	for _, s := range a.Actions() {
		want, ok := shop[s.Name]
		if !ok {
			t.Fatalf("the shop adapter has no action %s", s.Name)
		}
		if s.DefaultStage != want.DefaultStage || s.DoneWords != want.DoneWords || !slices.Equal(s.RejectReasons, want.RejectReasons) {
			t.Errorf("%s: file says stage %d, %q, %q; the shop adapter %d, %q, %q", s.Name,
				s.DefaultStage, s.DoneWords, s.RejectReasons, want.DefaultStage, want.DoneWords, want.RejectReasons)
		}
	}
}
