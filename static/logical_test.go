package static_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// physical matches a declaration that names a side of the screen rather
// than of the text: on a right-to-left page it stays on the left.
var physical = regexp.MustCompile(`^(?:(?:margin|padding|border)-(?:left|right)[\w-]*|left|right)\s*:|` +
	`^(?:text-align|float|clear)\s*:\s*(?:left|right)\b`)

// TestTheStylesheetNamesNoPhysicalSide: app.css is written in logical
// properties (margin-inline-start, text-align: start…), so a page with
// dir="rtl" mirrors by itself; a physical side is allowed only in a rule
// whose selector says the direction ([dir="rtl"], [dir="ltr"]).
func TestTheStylesheetNamesNoPhysicalSide(t *testing.T) {
	css, err := os.ReadFile("app.css")
	if err != nil {
		t.Fatal(err)
	}
	if found := physicalSides(string(css)); len(found) > 0 {
		t.Errorf("app.css names a physical side outside a [dir] rule (write it with inline-start/-end, or start/end):\n%s",
			strings.Join(found, "\n"))
	}
	for _, bad := range []string{".x { margin-left: 1rem }", "@media (max-width: 40rem) { .x { text-align: right; } }",
		".x { color: red; border-right-width: 2px }", ".x{left:0}"} {
		if len(physicalSides(bad)) == 0 {
			t.Errorf("%q: not found", bad)
		}
	}
	for _, good := range []string{`[dir="rtl"] .x { text-align: right }`, ".x { margin-inline-start: 1rem; text-align: end; inset-inline-start: 0 }",
		".x { align-items: flex-end }"} {
		if found := physicalSides(good); len(found) > 0 {
			t.Errorf("%q: found %q", good, found)
		}
	}
}

// physicalSides lists the declarations of css that name a physical side,
// as "selector { declaration }", unless their rule's selector names a
// [dir].
func physicalSides(css string) []string {
	css = regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(css, "")
	var found []string
	var selectors []string // the open blocks' selectors, outermost first
	start := 0
	for i, r := range css {
		if r != '{' && r != '}' && r != ';' {
			continue
		}
		text := strings.TrimSpace(css[start:i])
		start = i + 1
		if r == '{' {
			selectors = append(selectors, text)
			continue
		}
		if n := len(selectors); n > 0 && !strings.Contains(selectors[n-1], "[dir") && physical.MatchString(text) {
			found = append(found, selectors[n-1]+" { "+text+" }")
		}
		if r == '}' && len(selectors) > 0 {
			selectors = selectors[:len(selectors)-1]
		}
	}
	return found
}
