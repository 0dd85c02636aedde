package views

// bdi isolates a value inside a catalogue sentence (an e-mail address, a
// reference) the way <bdi> does in markup: between U+2068 FIRST STRONG
// ISOLATE and U+2069 POP DIRECTIONAL ISOLATE, so Latin data keeps its own
// direction in a right-to-left sentence and does not reorder the words
// around it.
func bdi(s string) string {
	if s == "" {
		return s
	}
	return "\u2068" + s + "\u2069"
}
