package httpadapter_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"countersign/internal/httpadapter"
)

// action is the drafted action named name, as JSON values.
func action(t *testing.T, file map[string]any, name string) map[string]any {
	t.Helper()
	for _, a := range file["actions"].([]any) {
		if a := a.(map[string]any); a["name"] == name {
			return a
		}
	}
	t.Fatalf("no action %s in the draft", name)
	return nil
}

// param is the action's parameter named name.
func param(t *testing.T, a map[string]any, name string) map[string]any {
	t.Helper()
	for _, p := range a["params"].([]any) {
		if p := p.(map[string]any); p["name"] == name {
			return p
		}
	}
	t.Fatalf("action %s has no parameter %s: %v", a["name"], name, a["params"])
	return nil
}

// draftInvoicing drafts testdata/openapi/invoicing.yaml, whose money is
// decimal, loading it as `systems check` would.
func draftInvoicing(t *testing.T, write ...string) (*httpadapter.Draft, map[string]any) {
	t.Helper()
	raw, err := os.ReadFile("testdata/openapi/invoicing.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := httpadapter.DraftFromOpenAPI(raw, httpadapter.DraftOptions{Write: write})
	if err != nil {
		t.Fatalf("DraftFromOpenAPI: %v", err)
	}
	if _, err := httpadapter.Load("draft.json", d.File, httpadapter.Config{Getenv: func(k string) string { return "set-" + k }}); err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, d.File)
	}
	var file map[string]any
	if err := json.Unmarshal(d.File, &file); err != nil {
		t.Fatal(err)
	}
	return d, file
}

// TestDraftProposesMoneyWithItsCurrency: a body field named amount, not
// *_cents, beside a currency (a body field, or the target's) becomes the
// action's amount_param in the currency's minor units, as the policy
// counts money: sent as given when the document shows an integer, as a
// decimal in whole units (major_units) when it shows a decimal string or
// a number, with the quote's amount and currency. The notes say what was
// assumed; where the document does not say the unit, the parameter's
// description is a TODO to confirm, which `systems check` names.
func TestDraftProposesMoneyWithItsCurrency(t *testing.T) {
	t.Parallel()
	pd, payments := draftPayments(t, "PostRefunds", "PostChargeCapture")
	id, invoicing := draftInvoicing(t, "createCreditNote", "recordPayment")
	for _, tc := range []struct {
		file     map[string]any
		notes    []string
		action   string
		body     string // the amount's value in the request body
		currency string // the quote's currency
		sure     bool
		note     string
	}{
		{payments, pd.Notes, "post_refunds", "{args.amount_cents}", "{target.currency.upperAscii()}", true,
			"-write PostRefunds: body field amount is money in target.currency: the parameter amount_cents, in the currency's minor units (the action's amount_param), sent as given: an integer in minor units, as the document says (\"How much to refund, in minor units.\")"},
		{payments, pd.Notes, "post_charge_capture", "{args.amount_cents}", "{target.currency.upperAscii()}", false,
			"-write PostChargeCapture: body field amount is money in target.currency: the parameter amount_cents, in the currency's minor units (the action's amount_param), sent as given: an integer, assumed in minor units; the document does not say: confirm it"},
		{invoicing, id.Notes, "create_credit_note", "{major_units(args.amount_cents, args.currency_code)}", "{args.currency_code.upperAscii()}", true,
			"-write createCreditNote: body field amount is money in args.currency_code: the parameter amount_cents, in the currency's minor units (the action's amount_param), sent as a decimal in whole units (1250 sent as \"12.50\"), as the document says (format decimal)"},
		{invoicing, id.Notes, "record_payment", "{double(major_units(args.amount_cents, target.currency_code))}", "{target.currency_code.upperAscii()}", false,
			"-write recordPayment: body field amount is money in target.currency_code: the parameter amount_cents, in the currency's minor units (the action's amount_param), sent as a decimal number in whole units (1250 sent as 12.5), assumed; the document does not say: confirm it"},
	} {
		t.Run(tc.action, func(t *testing.T) {
			a := action(t, tc.file, tc.action)
			if a["amount_param"] != "amount_cents" {
				t.Errorf("amount_param %v, want amount_cents", a["amount_param"])
			}
			p := param(t, a, "amount_cents")
			if p["type"] != "integer" || p["minimum"] != float64(1) || p["required"] != true {
				t.Errorf("the amount's parameter %v, want a required integer of at least 1", p)
			}
			desc, _ := p["description"].(string)
			if todo := strings.HasPrefix(desc, "TODO: confirm"); todo == tc.sure || !strings.Contains(desc, "minor units") {
				t.Errorf("the amount's description %q: sure of the unit %t, want a TODO to confirm only when unsure, naming minor units", desc, tc.sure)
			}
			body := a["request"].(map[string]any)["body"].(map[string]any)
			if body["amount"] != tc.body {
				t.Errorf("the body sends amount as %v, want %s", body["amount"], tc.body)
			}
			q := a["quote"].(map[string]any)
			if q["amount_cents"] != "args.amount_cents" || q["currency"] != tc.currency {
				t.Errorf("the quote's amount %v and currency %v, want args.amount_cents and %s", q["amount_cents"], q["currency"], tc.currency)
			}
			if notes := strings.Join(tc.notes, "\n"); !strings.Contains(notes, tc.note) {
				t.Errorf("no note\n%s\nin\n%s", tc.note, notes)
			}
		})
	}
	left, err := httpadapter.Unfinished("draft.json", pd.File)
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, l := range left {
		if strings.Contains(l.Problem, "confirm the unit") {
			named = append(named, l.Pointer)
		}
	}
	if len(named) != 1 || !strings.HasPrefix(named[0], "/actions/1/params/") {
		t.Errorf("Unfinished names the unit to confirm at %v, want only the capture's amount", named)
	}
}

// TestDraftLeavesAnAmountWithoutCurrencyAlone: an amount with no
// currency beside it nor on its object is not guessed to be money.
func TestDraftLeavesAnAmountWithoutCurrencyAlone(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/openapi/invoicing.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(raw), "\n") {
		if !strings.Contains(l, "currency_code") {
			lines = append(lines, l)
		}
	}
	doc := strings.Join(lines, "\n")
	d, err := httpadapter.DraftFromOpenAPI([]byte(doc), httpadapter.DraftOptions{Write: []string{"createCreditNote", "recordPayment"}})
	if err != nil {
		t.Fatalf("DraftFromOpenAPI: %v", err)
	}
	if strings.Contains(string(d.File), "amount_param") || strings.Contains(string(d.File), "major_units") {
		t.Errorf("an amount without a currency was drafted as money:\n%s", d.File)
	}
}

// TestDraftTakesTheCurrencyOnlyFromAFieldItSends: a currency the body
// does not send (read-only) is not the amount's; the target's is, and the
// draft loads.
func TestDraftTakesTheCurrencyOnlyFromAFieldItSends(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/openapi/invoicing.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(raw), `currency_code: {type: string, maxLength: 3,`, `currency_code: {type: string, readOnly: true, maxLength: 3,`, 1)
	d, err := httpadapter.DraftFromOpenAPI([]byte(doc), httpadapter.DraftOptions{Write: []string{"createCreditNote"}})
	if err != nil {
		t.Fatalf("DraftFromOpenAPI: %v", err)
	}
	if _, err := httpadapter.Load("draft.json", d.File, httpadapter.Config{Getenv: func(k string) string { return "set" }}); err != nil {
		t.Fatalf("the draft does not load: %v", err)
	}
	if !strings.Contains(string(d.File), "major_units(args.amount_cents, target.currency_code)") {
		t.Errorf("the amount is not sent in the target's currency:\n%s", d.File)
	}
}

// TestDraftProposesAnIdentityToConfirm: an object with an obvious
// cross-system key (metadata.order_number, external_id) gets an identity
// that holds of nothing until a person confirms it: its value is a TODO
// condition giving no key, which `systems check` names, and a note says
// what to write.
func TestDraftProposesAnIdentityToConfirm(t *testing.T) {
	t.Parallel()
	pd, payments := draftPayments(t, "PostRefunds")
	id, invoicing := draftInvoicing(t, "createCreditNote")
	for _, tc := range []struct {
		draft      *httpadapter.Draft
		file       map[string]any
		kind, name string
		value      string
	}{
		{pd, payments, "charge", "order_number", "object.metadata.order_number"},
		{id, invoicing, "invoice", "external_id", "object.external_id"},
	} {
		identity, _ := tc.file["objects"].(map[string]any)[tc.kind].(map[string]any)["identity"].(map[string]any)
		value, _ := identity["value"].(string)
		if identity["name"] != tc.name || !strings.HasPrefix(value, "'TODO: confirm") || !strings.HasSuffix(value, "' == '' ? "+tc.value+" : ''") {
			t.Errorf("objects.%s.identity %v, want %s from %s behind a TODO to confirm", tc.kind, identity, tc.name, tc.value)
		}
		left, err := httpadapter.Unfinished("draft.json", tc.draft.File)
		if err != nil {
			t.Fatal(err)
		}
		named := false
		for _, l := range left {
			named = named || l.Pointer == "/objects/"+tc.kind+"/identity/value"
		}
		if !named {
			t.Errorf("Unfinished does not name objects.%s's identity: %v", tc.kind, left)
		}
		note := "objects." + tc.kind + ": " + tc.value + " looks like a key another system holds too"
		if notes := strings.Join(tc.draft.Notes, "\n"); !strings.Contains(notes, note) {
			t.Errorf("no note %q in:\n%s", note, notes)
		}
	}
}
