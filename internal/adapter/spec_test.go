package adapter_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/adapter"
)

var refundParams = []adapter.Param{
	{Name: "order_id", Type: "string", Required: true, Description: "the order's id", MaxLength: 64},
	{Name: "amount_cents", Type: "integer", Required: true, Min: adapter.Int64(1), Max: adapter.Int64(10_000_000)},
	{Name: "reason_code", Type: "string", Required: true, Enum: []string{"damaged", "not_received", "wrong_item", "changed_mind", "duplicate_charge"}},
	{Name: "address", Type: "object", Properties: []adapter.Param{
		{Name: "line1", Type: "string", Required: true, MaxLength: 10},
		{Name: "country", Type: "string", Required: true, Enum: []string{"US", "DE"}},
	}},
}

func TestValidateArgs(t *testing.T) {
	cases := []struct {
		name   string
		raw    string
		want   map[string]any
		fields []string // fields named in the error
	}{
		{"good", `{"order_id":" ord_1 ","amount_cents":4210,"reason_code":"damaged"}`,
			map[string]any{"order_id": "ord_1", "amount_cents": int64(4210), "reason_code": "damaged"}, nil},
		{"integer as float with no fraction", `{"order_id":"o","amount_cents":4210.0,"reason_code":"damaged"}`,
			map[string]any{"order_id": "o", "amount_cents": int64(4210), "reason_code": "damaged"}, nil},
		{"nested object", `{"order_id":"o","amount_cents":1,"reason_code":"damaged","address":{"line1":"1 Main","country":"DE"}}`,
			map[string]any{"order_id": "o", "amount_cents": int64(1), "reason_code": "damaged", "address": map[string]any{"line1": "1 Main", "country": "DE"}}, nil},
		{"missing required", `{}`, nil, []string{"order_id", "amount_cents", "reason_code"}},
		{"unknown field", `{"order_id":"o","amount_cents":1,"reason_code":"damaged","price_cents":1}`, nil, []string{"price_cents"}},
		{"wrong enum", `{"order_id":"o","amount_cents":1,"reason_code":"because"}`, nil, []string{"reason_code"}},
		{"fraction", `{"order_id":"o","amount_cents":42.5,"reason_code":"damaged"}`, nil, []string{"amount_cents"}},
		{"below minimum", `{"order_id":"o","amount_cents":0,"reason_code":"damaged"}`, nil, []string{"amount_cents"}},
		{"string for integer", `{"order_id":"o","amount_cents":"42","reason_code":"damaged"}`, nil, []string{"amount_cents"}},
		{"too long", `{"order_id":"` + strings.Repeat("x", 65) + `","amount_cents":1,"reason_code":"damaged"}`, nil, []string{"order_id"}},
		{"nested unknown and missing", `{"order_id":"o","amount_cents":1,"reason_code":"damaged","address":{"zip":"1"}}`, nil,
			[]string{"address.zip", "address.line1", "address.country"}},
		{"not an object", `[1,2]`, nil, []string{""}},
		{"two objects", `{} {}`, nil, []string{""}},
		{"a key twice", `{"order_id":"o","amount_cents":1,"reason_code":"damaged","amount_cents":99999}`, nil, []string{"amount_cents"}},
		{"a nested key twice", `{"order_id":"o","amount_cents":1,"reason_code":"damaged","address":{"line1":"1 Main","country":"DE","country":"US"}}`,
			nil, []string{"address.country"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := adapter.ValidateArgs(refundParams, json.RawMessage(tc.raw))
			if tc.fields == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("args (-want +got):\n%s", diff)
				}
				return
			}
			ae, ok := adapter.AsError(err)
			if !ok || ae.Code != adapter.CodeInvalidArguments {
				t.Fatalf("want invalid_arguments, got %v", err)
			}
			for _, f := range tc.fields {
				if ae.Fields[f] == "" {
					t.Errorf("field %q not named; fields: %v", f, ae.Fields)
				}
			}
		})
	}
}

func TestSchemaListsEnumsAndForbidsExtraFields(t *testing.T) {
	s := adapter.ActionSpec{Params: refundParams}.Schema()
	b, _ := json.Marshal(s)
	for _, want := range []string{`"additionalProperties":false`, `"enum":["damaged","not_received"`, `"required":["order_id","amount_cents","reason_code"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("schema lacks %s:\n%s", want, b)
		}
	}
}

// FuzzValidateArgs checks that validation never panics, that what it
// accepts satisfies every rule, and that accepting is stable: the canonical
// form of accepted arguments is accepted again unchanged.
func FuzzValidateArgs(f *testing.F) {
	for _, seed := range []string{
		`{"order_id":"ord_1","amount_cents":4210,"reason_code":"damaged"}`,
		`{"order_id":"o","amount_cents":1e3,"reason_code":"wrong_item","address":{"line1":"x","country":"US"}}`,
		`{"amount_cents":-1}`, `null`, `"x"`, `{"order_id":"\u0000"}`, `{"amount_cents":99999999999999999999}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := adapter.ValidateArgs(refundParams, raw)
		if err != nil {
			if _, ok := adapter.AsError(err); !ok {
				t.Fatalf("error is not an *adapter.Error: %v", err)
			}
			return
		}
		n, ok := got["amount_cents"].(int64)
		if !ok || n < 1 || n > 10_000_000 {
			t.Fatalf("accepted amount_cents %v", got["amount_cents"])
		}
		switch got["reason_code"] {
		case "damaged", "not_received", "wrong_item", "changed_mind", "duplicate_charge":
		default:
			t.Fatalf("accepted reason_code %v", got["reason_code"])
		}
		if id, _ := got["order_id"].(string); id == "" || len([]rune(id)) > 64 {
			t.Fatalf("accepted order_id %q", id)
		}
		canon := adapter.Canonical(got)
		again, err := adapter.ValidateArgs(refundParams, canon)
		if err != nil {
			t.Fatalf("canonical form %s rejected: %v", canon, err)
		}
		if string(adapter.Canonical(again)) != string(canon) {
			t.Fatalf("canonical form not stable: %s vs %s", canon, adapter.Canonical(again))
		}
	})
}

// TestValidateArgsRefusesHiddenCharacters: a string argument holding a
// character a person cannot see, or one that turns the text around, is
// refused with a field error naming the character and where it is; look-
// alike spaces become plain spaces; newlines pass only where the text may
// hold them.
func TestValidateArgsRefusesHiddenCharacters(t *testing.T) {
	params := []adapter.Param{
		{Name: "line1", Type: "string", Required: true, MaxLength: 200},
		{Name: "text", Type: "string", MaxLength: 200, Multiline: true},
	}
	refused := map[string]rune{
		"zero width space": 0x200B, "zero width joiner": 0x200D, "right-to-left override": 0x202E,
		"left-to-right embedding": 0x202A, "first strong isolate": 0x2068, "pop directional isolate": 0x2069,
		"right-to-left mark": 0x200F, "byte order mark": 0xFEFF, "soft hyphen": 0x00AD, "hangul filler": 0x3164,
		"hangul choseong filler": 0x115F, "braille blank": 0x2800, "word joiner": 0x2060, "tag space": 0xE0020,
		"escape": 0x1B, "carriage return": '\r', "variation selector 1": 0xFE00, "combining grapheme joiner": 0x034F,
	}
	for name, r := range refused {
		t.Run(name, func(t *testing.T) {
			raw, _ := json.Marshal(map[string]string{"line1": "500 Market" + string(r) + " Street"})
			_, err := adapter.ValidateArgs(params, raw)
			ae, ok := adapter.AsError(err)
			if !ok || ae.Code != adapter.CodeInvalidArguments {
				t.Fatalf("U+%04X accepted: %v", r, err)
			}
			msg := ae.Fields["line1"]
			if !strings.Contains(msg, fmt.Sprintf("U+%04X", r)) || !strings.Contains(msg, "position 11") || !strings.HasPrefix(msg, "remove") {
				t.Errorf("field error %q does not name U+%04X at position 11 and the fix", msg, r)
			}
		})
	}
	t.Run("newline in a one-line text", func(t *testing.T) {
		_, err := adapter.ValidateArgs(params, json.RawMessage(`{"line1":"500 Market Street\nc/o R. Mallory"}`))
		if ae, ok := adapter.AsError(err); !ok || ae.Fields["line1"] == "" {
			t.Fatalf("a newline in line1 was accepted: %v", err)
		}
	})
	t.Run("multiline text keeps newlines and tabs", func(t *testing.T) {
		got, err := adapter.ValidateArgs(params, json.RawMessage(`{"line1":"x","text":"Oak.\r\n\tSolid."}`))
		if err != nil {
			t.Fatal(err)
		}
		if got["text"] != "Oak.\n\tSolid." {
			t.Errorf("text = %q", got["text"])
		}
	})
	t.Run("look-alike spaces become spaces", func(t *testing.T) {
		got, err := adapter.ValidateArgs(params, json.RawMessage(`{"line1":"500\u00a0Market\u2003Street\u3000"}`))
		if err != nil {
			t.Fatal(err)
		}
		if got["line1"] != "500 Market Street" {
			t.Errorf("line1 = %q", got["line1"])
		}
	})
	t.Run("emoji presentation is not hidden", func(t *testing.T) {
		if _, err := adapter.ValidateArgs(params, json.RawMessage(`{"line1":"Gift \u2764\ufe0f"}`)); err != nil {
			t.Fatal(err)
		}
	})
}

// TestArgsHashIsTheCanonicalArgumentsHash: ArgsHash of a receipt's JSON
// arguments is the SHA-256 of Canonical of the same values — whatever the
// keys' order, the spacing, and with numbers kept as written — and a
// value that is not a JSON object has none.
func TestArgsHashIsTheCanonicalArgumentsHash(t *testing.T) {
	want := sha256.Sum256(adapter.Canonical(map[string]any{"order_id": "ord_1", "amount_cents": json.Number("18000"), "rate": json.Number("0.10")}))
	for _, raw := range []string{
		`{"order_id":"ord_1","amount_cents":18000,"rate":0.10}`,
		"{ \"rate\": 0.10,\n \"amount_cents\": 18000, \"order_id\": \"ord_1\" }",
	} {
		if got, ok := adapter.ArgsHash(json.RawMessage(raw)); !ok || !bytes.Equal(got, want[:]) {
			t.Errorf("ArgsHash(%s) = %x %v, want %x", raw, got, ok, want)
		}
	}
	if got, ok := adapter.ArgsHash(json.RawMessage(`{"order_id":"ord_1","amount_cents":18000,"rate":0.1}`)); !ok || bytes.Equal(got, want[:]) {
		t.Errorf("a number written otherwise hashes the same: %x %v", got, ok)
	}
	for _, raw := range []string{`null`, `[1]`, `"x"`, `{`} {
		if got, ok := adapter.ArgsHash(json.RawMessage(raw)); ok {
			t.Errorf("ArgsHash(%s) = %x, want none", raw, got)
		}
	}
}
