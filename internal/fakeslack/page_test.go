package fakeslack

import "testing"

// TestLinkifyEscapesThenLinks: the fake's page shows Slack's link markup
// as links and code spans as code (no link inside), nothing else of the
// text as HTML.
func TestLinkifyEscapesThenLinks(t *testing.T) {
	for in, want := range map[string]string{
		"Open <https://c.example/queue/inv_1|in the console>.": `Open <a href="https://c.example/queue/inv_1">in the console</a>.`,
		`<script>alert(1)</script>`:                            `&lt;script&gt;alert(1)&lt;/script&gt;`,
		`<javascript:alert(1)|x>`:                              `&lt;javascript:alert(1)|x&gt;`,
		"Refund &lt;b&gt; &amp; more":                          "Refund &lt;b&gt; &amp; more",
		"by `Sam *A*` in Slack":                                "by <code>Sam *A*</code> in Slack",
		"`&lt;https://e.example|x&gt;`":                        "<code>&lt;https://e.example|x&gt;</code>",
	} {
		if got := string(linkify(in)); got != want {
			t.Errorf("linkify(%q) = %q, want %q", in, got, want)
		}
	}
}
