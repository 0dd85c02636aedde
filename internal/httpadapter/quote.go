package httpadapter

import (
	"fmt"
	"slices"
	"strings"

	celast "cel.dev/cel-go/common/ast"
)

// kids are an expression's direct subexpressions.
func kids(e celast.Expr) []celast.Expr {
	var out []celast.Expr
	switch e.Kind() {
	case celast.SelectKind:
		out = []celast.Expr{e.AsSelect().Operand()}
	case celast.CallKind:
		call := e.AsCall()
		if call.IsMemberFunction() {
			out = append(out, call.Target())
		}
		out = append(out, call.Args()...)
	case celast.ListKind:
		out = e.AsList().Elements()
	case celast.MapKind:
		for _, en := range e.AsMap().Entries() {
			out = append(out, en.AsMapEntry().Key(), en.AsMapEntry().Value())
		}
	case celast.StructKind:
		for _, f := range e.AsStruct().Fields() {
			out = append(out, f.AsStructField().Value())
		}
	case celast.ComprehensionKind:
		cm := e.AsComprehension()
		out = []celast.Expr{cm.IterRange(), cm.AccuInit(), cm.LoopCondition(), cm.LoopStep(), cm.Result()}
	}
	return out
}

// quotedArgs names the parameters an expression passes to filter_quote
// ("name", "address.city"), for a refusal of a value it cannot quote.
func quotedArgs(e celast.Expr) []string {
	if e == nil {
		return nil
	}
	var out []string
	if e.Kind() == celast.CallKind && e.AsCall().FunctionName() == "filter_quote" {
		for _, arg := range e.AsCall().Args() {
			for _, r := range refsOf(arg, "args") {
				if len(r) > 1 {
					out = append(out, strings.Join(r[1:], "."))
				}
			}
		}
	}
	for _, k := range kids(e) {
		out = append(out, quotedArgs(k)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// path compiles a request path: a template, in whose query no placeholder
// over args may sit directly inside quotes (`name="{args.name}"`): URL
// escaping keeps a value inside its URL component, not inside a filter
// language's literal, so `Main" || id != "` would widen the filter.
func (c *compiler) path(ptr, src string) *template {
	t := c.template(ptr, src)
	inQuery := false
	for i, p := range t.parts {
		if p.expr == nil {
			if strings.Contains(p.text, "?") {
				inQuery = true
			}
			continue
		}
		if !inQuery || i == 0 || i+1 >= len(t.parts) || t.parts[i+1].expr != nil || !exprUses(p.expr.tree, "args") ||
			exprCalls(p.expr.tree, "filter_quote") {
			continue
		}
		before, after := strings.ToLower(t.parts[i-1].text), strings.ToLower(t.parts[i+1].text)
		for _, q := range []string{`"`, `'`, "%22", "%27"} {
			if strings.HasSuffix(before, q) && strings.HasPrefix(after, q) {
				c.fail(ptr, fmt.Sprintf("the placeholder {%s} puts an argument inside quotes in the query, where a quote in the value ends the literal and adds filter syntax", p.expr.src),
					fmt.Sprintf("drop the quotes and write {filter_quote(%s)}, which makes one quoted literal", p.expr.src))
				break
			}
		}
	}
	return t
}

// exprCalls says whether an expression calls the function name.
func exprCalls(e celast.Expr, name string) bool {
	if e == nil {
		return false
	}
	if e.Kind() == celast.CallKind && e.AsCall().FunctionName() == name {
		return true
	}
	return slices.ContainsFunc(kids(e), func(k celast.Expr) bool { return exprCalls(k, name) })
}
