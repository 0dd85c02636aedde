package slackbot

import "testing"

// TestLiteralTextIsOneCodeSpan: text put in a message is one inline code
// span on one line: Slack's entities for &, < and >, marks for what cannot
// be seen and for what would end the span or the line, as the console
// shows hidden characters.
func TestLiteralTextIsOneCodeSpan(t *testing.T) {
	for in, want := range map[string]string{
		"Refund <b>&":            "`Refund &lt;b&gt;&amp;`",
		"pay\u200bpal":           "`pay⟨U+200B⟩pal`",
		"abc\u202edcba":          "`abc⟨U+202E⟩dcba`",
		"*b* _i_ ~s~":            "`*b* _i_ ~s~`",
		"a`b":                    "`a⟨U+0060⟩b`",
		"one\n> two\r\n":         "`one⟨U+000A⟩&gt; two⟨U+000D⟩⟨U+000A⟩`",
		"plain text, no changes": "`plain text, no changes`",
		"":                       "",
	} {
		if got := lit(in); got != want {
			t.Errorf("lit(%q) = %q, want %q", in, got, want)
		}
	}
}
