package kit

import "unicode"

// LowerFirst lower-cases the first letter of a title for use inside a
// sentence, unless the first word is an acronym ("SMS a customer").
func LowerFirst(s string) string {
	r := []rune(s)
	if len(r) == 0 || (len(r) > 1 && unicode.IsUpper(r[1])) {
		return s
	}
	r[0] = unicode.ToLower(r[0])
	return string(r)
}
