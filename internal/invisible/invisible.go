// Package invisible finds the characters a person cannot see, or that
// change the direction text is read in, so that what is sent to a business
// system is what a person read: zero-width spaces and joiners, bidi
// embeddings, overrides and isolates, marks such as LRM and RLM, the byte
// order mark, the soft hyphen, control characters, Hangul fillers, the
// braille blank and every other default-ignorable code point. Arguments
// carrying one are refused (internal/adapter); values that came from a
// system and carry one are shown as a visible mark (views).
package invisible

import (
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/runenames"
)

// Found is the first hidden character of a text.
type Found struct {
	Rune rune
	// Position counts characters from 1.
	Position int
}

// Code names the character as U+XXXX.
func (f Found) Code() string { return fmt.Sprintf("U+%04X", f.Rune) }

// Name is the character's Unicode name ("ZERO WIDTH SPACE").
func (f Found) Name() string {
	n := runenames.Name(f.Rune)
	switch {
	case unicode.Is(unicode.Cc, f.Rune):
		return "control character"
	case n == "" || strings.HasPrefix(n, "<"):
		return "unnamed character"
	}
	return n
}

// Hidden reports whether r is a character a person cannot see or that
// changes the reading direction. Newlines and tabs are hidden unless
// multiline says the text may hold them.
func Hidden(r rune, multiline bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !multiline
	case r == 0xFE0E || r == 0xFE0F:
		// Text and emoji presentation selectors only choose how the
		// character before them is drawn; they hide nothing.
		return false
	case r == 0x2800:
		// The braille pattern blank is a symbol that draws nothing.
		return true
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// Find returns the first hidden character of s, if any.
func Find(s string, multiline bool) (Found, bool) {
	i := 0
	for _, r := range s {
		i++
		if Hidden(r, multiline) {
			return Found{Rune: r, Position: i}, true
		}
	}
	return Found{}, false
}

// NormaliseSpaces turns every space separator other than the plain space
// (no-break spaces, en and em spaces, the ideographic space, …) into a
// plain space: they look alike, so the text sent is the text read.
func NormaliseSpaces(s string) string {
	if !strings.ContainsFunc(s, otherSpace) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if otherSpace(r) {
			return ' '
		}
		return r
	}, s)
}

func otherSpace(r rune) bool { return r != ' ' && unicode.Is(unicode.Zs, r) }

// Show returns s with every hidden character (newlines and tabs kept)
// written as a visible mark such as ⟨U+200B⟩, and whether it had any.
func Show(s string) (string, bool) {
	if !strings.ContainsFunc(s, func(r rune) bool { return Hidden(r, true) }) {
		return s, false
	}
	var b strings.Builder
	for _, r := range s {
		if Hidden(r, true) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String(), true
}
