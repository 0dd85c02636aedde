package conformance

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"countersign/internal/adapter"
)

// Varied is one valid call of a write action for the checks that what is
// sent is what was shown, with other valid values for the arguments the
// checks cannot make up themselves.
type Varied struct {
	Call
	// Other maps an argument's path ("order_id", "address.country") to
	// other valid values for it: another of the principal's objects, a
	// country code.
	Other map[string][]any
	// OtherTarget, for a principal with only one object the action applies
	// to, is the call on another principal's object: the quotes of the two
	// must differ.
	OtherTarget *Call
}

// checkEveryArgumentShows: changing any argument of any write action, a
// nested field or an optional one, changes the quote as a person sees it,
// in the language it is written in and in each of its translations.
func checkEveryArgumentShows(t T, e *Env) {
	for _, problem := range UnshownArguments(t, e.System, e.fix) {
		t.Error(problem)
	}
}

// checkHiddenCharactersRefused: a string argument of any write action
// holding a zero-width space or a right-to-left override is refused before
// anything is read or sent, with a field error naming that argument; so is
// one of the fixture's read tools.
func checkHiddenCharactersRefused(t T, e *Env) {
	before := e.Effects(t, "")
	for _, a := range e.System.Actions() {
		v, ok := variedFor(e.fix, a.Name)
		if !ok {
			t.Errorf("action %s: the fixture has no valid call of it (add one to Fixture.Every)", a.Name)
			continue
		}
		base := toMap(t, v.Args)
		for _, leaf := range leaves(a.Params, "") {
			if leaf.param.Type != "string" {
				continue
			}
			s, _ := get(base, leaf.path).(string)
			if s == "" {
				s = "Unit 9"
			}
			for _, hidden := range []string{s[:len(s)/2] + "\u200b" + s[len(s)/2:], "\u202e" + s} {
				args := with(base, leaf.path, hidden)
				_, err := e.System.DryRun(ctx(t), principal(e.fix, v.Call), a.Name, raw(t, args))
				ae, ok := adapter.AsError(err)
				if !ok || ae.Code != adapter.CodeInvalidArguments || ae.Fields[leaf.path] == "" {
					t.Errorf("action %s: args.%s = %q was not refused with a field error naming it: %v", a.Name, leaf.path, hidden, err)
				}
			}
		}
	}
	for _, r := range e.fix.Reads {
		for k, v := range toMap(t, r.Args) {
			if s, ok := v.(string); ok && s != "" {
				_, err := e.System.Read(ctx(t), e.fix.Principal, r.Tool, raw(t, with(toMap(t, r.Args), k, "\u202e"+s)))
				if ae, ok := adapter.AsError(err); !ok || ae.Code != adapter.CodeInvalidArguments || ae.Fields[k] == "" {
					t.Errorf("read %s: %s with a right-to-left override was not refused naming it: %v", r.Tool, k, err)
				}
			}
		}
	}
	if after := e.Effects(t, ""); after != before {
		t.Errorf("the backend recorded %d effects", after-before)
	}
}

// UnshownArguments dry-runs the fixture's call of each write action, then
// once per other valid value of each argument (every leaf of the schema,
// nested and optional ones included), and returns a problem for each
// change that leaves the quote, as a person sees it in any of its
// languages (sameShown), the same, and for each argument no other valid
// value could be found for.
func UnshownArguments(t T, sys adapter.System, fix Fixture) []string {
	t.Helper()
	var problems []string
	for _, a := range sys.Actions() {
		v, ok := variedFor(fix, a.Name)
		if !ok {
			problems = append(problems, fmt.Sprintf("action %s: the fixture has no valid call of it (add one to Fixture.Every)", a.Name))
			continue
		}
		p := principal(fix, v.Call)
		base := toMap(t, v.Args)
		q, err := sys.DryRun(ctx(t), p, a.Name, raw(t, base))
		if err != nil {
			problems = append(problems, fmt.Sprintf("action %s: the fixture's call is refused: %v", a.Name, err))
			continue
		}
		for _, leaf := range leaves(a.Params, "") {
			varied := false
			for _, other := range candidates(leaf, get(base, leaf.path), v.Other[leaf.path]) {
				oq, err := sys.DryRun(ctx(t), p, a.Name, raw(t, with(base, leaf.path, other)))
				if err != nil || (leaf.path == a.TargetParam && oq.Target.ID == q.Target.ID) {
					continue // not valid, or the same object named otherwise
				}
				varied = true
				if loc, same := sameShown(q, oq); same {
					problems = append(problems, fmt.Sprintf("action %s: changing args.%s from %s to %s leaves the quote unchanged%s: the person would approve it unseen",
						a.Name, leaf.path, show(get(base, leaf.path)), show(other), loc))
				}
			}
			if la, lb, ok := longPair(leaf, get(base, leaf.path)); ok && leaf.path != a.TargetParam {
				// Two texts as long as allowed that differ only at their
				// end: a quote that cuts text short shows them the same.
				aq, aerr := sys.DryRun(ctx(t), p, a.Name, raw(t, with(base, leaf.path, la)))
				bq, berr := sys.DryRun(ctx(t), p, a.Name, raw(t, with(base, leaf.path, lb)))
				if aerr == nil && berr == nil {
					if loc, same := sameShown(aq, bq); same {
						problems = append(problems, fmt.Sprintf("action %s: two values of args.%s that differ only in their last characters give the same quote%s: the text is cut short",
							a.Name, leaf.path, loc))
					}
				}
			}
			if leaf.path == a.TargetParam && v.OtherTarget != nil {
				oq, err := sys.DryRun(ctx(t), principal(fix, *v.OtherTarget), a.Name, raw(t, v.OtherTarget.Args))
				if err != nil {
					problems = append(problems, fmt.Sprintf("action %s: the fixture's other target is refused: %v", a.Name, err))
				} else if loc, same := sameShown(q, oq); same {
					problems = append(problems, fmt.Sprintf("action %s: another target gives the same quote%s: the person cannot see which object changes", a.Name, loc))
				}
				varied = varied || err == nil
			}
			if !varied {
				problems = append(problems, fmt.Sprintf("action %s: no other valid value of args.%s was found to check that it shows (add one to the fixture's Other)",
					a.Name, leaf.path))
			}
		}
	}
	return problems
}

// Rendered is a quote as a person sees it: title, lines, consequences and
// amount, in one text.
func Rendered(q adapter.Quote) string {
	var b strings.Builder
	b.WriteString(q.Title + "\n")
	for _, l := range q.Lines {
		fmt.Fprintf(&b, "%s: %s → %s\n", l.Label, l.From, l.To)
	}
	for _, c := range q.Consequences {
		b.WriteString(c + "\n")
	}
	if q.AmountCents != nil {
		fmt.Fprintf(&b, "%d %s\n", *q.AmountCents, q.Currency)
	}
	return b.String()
}

// sameShown says whether a and b read the same to someone: in the
// language a is written in, or in any of a's translations, each as a
// page shows it (adapter.Quote.In). A customer reading French decides on
// the French texts, so an argument must show there too. loc names the
// language that reads the same (" in fr"), empty for the written one.
func sameShown(a, b adapter.Quote) (loc string, same bool) {
	if Rendered(a) == Rendered(b) {
		return "", true
	}
	for _, l := range slices.Sorted(maps.Keys(a.Translations)) {
		if Rendered(a.In(l)) == Rendered(b.In(l)) {
			return " in " + l, true
		}
	}
	return "", false
}

func variedFor(fix Fixture, action string) (Varied, bool) {
	i := slices.IndexFunc(fix.Every, func(v Varied) bool { return v.Action == action })
	if i < 0 {
		return Varied{}, false
	}
	return fix.Every[i], true
}

// leaf is an argument that holds a value, by its dotted path.
type leaf struct {
	path  string
	param adapter.Param
}

func leaves(ps []adapter.Param, prefix string) []leaf {
	var out []leaf
	for _, p := range ps {
		if p.Type == "object" {
			out = append(out, leaves(p.Properties, prefix+p.Name+".")...)
			continue
		}
		out = append(out, leaf{path: prefix + p.Name, param: p})
	}
	return out
}

// candidates are other values for a leaf: the fixture's, every other enum
// value, a number one up and one down, a text with one character changed
// and one as long as allowed (a quote that cuts text short shows no
// change at its end).
func candidates(l leaf, cur any, other []any) []any {
	out := slices.Clone(other)
	p := l.param
	switch {
	case len(p.Enum) > 0:
		for _, e := range p.Enum {
			if e != cur {
				out = append(out, e)
			}
		}
	case p.Type == "integer":
		n, _ := cur.(float64)
		for _, d := range []float64{-1, 1} {
			m := n + d
			if (p.Min == nil || m >= float64(*p.Min)) && (p.Max == nil || m <= float64(*p.Max)) {
				out = append(out, m)
			}
		}
	case p.Type == "string":
		s, _ := cur.(string)
		if s == "" {
			out = append(out, "Unit 9")
			break
		}
		max := p.MaxLength
		if max == 0 {
			max = 200
		}
		r := []rune(s)
		if len(r) < max {
			out = append(out, s+"2")
		} else {
			out = append(out, string(r[:len(r)-1])+"2")
		}
		if long, _, ok := longPair(l, cur); ok {
			out = append(out, long)
		}
	}
	return out
}

// longPair gives two values of a text argument as long as allowed, the
// current value followed by filler, that differ only in their last word.
func longPair(l leaf, cur any) (string, string, bool) {
	s, _ := cur.(string)
	n, max := utf8.RuneCountInString(s), l.param.MaxLength
	if l.param.Type != "string" || len(l.param.Enum) > 0 || s == "" || max < n+20 {
		return "", "", false
	}
	pad := s + " " + strings.Repeat("z", max-n-1-len(" the end"))
	return pad + " the end", pad + " the END", true
}

func toMap(t T, v any) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw(t, v), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// get reads a dotted path of a JSON object.
func get(m map[string]any, path string) any {
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		return m[head]
	}
	sub, _ := m[head].(map[string]any)
	return get(sub, rest)
}

// with copies m with the dotted path set to v.
func with(m map[string]any, path string, v any) map[string]any {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]any{}
	}
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		out[head] = v
		return out
	}
	sub, _ := out[head].(map[string]any)
	out[head] = with(sub, rest, v)
	return out
}

func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		if len(x) > 60 {
			return strconv.Quote(x[:60]) + "…"
		}
		return strconv.Quote(x)
	}
	return fmt.Sprint(v)
}
