package locale

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"text/template"

	"github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

// EnglishOnly reports whether a message id is one of the staff console's
// texts (console.*): the console is shown in English only, so other
// languages need not carry them, and a file that does is refused (the
// text would never show).
func EnglishOnly(id string) bool { return strings.HasPrefix(id, "console.") }

// Problem is one reason an installation's catalogue file would be refused:
// the file, the message (empty for the whole file or language), what is
// wrong and the fix.
type Problem struct {
	File    string
	ID      string
	Problem string
	Fix     string
}

func (p Problem) Error() string {
	s := p.File + ": "
	if p.ID != "" {
		s += fmt.Sprintf("message %q: ", p.ID)
	}
	s += p.Problem
	if p.Fix != "" {
		s += " (fix: " + p.Fix + ")"
	}
	return s
}

// Report is what Check found in an installation's catalogue files, file
// by file in name order.
type Report struct {
	Files  []FileReport
	parsed []*i18n.MessageFile
}

// FileReport is one file: the language its name says, its messages and
// the problems that would refuse it.
type FileReport struct {
	// Name is the file's name in the directory.
	Name string
	// Tag is the language of the name (cy.json, pages.cy.json);
	// language.Und when the name says none.
	Tag language.Tag
	// Messages is how many messages the file holds.
	Messages int
	// New says its language is not shipped: the language's files together
	// must hold every customer-facing English message.
	New bool
	// Missing are the English ids a new language's files lack, reported
	// on the language's first file.
	Missing []string
	// Problems are every reason the file would be refused.
	Problems []Problem
}

// Refused reports whether the file would stop the console from starting.
func (f FileReport) Refused() bool { return len(f.Problems) > 0 }

// Err is nil when every file would load, and otherwise every problem of
// every file, one a line (errors.As finds each Problem).
func (r Report) Err() error {
	var all []error
	for _, f := range r.Files {
		for _, p := range f.Problems {
			all = append(all, p)
		}
	}
	return errors.Join(all...)
}

// Check is what laying the catalogue files at the root of fsys (*.json,
// named <tag>.json or <area>.<tag>.json) over c would find. A file is
// refused when its name says no language, it does not parse, or a message
// in it: is not in English (stale), is a console text in a language other
// than English, uses other named parameters than English's, lacks a plural
// form CLDR's rule for its language asks for (counts such as 3 or 6 in
// Welsh), has no text, or is given by two files. A language c does not
// hold is new, and refused until its files hold every English message a
// customer may read.
func (c *Catalogue) Check(fsys fs.FS) Report {
	var r Report
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		r.Files = append(r.Files, FileReport{Name: ".", Problems: []Problem{{File: ".", Problem: err.Error()}}})
		return r
	}
	english := c.files[language.English]
	first := map[language.Tag]int{}              // the language's first file, in r.Files
	held := map[language.Tag]map[string]string{} // id → the file that gives it
	// A language whose file says nothing yet (it does not parse, names the
	// pseudo-locale or a language without a plural rule) is not also told
	// it lacks every message.
	unread := map[language.Tag]bool{}
	for _, name := range names {
		fr := FileReport{Name: name}
		fr.Tag, err = tagOfName(name)
		if err != nil {
			fr.Problems = append(fr.Problems, Problem{File: name, Problem: err.Error(),
				Fix: "name the file <tag>.json or <area>.<tag>.json with the language's BCP 47 tag, e.g. cy.json or pages.cy.json"})
			r.Files = append(r.Files, fr)
			continue
		}
		_, shipped := c.files[fr.Tag]
		fr.New = !shipped
		if _, ok := first[fr.Tag]; !ok {
			first[fr.Tag] = len(r.Files)
			held[fr.Tag] = map[string]string{}
		}
		f, err := parseFile(fsys, name)
		switch {
		case err != nil:
			unread[fr.Tag] = true
			fr.Problems = append(fr.Problems, Problem{File: name, Problem: "does not parse: " + err.Error(),
				Fix: `write one JSON object of message id to text, {"id": "text"}, a counted text as {"one": "…", "other": "…"}, as countersign locales template does`})
		case fr.Tag == Pseudo:
			unread[fr.Tag] = true
			fr.Problems = append(fr.Problems, Problem{File: name, Problem: Pseudo.String() + " is the tests' pseudo-locale",
				Fix: "give the file the tag of a real language"})
		default:
			f.Tag = fr.Tag
			fr.Messages = len(f.Messages)
			forms, err := pluralForms(fr.Tag)
			if err != nil {
				unread[fr.Tag] = true
				fr.Problems = append(fr.Problems, Problem{File: name, Problem: err.Error(),
					Fix: "use the language's BCP 47 tag (cy, he, pt-BR), which names its plural rule"})
				break
			}
			sort.Slice(f.Messages, func(i, j int) bool { return f.Messages[i].ID < f.Messages[j].ID })
			for _, m := range f.Messages {
				if other, ok := held[fr.Tag][m.ID]; ok {
					fr.Problems = append(fr.Problems, Problem{File: name, ID: m.ID, Problem: "is also given in " + other,
						Fix: "keep it in one file"})
					continue
				}
				held[fr.Tag][m.ID] = name
				fr.Problems = append(fr.Problems, checkMessage(name, fr.Tag, m, english[m.ID], forms)...)
			}
			r.parsed = append(r.parsed, f)
		}
		r.Files = append(r.Files, fr)
	}
	for tag, i := range first {
		if !r.Files[i].New || unread[tag] {
			continue
		}
		var missing []string
		for id := range english {
			if _, ok := held[tag][id]; !ok && !EnglishOnly(id) {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			continue
		}
		sort.Strings(missing)
		fr := &r.Files[i]
		fr.Missing = missing
		fr.Problems = append(fr.Problems, Problem{File: fr.Name,
			Problem: fmt.Sprintf("%s is not shipped, and its files lack %d of the English messages a customer may read: %s",
				tag, len(missing), strings.Join(missing, ", ")),
			Fix: "translate each one (countersign locales template writes every English text to start from); a language is offered to customers only once complete"})
	}
	return r
}

// checkMessage is what is wrong with one message m of a file in tag, en
// being English's message of its id (nil when English has none).
func checkMessage(file string, tag language.Tag, m, en *i18n.Message, forms map[string]int) []Problem {
	bad := func(problem, fix string) []Problem {
		return []Problem{{File: file, ID: m.ID, Problem: problem, Fix: fix}}
	}
	if en == nil {
		return bad("is not in the English catalogue, so no page shows it (stale or misspelt)",
			"remove it, or correct its id (countersign locales template lists every id)")
	}
	if base, _ := tag.Base(); EnglishOnly(m.ID) && base.String() != "en" {
		return bad("is a console text: the console is shown in English only",
			"remove it; to change a console text, override it in an English file such as console.en.json")
	}
	var out []Problem
	for form, text := range formsOf(m) {
		if _, err := template.New(m.ID).Parse(text); err != nil {
			out = append(out, bad(fmt.Sprintf("its %q text does not parse: %v", form, err),
				"write each parameter as {{.Name}}, with English's names")...)
		}
	}
	if have, want := placeholders(m), placeholders(en); have != want {
		out = append(out, bad(fmt.Sprintf("uses the parameters [%s]; English uses [%s]", have, want),
			"use exactly English's named parameters, spelt the same (a form may leave one out, the message as a whole may not)")...)
	}
	need := map[string]int{"other": 0}
	if counted(en) {
		need = forms
	}
	var lacking []string
	for form, n := range need {
		if formsOf(m)[form] == "" {
			lacking = append(lacking, fmt.Sprintf("%s (e.g. %d)", form, n))
		}
	}
	if len(lacking) > 0 {
		sort.Strings(lacking)
		if !counted(en) {
			return append(out, bad("has no text", `give it as a string: "id": "text"`)...)
		}
		out = append(out, bad(fmt.Sprintf("lacks the plural forms CLDR's rule for %s gives counts: %s", tag, strings.Join(lacking, ", ")),
			fmt.Sprintf("give every form %s's rule uses: %s", tag, strings.Join(formNames(forms), ", ")))...)
	}
	return out
}

// tagOfName is the language a catalogue file's name says: the part
// before .json, after the last other dot.
func tagOfName(name string) (language.Tag, error) {
	base := strings.TrimSuffix(path.Base(name), ".json")
	if i := strings.LastIndex(base, "."); i >= 0 {
		base = base[i+1:]
	}
	t, err := language.Parse(base)
	if err != nil || t == language.Und {
		return language.Und, fmt.Errorf("the name does not say a language: %q is not a BCP 47 tag", base)
	}
	return t, nil
}

// counted reports whether English's message has plural forms: a text the
// pages give a count.
func counted(m *i18n.Message) bool {
	return m.Zero != "" || m.One != "" || m.Two != "" || m.Few != "" || m.Many != ""
}

// formsOf are a message's texts by CLDR plural form, the empty ones too.
func formsOf(m *i18n.Message) map[string]string {
	return map[string]string{"zero": m.Zero, "one": m.One, "two": m.Two, "few": m.Few, "many": m.Many, "other": m.Other}
}

func formNames(forms map[string]int) []string {
	order := map[string]int{"zero": 0, "one": 1, "two": 2, "few": 3, "many": 4, "other": 5}
	names := make([]string, 0, len(forms))
	for f := range forms {
		names = append(names, f)
	}
	sort.Slice(names, func(i, j int) bool { return order[names[i]] < order[names[j]] })
	return names
}
