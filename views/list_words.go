package views

import "strings"

// joinSentences joins short phrases into one line: "a; b; c".
func joinSentences(s []string) string { return strings.Join(s, "; ") }

// ArgField is one labelled value: an argument ("Amount", "$34.50"), a fact
// the assistant read, or a technical detail (Key names it for tests).
type ArgField struct {
	Key   string
	Label string
	Value string
}
