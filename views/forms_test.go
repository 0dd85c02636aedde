package views

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// formTag is an opening <form …> tag of a template, attributes across lines
// included.
var formTag = regexp.MustCompile(`(?s)<form\b[^>]*>`)

// TestEveryFormSaysHowItIsSent: a form with no method is sent as a GET, and
// a form that carries the CSRF token would put it in the address (history,
// logs, the Referer of the next page) — which happens to a form a script
// means to take over (a passkey's) when it is pressed before the script
// has bound it. So every form in every template names its method, and a
// form carrying _csrf is a POST.
func TestEveryFormSaysHowItIsSent(t *testing.T) {
	files, err := filepath.Glob("*.templ")
	if err != nil || len(files) == 0 {
		t.Fatalf("no templates found: %v", err)
	}
	forms := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(src)
		for _, loc := range formTag.FindAllStringIndex(text, -1) {
			forms++
			tag := text[loc[0]:loc[1]]
			line := 1 + strings.Count(text[:loc[0]], "\n")
			body := text[loc[1]:]
			if end := strings.Index(body, "</form>"); end >= 0 {
				body = body[:end]
			}
			switch {
			case !strings.Contains(tag, `method="post"`) && !strings.Contains(tag, `method="get"`):
				t.Errorf("%s:%d: a form without method=\"post\" or method=\"get\": %s", f, line, oneLine(tag))
			case strings.Contains(tag, `method="get"`) && strings.Contains(body, `"_csrf"`):
				t.Errorf("%s:%d: a GET form carries the CSRF token into the address", f, line)
			}
		}
	}
	if forms < 20 {
		t.Fatalf("found %d forms in the templates; the pattern no longer finds them", forms)
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
