package views

import (
	"slices"
	"unicode"
	"unicode/utf8"
)

// ErrorItem is one problem of a form as its error summary lists it: the
// message, linked to the id of the field it is about.
type ErrorItem struct {
	FieldID string
	Message string
}

// ErrorField names a form field for an error summary: its form name (the
// key of FieldErrors), the id of its input, which the summary links to,
// and a short label that says which field a message is about when the
// message does not ("Approval deadline: use a number of hours …").
type ErrorField struct {
	Name  string
	ID    string
	Label string
}

// Summary lists the errors for an error summary in the order of fields,
// each linked to its input; an error of a field not listed comes last, in
// name order, linked to its own message (FieldError's id), so no error is
// ever left out of the summary.
func (f FieldErrors) Summary(fields ...ErrorField) []ErrorItem {
	var out []ErrorItem
	seen := map[string]bool{}
	for _, x := range fields {
		if msg, ok := f[x.Name]; ok && !seen[x.Name] {
			seen[x.Name] = true
			if x.Label != "" {
				msg = x.Label + ": " + msg
			}
			out = append(out, ErrorItem{FieldID: x.ID, Message: upperFirst(msg)})
		}
	}
	rest := make([]string, 0, len(f))
	for name := range f {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	for _, name := range rest {
		out = append(out, ErrorItem{FieldID: name + "-error", Message: upperFirst(f[name])})
	}
	return out
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
