package views

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"golang.org/x/text/language"

	"countersign/internal/locale"
)

// TestTheConsoleFrameComesFromTheCatalogue: every text of the console's
// frame (title, skip link, brand, navigation's name, who is signed in,
// sign out, footer) is a console.* message, so an installation's English
// override of each shows, and none is left written in the page.
func TestTheConsoleFrameComesFromTheCatalogue(t *testing.T) {
	override := map[string]string{}
	for _, m := range locale.Shipped().Messages(language.English) {
		if strings.HasPrefix(m.ID, "console.frame.") {
			override[m.ID] = "«" + m.Other + "»"
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

	p := Page{Title: "Queue", User: &User{Name: "Ada", RoleLabel: "agent"}, Nav: []NavItem{{Label: "Queue", Href: "/queue"}}}
	doc, _ := renderDoc(t, Layout(p))
	label, _ := doc.Find("nav.site-nav").Attr("aria-label")
	for where, got := range map[string]string{
		"title":        doc.Find("title").Text(),
		"skip link":    doc.Find("a.skip").Text(),
		"brand":        doc.Find("header a.brand").Text(),
		"nav's name":   label,
		"signed in as": doc.Find(`[data-testid="signed-in-as"] .visually-hidden`).Text(),
		"sign out":     doc.Find(`[data-testid="sign-out"]`).Text(),
		"footer":       doc.Find("footer").Text(),
	} {
		if !strings.HasPrefix(got, "«") || !strings.HasSuffix(got, "»") {
			t.Errorf("%s: %q is not the catalogue's text", where, got)
		}
	}
	if got := doc.Find("title").Text(); got != "«Queue · Countersign»" {
		t.Errorf("title %q", got)
	}
}
