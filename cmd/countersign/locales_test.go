package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"countersign/internal/locale"
)

// translation is `locales template`'s English turned into a complete
// file for a new language: every text marked, every counted text given
// all six plural forms, drop left out.
func translation(t *testing.T, mark string, drop ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := runLocales([]string{"template"}, &stdout, &stderr); code != 0 {
		t.Fatalf("template: exit %d: %s", code, stderr.String())
	}
	msgs := map[string]any{}
	if err := json.Unmarshal(stdout.Bytes(), &msgs); err != nil {
		t.Fatalf("template writes no catalogue: %v", err)
	}
	for _, id := range drop {
		delete(msgs, id)
	}
	for id, v := range msgs {
		switch v := v.(type) {
		case string:
			msgs[id] = mark + " " + v
		case map[string]any:
			other := mark + " " + v["other"].(string)
			msgs[id] = map[string]string{"zero": other, "one": other, "two": other, "few": other, "many": other, "other": other}
		}
	}
	raw, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func writeFiles(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, raw := range files {
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLocalesCheck: check reports each file's language, its count of
// messages and what it does; it exits 0 when the console would start with
// every file and 1, naming the missing ids, the stale ones and the
// parameters that differ, when one would be refused.
func TestLocalesCheck(t *testing.T) {
	good := writeFiles(t, map[string][]byte{
		"cy.json": translation(t, "[cy]"),
		"he.json": translation(t, "[he]"),
		"fr.json": []byte(`{"language.switch.label": "Langue d’affichage"}`),
	})
	var stdout, stderr bytes.Buffer
	if code := runLocales([]string{"check", good}, &stdout, &stderr); code != 0 {
		t.Errorf("check of complete files: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{
		"cy.json: cy (Welsh), a new language: ", "complete: offered to customers, pages laid out left to right",
		"he.json: he (Hebrew), a new language: ", "pages laid out right to left",
		"fr.json: fr (French), overrides shipped texts: 1 message", "ok: its texts replace the shipped ones",
		"3 files, 0 refused",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("check does not say %q:\n%s", want, stdout.String())
		}
	}

	bad := writeFiles(t, map[string][]byte{
		"cy.json": translation(t, "[cy]", "order.items", "language.switch.label"),
		"fr.json": []byte(`{"decision.recorded": "Réponse : {{.Heure}}", "pages.gone": "Parti"}`),
	})
	stdout.Reset()
	if code := runLocales([]string{"check", bad}, &stdout, &stderr); code != 1 {
		t.Errorf("check of refused files: exit %d, want 1", code)
	}
	for _, want := range []string{
		"lack 2 of the English messages a customer may read: language.switch.label, order.items",
		`fr.json: message "decision.recorded": uses the parameters [Heure]; English uses [Time]`,
		`fr.json: message "pages.gone": is not in the English catalogue`,
		"refused: the console would not start with it", "2 files, 2 refused",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("check does not say %q:\n%s", want, stdout.String())
		}
	}
	if code := runLocales([]string{"check", filepath.Join(bad, "none")}, io.Discard, io.Discard); code != 2 {
		t.Errorf("check of a folder that is not there: exit %d, want 2", code)
	}
}

// TestLocalesTemplate: template writes a catalogue to start from: the
// customers' English texts without the console's (a new language would be
// refused with them), the console's with -console, a shipped language's
// with -lang; it never replaces a file.
func TestLocalesTemplate(t *testing.T) {
	ids := func(args ...string) map[string]any {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := runLocales(append([]string{"template"}, args...), &stdout, &stderr); code != 0 {
			t.Fatalf("template %v: exit %d: %s", args, code, stderr.String())
		}
		out := map[string]any{}
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	en := ids()
	if en["decision.recorded"] != "Answer recorded: {{.Time}}" || en["console.frame.sign_out"] != nil {
		t.Errorf("template: %v", en)
	}
	if forms, ok := en["order.items"].(map[string]any); !ok || forms["one"] != "{{.Count}} item" {
		t.Errorf("a counted text: %v", en["order.items"])
	}
	if c := ids("-console"); c["console.frame.sign_out"] != "Sign out" || c["decision.recorded"] != nil {
		t.Errorf("template -console: %v", c)
	}
	if fr := ids("-lang", "fr"); fr["language.switch.label"] != "Langue" {
		t.Errorf("template -lang fr: %v", fr["language.switch.label"])
	}
	out := filepath.Join(t.TempDir(), "cy.json")
	if err := os.WriteFile(out, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := runLocales([]string{"template", "-out", out}, io.Discard, io.Discard); code != 1 {
		t.Errorf("template over an existing file: exit %d, want 1", code)
	}
	if code := runLocales([]string{"template", "-lang", "cy"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("template of a language not shipped: exit %d, want 2", code)
	}
}

// TestLocalesDirAtStart: -locales-dir (LOCALES_DIR) is read like the other
// settings; a complete Welsh in it is offered to customers from the
// start, and an incomplete one stops the start naming the file, the
// missing ids and the fix.
func TestLocalesDirAtStart(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	bad := writeFiles(t, map[string][]byte{"cy.json": translation(t, "[cy]", "decision.recorded")})
	cfg, err := parseConfig(nil, func(k string) string { return map[string]string{"LOCALES_DIR": bad}[k] })
	if err != nil || cfg.LocalesDir != bad {
		t.Fatalf("LOCALES_DIR: %q, %v", cfg.LocalesDir, err)
	}
	t.Cleanup(func() { locale.Install(nil) })
	err = cfg.installLocales(log)
	for _, want := range []string{"-locales-dir " + bad, "cy.json: ", "decision.recorded", "countersign locales template"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("an incomplete Welsh at start: the error does not say %q: %v", want, err)
		}
	}
	if got := locale.Decide(locale.Inputs{AcceptLanguage: "cy"}); got.String() == "cy" {
		t.Error("a refused Welsh is offered")
	}

	cfg.LocalesDir = writeFiles(t, map[string][]byte{"cy.json": translation(t, "[cy]")})
	if err := cfg.installLocales(log); err != nil {
		t.Fatal(err)
	}
	if got := locale.Decide(locale.Inputs{AcceptLanguage: "cy-GB,en;q=0.8"}); got.String() != "cy" || got.Source != locale.FromHeader {
		t.Errorf("Decide = %s from %s; want cy from header", got, got.Source)
	}

	if _, err := parseConfig([]string{"-locales-dir", filepath.Join(bad, "none")}, func(string) string { return "" }); err == nil ||
		!strings.Contains(err.Error(), "-locales-dir") {
		t.Errorf("a -locales-dir that is not a folder: %v", err)
	}
}
