package httpadapter_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"countersign/internal/httpadapter"
)

// TestFileSendingAnArgumentNoLineShowsIsRefused: a file whose request
// sends an argument that no quote line shows does not load; the error
// names the file, the line where the argument is sent, the argument and
// the fix.
func TestFileSendingAnArgumentNoLineShowsIsRefused(t *testing.T) {
	cases := []struct {
		name, old, new string
		// sentAt is text on the line where the argument is sent.
		sentAt, arg string
	}{
		{"the new address without line 2",
			`{vars.to.line1}, {vars.to.line2 == '' ? '' : vars.to.line2 + ', '}{vars.to.city}`, `{vars.to.line1}, {vars.to.city}`,
			`"body": {"shipping_address": "{vars.to}"`, "address.line2"},
		{"the refund without its reason", `{"label": "Reason", "to": "{vars.reason}"},`, ``,
			`"body": {"order_id": "{target.id}", "amount_cents"`, "reason_code"},
		{"the amount only on a line that may be left out",
			`{"label": "This refund", "to": "{money(args.amount_cents, target.currency)}", "emphasis": true, "sum": true}`,
			`{"label": "This refund", "to": "{money(args.amount_cents, target.currency)}", "emphasis": true, "sum": true, "when": "true"}`,
			`"body": {"order_id": "{target.id}", "amount_cents"`, "amount_cents"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := readShopFile(t)
			if !bytes.Contains(raw, []byte(tc.old)) {
				t.Fatalf("the example file has no %s", tc.old)
			}
			raw = bytes.Replace(raw, []byte(tc.old), []byte(tc.new), 1)
			path := filepath.Join(t.TempDir(), "shop-http.json")
			if err := os.WriteFile(path, raw, 0o600); err != nil {
				t.Fatal(err)
			}
			line := bytes.Count(raw[:bytes.Index(raw, []byte(tc.sentAt))], []byte("\n")) + 1
			_, err := httpadapter.LoadFile(path, httpadapter.Config{Getenv: shopEnv})
			var fe *httpadapter.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("the file loaded or failed otherwise: %v", err)
			}
			msg := err.Error()
			for _, want := range []string{
				fmt.Sprintf("shop-http.json:%d: ", line),
				"sends args." + tc.arg + " to the system, but no quote line shows it",
				"fix: add a quote line without \"when\" whose label, from or to shows args." + tc.arg,
				"or stop sending it",
			} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
		})
	}
}

// TestEveryTestdataFileShowsWhatItSends: every description file in
// testdata loads, so each shows every argument it sends.
func TestEveryTestdataFileShowsWhatItSends(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no description files in testdata: %v", err)
	}
	for _, f := range files {
		if _, err := httpadapter.LoadFile(f, httpadapter.Config{Getenv: shopEnv}); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
