package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSystemsCheckReportsLocales: check names the locales a file's quotes
// are written in, and refuses a translation whose placeholders differ from
// the default locale's, naming the file, the field and the fix.
func TestSystemsCheckReportsLocales(t *testing.T) {
	const file = "../../internal/httpadapter/testdata/shop-http-locales.json"
	env := func(k string) string {
		return map[string]string{"SHOP_URL": "http://127.0.0.1:1", "SHOP_TOKEN": "t"}[k]
	}
	var stdout, stderr bytes.Buffer
	// The file's catalogue of products is the business's, open to every
	// customer on purpose, so check exits 1 for that; it must still load.
	runSystems([]string{"check", file}, &stdout, &stderr, env)
	if strings.Contains(stdout.String(), "does not load") {
		t.Fatalf("the file does not load: %s", stdout.String())
	}
	if !strings.Contains(stdout.String(), "quotes in de, en, fr (default en)") {
		t.Errorf("check does not name the locales: %s", stdout.String())
	}

	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "broken.json")
	raw = bytes.Replace(raw, []byte(`"fr": "Montant"`), []byte(`"fr": "Montant {target.currency}"`), 1)
	if err := os.WriteFile(broken, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := runSystems([]string{"check", broken}, &stdout, &stderr, env); code != 1 {
		t.Errorf("check of a file with a mismatched translation: exit %d, want 1", code)
	}
	for _, want := range []string{"broken.json:", "/actions/1/quote/lines/0/label/fr", "placeholders", "fix: use exactly the placeholders of the en text"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("check does not say %q:\n%s", want, stdout.String())
		}
	}
}
