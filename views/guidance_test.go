package views

import (
	"bytes"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestGuidanceRendersASafeSubset: paragraphs, lists, emphasis, code and
// links render as elements; HTML in the source stays text, and a link to
// anything but http(s), mailto or this site is not a link.
func TestGuidanceRendersASafeSubset(t *testing.T) {
	src := "Deciding a **refund**\n\n1. Find the order with `get_order`.\n2. Ask *why*; see [the policy](https://example.com/refunds).\n\n" +
		"- one <script>alert(1)</script>\n- [bad](javascript:alert(1)) and [here](/policies)\n\nsnake_case_name stays _as it is_ here."
	var buf bytes.Buffer
	if err := GuidanceText(ParseGuidance(src)).Render(t.Context(), &buf); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		t.Fatal(err)
	}
	g := doc.Find(`[data-testid="guidance"]`)
	checks := []struct {
		sel, want string
	}{
		{"p strong", "refund"},
		{"ol > li code", "get_order"},
		{"ol > li em", "why"},
		{`ol > li a[href="https://example.com/refunds"][rel="noopener noreferrer"]`, "the policy"},
		{`ul > li a[href="/policies"]`, "here"},
		{"p:last-child em", "as it is"},
	}
	for _, c := range checks {
		if got := g.Find(c.sel).Text(); got != c.want {
			t.Errorf("%s = %q, want %q", c.sel, got, c.want)
		}
	}
	if n := g.Find("ol > li").Length(); n != 2 {
		t.Errorf("%d numbered items, want 2", n)
	}
	if g.Find("script").Length() != 0 || !strings.Contains(html, "&lt;script&gt;") {
		t.Errorf("HTML in the guidance was not escaped:\n%s", html)
	}
	if g.Find(`a[href^="javascript"]`).Length() != 0 || !strings.Contains(g.Find("ul > li").First().Next().Text(), "bad (javascript:alert(1))") {
		t.Errorf("a javascript: link was rendered:\n%s", html)
	}
	if !strings.Contains(g.Text(), "snake_case_name") || g.Find("pre").Length() != 0 {
		t.Errorf("a word with underscores was read as emphasis, or a pre is left:\n%s", html)
	}
}

// TestSafeHrefRefusesPathsBrowsersReadAsAnotherSite: "/\evil" and
// "/<TAB>/evil" become "//evil" in a browser; neither is a link.
func TestSafeHrefRefusesPathsBrowsersReadAsAnotherSite(t *testing.T) {
	for _, href := range []string{`/\evil.example`, "/\t/evil.example", "/\n/evil.example", "/\x7f/x", "//evil.example"} {
		if safeHref(href) {
			t.Errorf("safeHref(%q) = true, want false", href)
		}
	}
	for _, href := range []string{"/policies", "/tasks?state=active#top", "https://example.com/a", "mailto:a@example.com"} {
		if !safeHref(href) {
			t.Errorf("safeHref(%q) = false, want true", href)
		}
	}
}
