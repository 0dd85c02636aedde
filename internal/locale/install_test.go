package locale_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"golang.org/x/text/language"

	"countersign/internal/locale"
)

// translated is a complete catalogue file in a new language: every
// English message a customer may read, marked, counted ones in all six
// plural forms (more than any language needs), drop left out.
func translated(t *testing.T, mark string, drop ...string) []byte {
	t.Helper()
	skip := map[string]bool{}
	for _, id := range drop {
		skip[id] = true
	}
	out := map[string]any{}
	for _, m := range locale.Shipped().Messages(language.English) {
		if skip[m.ID] || locale.EnglishOnly(m.ID) {
			continue
		}
		text := mark + " " + m.Other
		if m.One == "" {
			out[m.ID] = text
			continue
		}
		out[m.ID] = map[string]string{"zero": text, "one": text, "two": text, "few": text, "many": text, "other": text}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// install loads the shipped catalogue with files laid over it and makes
// it the process's until the test ends.
func install(t *testing.T, files fstest.MapFS) *locale.Catalogue {
	t.Helper()
	c, err := locale.Load(locale.WithFiles(files))
	if err != nil {
		t.Fatal(err)
	}
	locale.Install(c)
	t.Cleanup(func() { locale.Install(nil) })
	return c
}

// TestAnInstalledLanguageIsOfferedWhenComplete: a complete Welsh file in
// the installation's directory makes Welsh a language customers are
// offered: the header chooses it, its six plural forms are used, and
// Supported lists it.
func TestAnInstalledLanguageIsOfferedWhenComplete(t *testing.T) {
	if got := locale.Decide(locale.Inputs{AcceptLanguage: "cy"}); got.String() != "en" {
		t.Fatalf("Welsh chosen before it is installed: %s", got)
	}
	cy := map[string]any{}
	if err := json.Unmarshal(translated(t, "[cy]"), &cy); err != nil {
		t.Fatal(err)
	}
	cy["order.items"] = map[string]string{"zero": "dim eitemau", "one": "{{.Count}} eitem", "two": "{{.Count}} eitem (dau)",
		"few": "{{.Count}} eitem (ychydig)", "many": "{{.Count}} eitem (llawer)", "other": "{{.Count}} eitem (eraill)"}
	raw, _ := json.Marshal(cy)
	c := install(t, fstest.MapFS{"cy.json": {Data: raw}})

	got := locale.Decide(locale.Inputs{AcceptLanguage: "cy-GB, en;q=0.5", Default: "fr"})
	if got.String() != "cy" || got.Source != locale.FromHeader || got.Dir != locale.LTR {
		t.Fatalf("Decide = %s from %s %s; want cy from header, ltr", got, got.Source, got.Dir)
	}
	if got := locale.Decide(locale.Inputs{Cookie: "de", AcceptLanguage: "cy"}); got.String() != "de" {
		t.Errorf("the switch no longer beats the header: %s", got)
	}
	l := c.For(got.Tag)
	for n, want := range map[int]string{0: "dim eitemau", 1: "1 eitem", 2: "2 eitem (dau)", 3: "3 eitem (ychydig)", 6: "6 eitem (llawer)", 4: "4 eitem (eraill)"} {
		if s := l.N("order.items", n, nil); s != want {
			t.Errorf("cy %d: %q; want %q", n, s, want)
		}
	}
	if s := l.T("language.switch.label", nil); s != "[cy] Language" {
		t.Errorf("a Welsh text: %q", s)
	}
	if want := []string{"en", "ar", "cy", "de", "es", "fr"}; tagList(locale.Supported()) != strings.Join(want, ",") {
		t.Errorf("Supported = %s; want %v", tagList(locale.Supported()), want)
	}
}

func tagList(tags []language.Tag) string {
	s := make([]string, len(tags))
	for i, t := range tags {
		s[i] = t.String()
	}
	return strings.Join(s, ",")
}

// TestAnIncompleteLanguageIsRefused: a new language missing messages is
// refused with the file, every missing id and the fix, and is not offered.
func TestAnIncompleteLanguageIsRefused(t *testing.T) {
	files := fstest.MapFS{"cy.json": {Data: translated(t, "[cy]", "order.items", "decision.recorded")}}
	_, err := locale.Load(locale.WithFiles(files))
	var p locale.Problem
	if !errors.As(err, &p) {
		t.Fatalf("an incomplete Welsh loaded: %v", err)
	}
	for _, want := range []string{"cy.json: ", "lack 2 of the English messages", "decision.recorded, order.items", "countersign locales template"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	r := locale.Shipped().Check(files)
	if len(r.Files) != 1 || !r.Files[0].New || strings.Join(r.Files[0].Missing, ",") != "decision.recorded,order.items" {
		t.Errorf("Check = %+v", r.Files)
	}
	if got := locale.Decide(locale.Inputs{AcceptLanguage: "cy"}); got.String() != "en" {
		t.Errorf("Welsh offered after it was refused: %s", got)
	}
}

// TestCatalogueFileProblems: each kind of mistake in an installation's
// file refuses it, naming the file, the message and the fix.
func TestCatalogueFileProblems(t *testing.T) {
	cases := []struct {
		name  string
		files fstest.MapFS
		want  []string
	}{
		{"a stale id", fstest.MapFS{"fr.json": {Data: []byte(`{"pages.gone": "Parti"}`)}},
			[]string{`fr.json: message "pages.gone": is not in the English catalogue`, "fix: remove it"}},
		{"other parameters than English's", fstest.MapFS{"fr.json": {Data: []byte(`{"decision.recorded": "Réponse enregistrée : {{.Heure}}"}`)}},
			[]string{`message "decision.recorded": uses the parameters [Heure]; English uses [Time]`, "English's named parameters"}},
		{"a plural form the language needs", fstest.MapFS{"fr.json": {Data: []byte(`{"order.items": {"one": "{{.Count}} article", "other": "{{.Count}} articles"}}`)}},
			[]string{`message "order.items": lacks the plural forms CLDR's rule for fr gives counts: many (e.g. 1000000)`, "give every form fr's rule uses: one, many, other"}},
		{"Welsh's six forms", fstest.MapFS{"cy.json": {Data: []byte(`{"order.items": {"one": "{{.Count}} eitem", "other": "{{.Count}} eitem"}}`)}},
			[]string{"lacks the plural forms CLDR's rule for cy gives counts: few (e.g. 3), many (e.g. 6), two (e.g. 2), zero (e.g. 0)"}},
		{"a console text in French", fstest.MapFS{"fr.json": {Data: []byte(`{"console.frame.sign_out": "Se déconnecter"}`)}},
			[]string{"is a console text: the console is shown in English only", "override it in an English file"}},
		{"a name that says no language", fstest.MapFS{"welsh.json": {Data: []byte(`{}`)}},
			[]string{`welsh.json: the name does not say a language: "welsh"`, "e.g. cy.json"}},
		{"a file that does not parse", fstest.MapFS{"fr.json": {Data: []byte(`{"order.items": [1, 2]`)}},
			[]string{"fr.json: does not parse", "countersign locales template"}},
		{"a template that does not parse", fstest.MapFS{"fr.json": {Data: []byte(`{"decision.recorded": "Réponse : {{.Time}"}`)}},
			[]string{`message "decision.recorded": its "other" text does not parse`}},
		{"one message in two files", fstest.MapFS{"fr.json": {Data: []byte(`{"language.switch.label": "Langue"}`)},
			"pages.fr.json": {Data: []byte(`{"language.switch.label": "Langue"}`)}},
			[]string{`pages.fr.json: message "language.switch.label": is also given in fr.json`}},
		{"the pseudo-locale", fstest.MapFS{"en-XA.json": {Data: []byte(`{}`)}},
			[]string{"en-XA is the tests' pseudo-locale"}},
		{"a language without a plural rule", fstest.MapFS{"tlh.json": {Data: []byte(`{}`)}},
			[]string{"tlh.json: CLDR has no plural rule for tlh"}},
		{"a new language that does not parse", fstest.MapFS{"cy.json": {Data: []byte(`{"order.items": `)}},
			[]string{"cy.json: does not parse"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := locale.Load(locale.WithFiles(c.files))
			if err == nil {
				t.Fatal("loaded")
			}
			for _, want := range c.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal does not say %q:\n%v", want, err)
				}
			}
			if c.name != "Welsh's six forms" && strings.Contains(err.Error(), "lack") && strings.Contains(err.Error(), "of the English messages") {
				t.Errorf("a file that says nothing yet is also told it lacks every message:\n%v", err)
			}
		})
	}
}

// TestAnInstalledHebrewReadsRightToLeft: a language added by a file takes
// its direction from its script, as the shipped Arabic does.
func TestAnInstalledHebrewReadsRightToLeft(t *testing.T) {
	install(t, fstest.MapFS{"he.json": {Data: translated(t, "[he]")}})
	got := locale.Decide(locale.Inputs{AcceptLanguage: "he-IL"})
	if got.String() != "he" || got.Dir != locale.RTL {
		t.Fatalf("Decide = %s %s; want he rtl", got, got.Dir)
	}
	for tag, want := range map[string]locale.Dir{"he": locale.RTL, "fa": locale.RTL, "ur": locale.RTL, "yi": locale.RTL,
		"dv": locale.RTL, "ps": locale.RTL, "ckb": locale.RTL, "sd": locale.RTL, "az-Arab": locale.RTL, "syr": locale.RTL,
		"ug": locale.RTL, "arc": locale.RTL, "myz": locale.RTL, "sam-Samr": locale.RTL,
		"cy": locale.LTR, "en": locale.LTR, "az": locale.LTR, "pa": locale.LTR, "sd-Deva": locale.LTR, "ja": locale.LTR} {
		if got := locale.Direction(language.MustParse(tag)); got != want {
			t.Errorf("Direction(%s) = %s; want %s", tag, got, want)
		}
	}
}

// TestAnOverrideOfAShippedTextShows: a file in a shipped language
// replaces the texts it holds and keeps the others; an English override of
// a console text shows where pages are rendered without a request's
// language (the console).
func TestAnOverrideOfAShippedTextShows(t *testing.T) {
	c := install(t, fstest.MapFS{
		"fr.json":         {Data: []byte(`{"language.switch.label": "Langue d’affichage"}`)},
		"console.en.json": {Data: []byte(`{"decision.recorded": "Recorded at {{.Time}}"}`)},
	})
	fr := c.For(language.French)
	if got := fr.T("language.switch.label", nil); got != "Langue d’affichage" {
		t.Errorf("the override: %q", got)
	}
	if got, want := fr.T("language.switch.submit", nil), locale.Shipped().For(language.French).T("language.switch.submit", nil); got != want {
		t.Errorf("a text not overridden: %q; want the shipped %q", got, want)
	}
	if got := locale.T(context.Background(), "decision.recorded", locale.Params{"Time": "09:30"}); got != "Recorded at 09:30" {
		t.Errorf("the English override outside a request: %q", got)
	}
	if tagList(c.Offered()) != "en,ar,de,es,fr" {
		t.Errorf("an override offers %s", tagList(c.Offered()))
	}
}

// TestInstallingRacesNoRequest: a catalogue installed while requests
// decide languages and list the offered ones (a test installing its own,
// the console at start) is seen whole or not at all, never half written:
// run under -race, the detector finds no unsynchronised access.
func TestInstallingRacesNoRequest(t *testing.T) {
	c := install(t, fstest.MapFS{"cy.json": {Data: translated(t, "[cy]")}})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 50 {
			locale.Install(nil)
			locale.Install(c)
		}
	}()
	for range 50 {
		if tags := locale.Supported(); len(tags) == 0 || tags[0] != language.English {
			t.Fatalf("Supported = %v; want English first", tags)
		}
		locale.Decide(locale.Inputs{AcceptLanguage: "fr"})
	}
	<-done
}
