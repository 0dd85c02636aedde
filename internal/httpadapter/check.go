package httpadapter

import (
	"fmt"
	"slices"
	"strings"
)

// Every variable is a dynamic JSON value to CEL, so CEL's checker cannot
// see that args.amuont names no parameter; the names a file declares are
// checked here instead, at load: a field of args must be a declared
// parameter (and of an object parameter, one of its properties), a name
// of vars must be a var declared before the expression runs. An error
// names the owner (the action or read tool), the unknown name and the
// nearest declared one.

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
}

// checkNames reports every reference of the expression at ptr to a
// parameter or var its scope does not declare.
func (c *compiler) checkNames(ptr, src string, e *expr) {
	s := c.scope
	if s == nil || e == nil {
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
