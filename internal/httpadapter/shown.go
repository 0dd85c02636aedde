package httpadapter

import (
	"fmt"
	"slices"
	"strings"

	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"

	"countersign/internal/adapter"
)

// What is sent is what was shown: every argument an action's request (or
// its dry-run request) sends to the system must be shown by a quote line
// of that action, or the file does not load. A line shows an argument when
// its label, from or to references it, directly or through the vars it is
// computed into (field by field for a var that is a map literal, so that
// {vars.to.line1} shows args.address.line1 and not args.address.line2). A
// line with "when" does not count, since it may be left out. A reference
// decides what may reach the person; whether the value really shows (no
// truncation, every change visible) is the conformance suite's check.

// argPath is an argument named by its dotted path ("address.line2"); ""
// is the whole argument object.
type argPath = string

// varRefs are the references of one var: all of them, and per key for a
// var written as a map literal with constant keys.
type varRefs struct {
	all     [][]string
	entries map[string][][]string
}

// everyArgumentShown refuses an action whose request sends an argument
// that no unconditional quote line shows, naming the argument, the line
// where it is sent and the fix.
func (c *compiler) everyArgumentShown(act *action) {
	vars := map[string]varRefs{}
	for _, v := range act.vars {
		if v.expr == nil {
			continue
		}
		vars[v.name] = refsOfVar(v.expr.tree)
	}
	leaves := paramLeaves(act.spec.Params, "")
	shown := map[argPath]bool{}
	for _, l := range act.quote.lines {
		if l.when != nil {
			continue
		}
		for _, t := range []*template{l.label, l.from, l.to} {
			for _, a := range templateArgs(t, vars) {
				for _, leaf := range covered(a, leaves) {
					shown[leaf] = true
				}
			}
		}
	}
	sentAt := map[argPath]string{}
	var sent []argPath
	var sentBy []*template
	for _, r := range []*request{act.request, act.dryRun} {
		if r != nil {
			sentBy = append(append(sentBy, r.path), bodyTemplates(r.body)...)
		}
	}
	if act.pre != nil && act.pre.value != nil {
		sentBy = append(sentBy, act.pre.value) // the precondition's value goes to the system too
	}
	for _, t := range sentBy {
		for _, a := range templateArgs(t, vars) {
			for _, leaf := range covered(a, leaves) {
				if _, ok := sentAt[leaf]; !ok {
					sentAt[leaf] = t.ptr
					sent = append(sent, leaf)
				}
			}
		}
	}
	for _, leaf := range sent {
		if shown[leaf] {
			continue
		}
		c.fail(sentAt[leaf], fmt.Sprintf("action %s sends args.%s to the system, but no quote line shows it, so a person would approve it unseen",
			act.spec.Name, leaf),
			fmt.Sprintf("add a quote line without \"when\" whose label, from or to shows args.%s (e.g. \"to\": \"{args.%s}\"), or stop sending it", leaf, leaf))
	}
}

// paramLeaves lists every argument that holds a value, nested objects'
// fields as "address.line2".
func paramLeaves(ps []adapter.Param, prefix string) []argPath {
	var out []argPath
	for _, p := range ps {
		if p.Type == "object" {
			out = append(out, paramLeaves(p.Properties, prefix+p.Name+".")...)
			continue
		}
		out = append(out, prefix+p.Name)
	}
	return out
}

// covered lists the leaves a reference to a reaches: a itself, every
// field under it, or the leaf it lies under.
func covered(a argPath, leaves []argPath) []argPath {
	var out []argPath
	for _, l := range leaves {
		if a == "" || l == a || strings.HasPrefix(l, a+".") || strings.HasPrefix(a, l+".") {
			out = append(out, l)
		}
	}
	return out
}

// bodyTemplates lists the templates of a request body.
func bodyTemplates(v any) []*template {
	switch x := v.(type) {
	case *template:
		return []*template{x}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var out []*template
		for _, k := range keys {
			out = append(out, bodyTemplates(x[k])...)
		}
		return out
	case []any:
		var out []*template
		for _, e := range x {
			out = append(out, bodyTemplates(e)...)
		}
		return out
	}
	return nil
}

// templateArgs lists the arguments a template's placeholders reference.
func templateArgs(t *template, vars map[string]varRefs) []argPath {
	if t == nil {
		return nil
	}
	var out []argPath
	for _, p := range t.parts {
		if p.expr == nil {
			continue
		}
		for _, r := range refs(p.expr.tree) {
			out = append(out, resolve(r, vars, map[string]bool{})...)
		}
	}
	return out
}

// resolve turns a reference rooted at args or vars into the arguments it
// stands for.
func resolve(r []string, vars map[string]varRefs, seen map[string]bool) []argPath {
	switch {
	case r[0] == "args":
		return []argPath{strings.Join(r[1:], ".")}
	case len(r) == 1:
		// All of vars: every var's arguments.
		var out []argPath
		for name := range vars {
			out = append(out, resolve([]string{"vars", name}, vars, seen)...)
		}
		return out
	}
	name := r[1]
	v, ok := vars[name]
	if !ok || seen[name] {
		return nil
	}
	seen[name] = true
	defer delete(seen, name)
	from := v.all
	if len(r) > 2 && v.entries != nil {
		if e, ok := v.entries[r[2]]; ok {
			from = e
		} else {
			return nil
		}
	}
	var out []argPath
	for _, ref := range from {
		out = append(out, resolve(ref, vars, seen)...)
	}
	return out
}

// refsOfVar reads a var's references, per key when it is a map literal.
func refsOfVar(e celast.Expr) varRefs {
	v := varRefs{all: refs(e)}
	if e == nil || e.Kind() != celast.MapKind {
		return v
	}
	v.entries = map[string][][]string{}
	for _, en := range e.AsMap().Entries() {
		me := en.AsMapEntry()
		k, ok := literalString(me.Key())
		if !ok {
			v.entries = nil
			return v
		}
		v.entries[k] = refs(me.Value())
	}
	return v
}

// refs lists the longest field chains rooted at args or vars that an
// expression reads: args.address.country.upperAscii() reads
// [args address country].
func refs(e celast.Expr) [][]string { return refsOf(e, "args", "vars") }

// refsOf lists the longest field chains rooted at one of roots that an
// expression reads.
func refsOf(e celast.Expr, roots ...string) [][]string {
	if e == nil {
		return nil
	}
	if c, ok := chain(e); ok {
		if slices.Contains(roots, c[0]) {
			return [][]string{c}
		}
		return nil
	}
	var kids []celast.Expr
	switch e.Kind() {
	case celast.SelectKind:
		kids = []celast.Expr{e.AsSelect().Operand()}
	case celast.CallKind:
		call := e.AsCall()
		if call.IsMemberFunction() {
			kids = append(kids, call.Target())
		}
		kids = append(kids, call.Args()...)
	case celast.ListKind:
		kids = e.AsList().Elements()
	case celast.MapKind:
		for _, en := range e.AsMap().Entries() {
			kids = append(kids, en.AsMapEntry().Key(), en.AsMapEntry().Value())
		}
	case celast.StructKind:
		for _, f := range e.AsStruct().Fields() {
			kids = append(kids, f.AsStructField().Value())
		}
	case celast.ComprehensionKind:
		cm := e.AsComprehension()
		kids = []celast.Expr{cm.IterRange(), cm.AccuInit(), cm.LoopCondition(), cm.LoopStep(), cm.Result()}
	}
	var out [][]string
	for _, k := range kids {
		out = append(out, refsOf(k, roots...)...)
	}
	return out
}

// chain reads an identifier followed by field selections, optional
// selections (a.?b) and constant string indexes (a["b"]).
func chain(e celast.Expr) ([]string, bool) {
	switch e.Kind() {
	case celast.IdentKind:
		return []string{e.AsIdent()}, true
	case celast.SelectKind:
		s := e.AsSelect()
		c, ok := chain(s.Operand())
		if !ok {
			return nil, false
		}
		return append(c, s.FieldName()), true
	case celast.CallKind:
		call := e.AsCall()
		if (call.FunctionName() != operators.OptSelect && call.FunctionName() != operators.Index) || len(call.Args()) != 2 {
			return nil, false
		}
		c, ok := chain(call.Args()[0])
		if !ok {
			return nil, false
		}
		k, ok := literalString(call.Args()[1])
		if !ok {
			return nil, false
		}
		return append(c, k), true
	}
	return nil, false
}

func literalString(e celast.Expr) (string, bool) {
	if e.Kind() != celast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}

// templateUses says whether a template's placeholders read the variable
// name (key).
func templateUses(t *template, name string) bool {
	if t == nil {
		return false
	}
	for _, p := range t.parts {
		if p.expr != nil && exprUses(p.expr.tree, name) {
			return true
		}
	}
	return false
}

func exprUses(e celast.Expr, name string) bool {
	if e == nil {
		return false
	}
	var kids []celast.Expr
	switch e.Kind() {
	case celast.IdentKind:
		return e.AsIdent() == name
	case celast.SelectKind:
		kids = []celast.Expr{e.AsSelect().Operand()}
	case celast.CallKind:
		call := e.AsCall()
		if call.IsMemberFunction() {
			kids = append(kids, call.Target())
		}
		kids = append(kids, call.Args()...)
	case celast.ListKind:
		kids = e.AsList().Elements()
	case celast.MapKind:
		for _, en := range e.AsMap().Entries() {
			kids = append(kids, en.AsMapEntry().Key(), en.AsMapEntry().Value())
		}
	case celast.ComprehensionKind:
		cm := e.AsComprehension()
		kids = []celast.Expr{cm.IterRange(), cm.AccuInit(), cm.LoopCondition(), cm.LoopStep(), cm.Result()}
	}
	for _, k := range kids {
		if exprUses(k, name) {
			return true
		}
	}
	return false
}
