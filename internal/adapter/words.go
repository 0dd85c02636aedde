package adapter

import (
	"strings"
	"unicode"
)

// fillers are words that name nothing in particular in any system.
var fillers = map[string]bool{
	"my": true, "our": true, "your": true, "the": true, "an": true, "for": true, "on": true, "of": true,
	"to": true, "with": true, "and": true, "in": true, "at": true, "from": true, "that": true, "this": true,
	"one": true, "it": true, "is": true,
}

// Describes reports whether every meaningful word of ref, a customer's
// words for an object, is one of the object's terms, a word of one, or the
// plural of one; common fillers ("my", "the", "for") and the words in extra (a system's
// own nouns such as "plan" or "order") name nothing in particular and are
// passed over. A reference of such words only ("my plan") describes every
// object, so it resolves when the customer has exactly one. It never fails.
func Describes(ref string, terms []string, extra map[string]bool) bool {
	known := map[string]bool{}
	for _, t := range terms {
		known[strings.ToLower(t)] = true
		for _, w := range RefWords(t) {
			known[w] = true
		}
	}
	for _, w := range RefWords(ref) {
		if fillers[w] || extra[w] || known[w] || (strings.HasSuffix(w, "s") && known[strings.TrimSuffix(w, "s")]) {
			continue
		}
		return false
	}
	return true
}

// RefWords splits text into lower-case words as Describes compares them,
// keeping ids, domains and SKUs ("acme.example", "lamp-wal-01", "ord_3f2a")
// whole and dropping one-letter words that are not numbers.
func RefWords(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' && r != '-' && r != '_'
	}) {
		f = strings.Trim(f, ".-_")
		if len([]rune(f)) > 1 || (f != "" && unicode.IsDigit([]rune(f)[0])) {
			out = append(out, f)
		}
	}
	return out
}
