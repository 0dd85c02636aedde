package httpadapter

import (
	"fmt"
	"slices"
	"strings"

	celast "cel.dev/cel-go/common/ast"
)

// Every variable is a dynamic JSON value to CEL, so CEL's checker cannot
// see that args.amuont names no parameter; the names a file declares are
// checked here instead, at load: a field of args must be a declared
// parameter (and of an object parameter, one of its properties), a name
// of vars must be a var declared before the expression runs, and every
// variable must be one bound where the expression runs (boundAt). An
// error names the owner (the action or read tool), the unknown name and
// the nearest declared one.

// exprScope is what an expression may name: the owner's parameters (nil
// when args is not bound there) and vars.
type exprScope struct {
	// owner names where the expression is, for errors: "action issue_refund".
	owner  string
	params []ParamDesc
	// argsBound says args is bound where the expression runs.
	argsBound bool
	// vars are the var names bound; varsBound false means vars is not.
	vars      []string
	varsBound bool
	// allVars are every var of the action, for a var named before its turn.
	allVars []string
	// dryRun says the action has a dry-run request, whose answer is bound
	// as dry_run after it.
	dryRun bool
}

// checkNames reports every reference of the expression at ptr to a
// parameter or var its scope does not declare.
func (c *compiler) checkNames(ptr, src string, e *expr) {
	if e == nil {
		return
	}
	c.checkBound(ptr, src, e)
	s := c.scope
	if s == nil {
		return
	}
	seen := map[string]bool{}
	for _, r := range refs(e.tree) {
		var problem, fix string
		switch r[0] {
		case "args":
			if !s.argsBound {
				break
			}
			problem, fix = unknownArg(r[1:], s.params)
		case "vars":
			if !s.varsBound || len(r) < 2 || slices.Contains(s.vars, r[1]) {
				break
			}
			problem = fmt.Sprintf("vars.%s is not a var declared before this expression", r[1])
			fix = suggest("vars.", r[1], s.vars)
			if slices.Contains(s.allVars, r[1]) {
				fix = fmt.Sprintf("vars are computed in order: move var %s before this one", r[1])
			}
		}
		if problem == "" || seen[problem] {
			continue
		}
		seen[problem] = true
		c.fail(ptr, fmt.Sprintf("%s: %s names an unknown value: %s", s.owner, src, problem), fix)
	}
}

// unknownArg follows path (the fields after args) through params and
// describes the first name that is not declared ("" when all are).
func unknownArg(path []string, params []ParamDesc) (problem, fix string) {
	prefix := "args."
	ps := params
	for _, name := range path {
		i := slices.IndexFunc(ps, func(p ParamDesc) bool { return p.Name == name })
		if i < 0 {
			var names []string
			for _, p := range ps {
				names = append(names, p.Name)
			}
			return fmt.Sprintf("%s%s is not a declared parameter", prefix, name), suggest(prefix, name, names)
		}
		p := ps[i]
		if p.Type != "object" {
			// What follows is a method or a value's own field (a string's
			// size()); a scalar has no declared fields to check.
			return "", ""
		}
		prefix += name + "."
		ps = p.Properties
	}
	return "", ""
}

// suggest is the fix for an unknown name: the nearest declared one ("did
// you mean"), and the list of them.
func suggest(prefix, name string, declared []string) string {
	if len(declared) == 0 {
		return "declare it first, or remove the reference"
	}
	best, bestD := "", -1
	for _, d := range declared {
		if dist := editDistance(name, d); bestD < 0 || dist < bestD {
			best, bestD = d, dist
		}
	}
	sorted := slices.Clone(declared)
	slices.Sort(sorted)
	list := prefix + strings.Join(sorted, ", "+prefix)
	if bestD <= max(2, len(name)/3) {
		return fmt.Sprintf("did you mean %s%s? Declared: %s", prefix, best, list)
	}
	return "use one of: " + list
}

// editDistance is the Levenshtein distance of two names.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// The variables bound where an expression runs (see the README's table).
var (
	planVars   = []string{"args", "target", "account", "vars", "now", "principal"}
	verifyVars = []string{"args", "target", "account", "vars", "now", "principal", "key", "result"}
)

// boundAt lists the variables bound at the expression written at ptr; nil
// means the place is not known and nothing is checked.
func (c *compiler) boundAt(ptr string) []string {
	toks := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	at := func(i int) string {
		if i < len(toks) {
			return toks[i]
		}
		return ""
	}
	switch at(0) {
	case "principal":
		if at(1) == "path" || at(1) == "graphql" {
			return []string{"principal"}
		}
		return []string{"account", "principal"}
	case "objects":
		switch at(2) {
		case "get", "get_graphql":
			return []string{"id", "account"}
		case "list", "list_graphql":
			return []string{"account", "principal"}
		case "display", "owner":
			return []string{"object", "account"}
		case "identity":
			// The key is the system's word for the object: what it read,
			// never the principal's account nor what an assistant wrote.
			return []string{"object"}
		case "terms", "exact":
			return []string{"object", "account", "ref"}
		}
	case "read_tools":
		return []string{"args", "principal", "account"}
	case "errors":
		return []string{"status", "body"}
	case "effects":
		return []string{"key"}
	case "actions":
		dry := func(vs []string) []string {
			if c.scope != nil && c.scope.dryRun {
				return append(slices.Clone(vs), "dry_run")
			}
			return vs
		}
		switch at(2) {
		case "vars", "guards", "dry_run":
			return planVars
		case "quote":
			return dry(planVars)
		case "request":
			return dry(append(slices.Clone(planVars), "key"))
		case "precondition":
			if at(3) == "refusal" {
				return []string{"status", "body"}
			}
			return dry(append(slices.Clone(planVars), "key"))
		case "result":
			return dry(append(slices.Clone(planVars), "key", "response"))
		case "verify":
			if at(3) == "expect" {
				return append(slices.Clone(verifyVars), "before", "after")
			}
			return verifyVars
		case "evidence":
			return []string{"effect", "key"}
		}
	}
	return nil
}

// checkBound reports every variable the expression uses that is not bound
// where it runs (response in a guard, key in a quote): it would fail at run
// time on every call.
func (c *compiler) checkBound(ptr, src string, e *expr) {
	bound := c.boundAt(ptr)
	if bound == nil {
		return
	}
	owner := "the file"
	if c.scope != nil {
		owner = c.scope.owner
	}
	for _, name := range freeVariables(e.tree) {
		if !slices.Contains(celVariables, name) || slices.Contains(bound, name) {
			continue
		}
		c.fail(ptr, fmt.Sprintf("%s: %s uses %s, which is not bound here", owner, src, name),
			"here an expression may use "+strings.Join(bound, ", "))
	}
}

// freeVariables lists the identifiers an expression reads that no
// comprehension of it binds, each once, in order.
func freeVariables(e celast.Expr) []string {
	var out []string
	var walk func(e celast.Expr, local map[string]bool)
	walk = func(e celast.Expr, local map[string]bool) {
		if e == nil {
			return
		}
		switch e.Kind() {
		case celast.IdentKind:
			if n := e.AsIdent(); !local[n] && !slices.Contains(out, n) {
				out = append(out, n)
			}
		case celast.SelectKind:
			walk(e.AsSelect().Operand(), local)
		case celast.CallKind:
			call := e.AsCall()
			if call.IsMemberFunction() {
				walk(call.Target(), local)
			}
			for _, a := range call.Args() {
				walk(a, local)
			}
		case celast.ListKind:
			for _, el := range e.AsList().Elements() {
				walk(el, local)
			}
		case celast.MapKind:
			for _, en := range e.AsMap().Entries() {
				walk(en.AsMapEntry().Key(), local)
				walk(en.AsMapEntry().Value(), local)
			}
		case celast.StructKind:
			for _, f := range e.AsStruct().Fields() {
				walk(f.AsStructField().Value(), local)
			}
		case celast.ComprehensionKind:
			cm := e.AsComprehension()
			walk(cm.IterRange(), local)
			walk(cm.AccuInit(), local)
			inner := map[string]bool{cm.IterVar(): true, cm.AccuVar(): true}
			if cm.HasIterVar2() {
				inner[cm.IterVar2()] = true
			}
			for k := range local {
				inner[k] = true
			}
			walk(cm.LoopCondition(), inner)
			walk(cm.LoopStep(), inner)
			walk(cm.Result(), inner)
		}
	}
	walk(e, map[string]bool{})
	return out
}
