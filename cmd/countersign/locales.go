package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"countersign/internal/locale"
)

const localesUsage = `countersign locales check DIR
countersign locales template [-lang TAG] [-console] [-out FILE]

check reads the message catalogue files of DIR (the console's -locales-dir:
<tag>.json or <area>.<tag>.json, e.g. cy.json) as the console would at
start, and reports for each its language, how many messages it holds and
every problem: ids English lacks (stale), ids a new language lacks,
named parameters that differ from English's, plural forms the
language's CLDR rule needs. Exit status 0 only when the console would
start with every file.
template writes a catalogue to start a translation from: English's
customer-facing texts, or -lang's (to override some of a shipped
language's texts), or with -console the console's English texts (to
override them in an en file; the console is English only). template does
not replace an existing -out.
`

// runLocales is `countersign locales`.
func runLocales(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "check":
			return runLocalesCheck(args[1:], stdout, stderr)
		case "template":
			return runLocalesTemplate(args[1:], stdout, stderr)
		}
	}
	fmt.Fprint(stderr, localesUsage)
	return 2
}

// installLocales lays the catalogue files of -locales-dir over the shipped
// ones and makes the result the process's: the languages they add are
// offered to customers, their texts shown. A file that would be refused
// stops the start, naming the file, the message and the fix.
func (c config) installLocales(log *slog.Logger) error {
	if c.LocalesDir == "" {
		return nil
	}
	cat, err := locale.Load(locale.WithFiles(os.DirFS(c.LocalesDir)))
	if err != nil {
		return fmt.Errorf("-locales-dir %s: the console does not start until every catalogue file is complete (countersign locales check %s lists the same):\n%w",
			c.LocalesDir, c.LocalesDir, err)
	}
	locale.Install(cat)
	log.Info("languages offered to customers", "languages", tagNames(cat.Offered()), "locales_dir", c.LocalesDir)
	return nil
}

func runLocalesCheck(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprint(stderr, localesUsage)
		return 2
	}
	dir := args[0]
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		fmt.Fprintf(stderr, "locales check: %s is not a folder of catalogue files\n", dir)
		return 2
	}
	r := locale.Shipped().Check(os.DirFS(dir))
	if len(r.Files) == 0 {
		fmt.Fprintf(stdout, "no catalogue files (*.json) in %s: customers are offered the shipped languages, %s\n", dir, tagNames(locale.Shipped().Offered()))
		return 0
	}
	refused := 0
	for _, f := range r.Files {
		fmt.Fprintf(stdout, "%s: %s\n", f.Name, describeFile(f))
		for _, p := range f.Problems {
			fmt.Fprintf(stdout, "  %s\n", p.Error())
		}
		switch {
		case f.Refused():
			refused++
			fmt.Fprintln(stdout, "  refused: the console would not start with it")
		case f.New:
			fmt.Fprintf(stdout, "  complete: offered to customers, %s\n", directionWords(f.Tag))
		default:
			fmt.Fprintln(stdout, "  ok: its texts replace the shipped ones")
		}
	}
	files := fmt.Sprintf("%d files", len(r.Files))
	if len(r.Files) == 1 {
		files = "1 file"
	}
	fmt.Fprintf(stdout, "%s, %d refused\n", files, refused)
	if refused > 0 {
		return 1
	}
	return 0
}

// describeFile is a file's language and what it does: "cy (Welsh), a new
// language: 61 messages".
func describeFile(f locale.FileReport) string {
	if f.Tag == language.Und {
		return "no language"
	}
	what := "overrides shipped texts"
	if f.New {
		what = "a new language"
	}
	count := fmt.Sprintf("%d messages", f.Messages)
	if f.Messages == 1 {
		count = "1 message"
	}
	return fmt.Sprintf("%s (%s), %s: %s", f.Tag, display.English.Tags().Name(f.Tag), what, count)
}

func directionWords(t language.Tag) string {
	if locale.Direction(t) == locale.RTL {
		return "pages laid out right to left"
	}
	return "pages laid out left to right"
}

func tagNames(tags []language.Tag) string {
	s := make([]string, len(tags))
	for i, t := range tags {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

func runLocalesTemplate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("locales template", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, localesUsage+"\nFlags:\n"); fs.PrintDefaults() }
	lang := fs.String("lang", "en", "the shipped language whose texts to write")
	console := fs.Bool("console", false, "write the console's English texts instead (to override them in an en file)")
	out := fs.String("out", "", "where to write the catalogue; empty writes it to standard output")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		return 2
	}
	cat := locale.Shipped()
	tag, err := language.Parse(*lang)
	if *console {
		tag, err = language.English, nil
	}
	if err != nil || len(cat.Messages(tag)) == 0 {
		fmt.Fprintf(stderr, "locales template: -lang %q: want a shipped language, one of %s\n", *lang, tagNames(cat.Offered()))
		return 2
	}
	file, err := templateFile(cat.Messages(tag), *console)
	if err == nil {
		if *out == "" {
			_, err = stdout.Write(file)
		} else {
			err = writeNew(*out, file)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "locales template: %v\n", err)
		return 1
	}
	if *console || tag != language.English {
		fmt.Fprintln(stderr, "keep only the texts you change, each {{.Name}} as it is, in a file of -locales-dir named for the language; then: countersign locales check DIR")
	} else {
		fmt.Fprintln(stderr, "translate every text, keeping each {{.Name}} as it is and giving a counted text every plural form its language uses, into DIR/<tag>.json; then: countersign locales check DIR")
	}
	return 0
}

// templateFile is a catalogue file of msgs, as go-i18n reads it: a plain
// text as a string, a counted one as its plural forms. console chooses
// the console's texts, otherwise the customers' are written.
func templateFile(msgs []*i18n.Message, console bool) ([]byte, error) {
	out := map[string]any{}
	for _, m := range msgs {
		if locale.EnglishOnly(m.ID) != console {
			continue
		}
		forms := map[string]string{}
		for name, text := range map[string]string{"zero": m.Zero, "one": m.One, "two": m.Two, "few": m.Few, "many": m.Many} {
			if text != "" {
				forms[name] = text
			}
		}
		if len(forms) == 0 {
			out[m.ID] = m.Other
			continue
		}
		forms["other"] = m.Other
		out[m.ID] = forms
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
