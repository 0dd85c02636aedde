package slackbot

import "testing"

// TestTextShowsWhatCannotBeSeen: text put in a message escapes Slack's
// markup and marks characters a person cannot see, as the console does.
func TestTextShowsWhatCannotBeSeen(t *testing.T) {
	for in, want := range map[string]string{
		"Refund <b>&":            "Refund &lt;b&gt;&amp;",
		"pay\u200bpal":           "pay⟨U+200B⟩pal",
		"abc\u202edcba":          "abc⟨U+202E⟩dcba",
		"plain text, no changes": "plain text, no changes",
	} {
		if got := esc(in); got != want {
			t.Errorf("esc(%q) = %q, want %q", in, got, want)
		}
	}
}
