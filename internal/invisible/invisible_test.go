package invisible_test

import (
	"testing"

	"countersign/internal/invisible"
)

// TestFindCountsCharacters: the position is in characters, not bytes, so a
// person can find it in what they typed.
func TestFindCountsCharacters(t *testing.T) {
	f, ok := invisible.Find("Torstraße\u200b 112", false)
	if !ok || f.Rune != 0x200B || f.Position != 10 || f.Code() != "U+200B" || f.Name() != "ZERO WIDTH SPACE" {
		t.Errorf("Find = %+v, %v; want U+200B ZERO WIDTH SPACE at 10", f, ok)
	}
	if f, ok := invisible.Find("line one\nline two\ttab", true); ok {
		t.Errorf("a multiline text's newline and tab were found hidden: %+v", f)
	}
	if f, ok := invisible.Find("a\u0007b", true); !ok || f.Name() != "control character" {
		t.Errorf("a bell character: %+v, %v", f, ok)
	}
}

// TestShowMarksEveryHiddenCharacter: each hidden character becomes a
// visible mark; newlines stay.
func TestShowMarksEveryHiddenCharacter(t *testing.T) {
	got, hidden := invisible.Show("\u202eabc\u200d\nd\u2066")
	if want := "⟨U+202E⟩abc⟨U+200D⟩\nd⟨U+2066⟩"; got != want || !hidden {
		t.Errorf("Show = %q, %v; want %q, true", got, hidden, want)
	}
	if got, hidden := invisible.Show("plain text"); got != "plain text" || hidden {
		t.Errorf("Show(plain) = %q, %v", got, hidden)
	}
	if got := invisible.NormaliseSpaces("a\u00a0b\u2009c\u3000d"); got != "a b c d" {
		t.Errorf("NormaliseSpaces = %q", got)
	}
}
