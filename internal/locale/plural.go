package locale

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

var (
	action = regexp.MustCompile(`\{\{[^}]*\}\}`)
	field  = regexp.MustCompile(`\.([A-Za-z_][A-Za-z0-9_]*)`)
)

// placeholders are the named parameters a message uses in any of its
// forms, sorted and comma-joined: Arabic's "one" may say "عنصر واحد"
// without the count, but the language as a whole must use the parameters
// English does, and no other.
func placeholders(m *i18n.Message) string {
	set := map[string]bool{}
	for _, form := range formsOf(m) {
		for _, a := range action.FindAllString(form, -1) {
			for _, f := range field.FindAllStringSubmatch(a, -1) {
				set[f[1]] = true
			}
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// probeCounts are the counts pluralForms tries: every CLDR integer rule
// looks at n, n % 10, n % 100 or n % 1000000, so these reach every form a
// whole count can take.
var probeCounts = func() []int {
	var out []int
	for n := 0; n <= 1000; n++ {
		out = append(out, n)
	}
	return append(out, 10000, 100000, 1000000, 2000000, 10000000, 1000000000)
}()

var formsCache sync.Map // language.Tag → formsFound

type formsFound struct {
	forms map[string]int
	err   error
}

// pluralForms are the plural forms CLDR's rule for tag gives whole counts,
// each with the smallest count that takes it ({"one": 1, "other": 0} in
// English; six forms in Welsh), as go-i18n, which renders the pages,
// applies the rule. It fails when go-i18n holds no rule for the language.
func pluralForms(tag language.Tag) (map[string]int, error) {
	if v, ok := formsCache.Load(tag); ok {
		f := v.(formsFound)
		return f.forms, f.err
	}
	forms, err := probeForms(tag)
	formsCache.Store(tag, formsFound{forms, err})
	return forms, err
}

func probeForms(tag language.Tag) (map[string]int, error) {
	b := i18n.NewBundle(language.English)
	probe := &i18n.Message{ID: "probe", Zero: "zero", One: "one", Two: "two", Few: "few", Many: "many", Other: "other"}
	if err := b.AddMessages(tag, probe); err != nil {
		return nil, fmt.Errorf("CLDR has no plural rule for %s, so its counted texts cannot be chosen", tag)
	}
	l := i18n.NewLocalizer(b, tag.String())
	forms := map[string]int{}
	for _, n := range probeCounts {
		form, err := l.Localize(&i18n.LocalizeConfig{MessageID: probe.ID, PluralCount: n})
		if err != nil {
			return nil, fmt.Errorf("the plural rule for %s does not apply to %d: %w", tag, n, err)
		}
		if _, ok := forms[form]; !ok {
			forms[form] = n
		}
	}
	return forms, nil
}
