package pseudotest

import (
	"encoding/json"
	"testing"
	"testing/fstest"

	"golang.org/x/text/language"

	"countersign/internal/locale"
)

// InstallMarkedConsole installs, until the test ends, an English override
// of every console text (console.*) marked ⟦…⟧, so a word of the console
// written in code instead of taken from the catalogue shows unmarked.
func InstallMarkedConsole(t testing.TB) {
	t.Helper()
	override := map[string]any{}
	for _, m := range locale.Shipped().Messages(language.English) {
		switch {
		case !locale.EnglishOnly(m.ID):
		case m.One != "":
			override[m.ID] = map[string]string{"one": "⟦" + m.One + "⟧", "other": "⟦" + m.Other + "⟧"}
		default:
			override[m.ID] = "⟦" + m.Other + "⟧"
		}
	}
	raw, err := json.Marshal(override)
	if err != nil {
		t.Fatal(err)
	}
	c, err := locale.Load(locale.WithFiles(fstest.MapFS{"console.en.json": {Data: raw}}))
	if err != nil {
		t.Fatal(err)
	}
	locale.Install(c)
	t.Cleanup(func() { locale.Install(nil) })
}
