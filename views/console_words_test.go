package views

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/a-h/templ"
	"golang.org/x/text/language"

	"countersign/internal/locale"
	"countersign/internal/locale/pseudotest"
)

// installMarkedConsole installs, until the test ends, an English override
// of every console text marked ⟦…⟧, so text of the console not from the
// catalogue shows as pseudotest's strays.
func installMarkedConsole(t *testing.T) {
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

// TestTheConsoleFrameComesFromTheCatalogue: every text of the console's
// frame (title, skip link, brand, navigation's name, who is signed in,
// sign out, footer) is a console.* message, so an installation's English
// override of each shows, and none is left written in the page.
func TestTheConsoleFrameComesFromTheCatalogue(t *testing.T) {
	installMarkedConsole(t)
	p := Page{Title: "Queue", User: &User{Name: "Ada", RoleLabel: "agent"}, Nav: []NavItem{{Label: "Queue", Href: "/queue"}}}
	doc, html := renderDoc(t, Layout(p))
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
		if !strings.HasPrefix(got, "⟦") || !strings.HasSuffix(got, "⟧") {
			t.Errorf("%s: %q is not the catalogue's text", where, got)
		}
	}
	if got := doc.Find("title").Text(); got != "⟦Queue · Countersign⟧" {
		t.Errorf("title %q", got)
	}
	if strays := pseudotest.Strays(html, "Queue", "Ada", "agent"); len(strays) > 0 {
		t.Errorf("the frame writes text of its own:\n%s", strings.Join(strays, "\n"))
	}
}

// TestTheConsolesCommonPartsComeFromTheCatalogue: the parts every console
// page shares (a quote's lines for staff, the keyboard shortcuts, the
// "cannot be undone" badge, the error summary) write no text of their
// own: each is a console.* message.
func TestTheConsolesCommonPartsComeFromTheCatalogue(t *testing.T) {
	installMarkedConsole(t)
	quote := QuoteView{Title: "Change the address", Effective: "May 1", Lines: []QuoteLineView{
		{Label: "Address", From: "12 Long Street, Springfield, 12345", To: "99 Other Road, Shelbyville, 54321\u200b", Changed: true}}}
	data := []string{"Change the address", "May 1", "Address", "12 Long Street, Springfield, 12345",
		"99 Other Road, Shelbyville, 54321", "⟨U+200B⟩", "Enter", "Esc", "the field's message"}
	for name, c := range map[string]templ.Component{
		"quote":         Quote(quote),
		"shortcuts":     ShortcutsHelp(),
		"cannot undo":   CannotUndo(),
		"error summary": ErrorSummary([]ErrorItem{{FieldID: "reason", Message: "the field's message"}}),
	} {
		_, html := renderDoc(t, c)
		// The shortcuts' keys are keys, not words.
		html = strings.NewReplacer("<kbd>j</kbd>", "", "<kbd>k</kbd>", "", "<kbd>a</kbd>", "", "<kbd>r</kbd>", "", "<kbd>e</kbd>", "").Replace(html)
		if strays := pseudotest.Strays(html, data...); len(strays) > 0 {
			t.Errorf("%s writes text of its own:\n%s", name, strings.Join(strays, "\n"))
		}
	}
}

// consoleStrays is what of a console page is neither a console text nor
// data, its sentences read with the elements they hold (consoleSaid,
// consoleMarked: a <time>, a link, a <code>, words for screen readers, a
// <strong> word).
func consoleStrays(html string, data ...string) []string {
	return pseudotest.SentenceStrays(html, data...)
}
