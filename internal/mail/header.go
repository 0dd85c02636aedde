package mail

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// wordText is the most encoded text one encoded-word carries: with its
// "=?utf-8?q?" and "?=" and a header's name ("Subject: ") before it, a
// header line stays within the 76 characters RFC 2047 allows a line that
// holds an encoded-word.
const wordText = 55

// headerText is text as a header's value: as it is when it is printable
// ASCII, else as RFC 2047 encoded-words (Q encoding, UTF-8), one per
// folded line, each whole characters, so a subject in Arabic or a
// shop's name with é or ß arrives as written and no line runs long.
func headerText(text string) string {
	if ascii(text) {
		return text
	}
	var words []string
	var w strings.Builder
	for _, r := range text {
		enc := qChar(r)
		if w.Len()+len(enc) > wordText {
			words = append(words, "=?utf-8?q?"+w.String()+"?=")
			w.Reset()
		}
		w.WriteString(enc)
	}
	words = append(words, "=?utf-8?q?"+w.String()+"?=")
	return strings.Join(words, "\r\n ")
}

// qChar is r in the Q encoding as a display name may carry it (RFC 2047
// 5(3)): letters, digits and !*+-/ as they are, a space as "_", every
// other byte as =XX.
func qChar(r rune) string {
	switch {
	case r == ' ':
		return "_"
	case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!*+-/", r)):
		return string(r)
	}
	var b strings.Builder
	buf := make([]byte, utf8.UTFMax)
	for _, c := range buf[:utf8.EncodeRune(buf, r)] {
		fmt.Fprintf(&b, "=%02X", c)
	}
	return b.String()
}

// ascii says whether text is printable ASCII, which a header carries as
// it is.
func ascii(text string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] < ' ' || text[i] > '~' {
			return false
		}
	}
	return true
}
