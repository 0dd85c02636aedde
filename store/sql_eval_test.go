package store_test

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
)

// evaluated is one value of a string expression, placed where its most
// telling piece is written: a caller's argument when one was used.
type evaluated struct {
	SQL    string
	at     token.Pos
	caller bool
}

// evalCalls gives every value the string expression e of function fn
// takes: its one value when it is made of constants, else one per call of
// fn when it is made of constants and of fn's parameters, each bound to
// that call's arguments (up to depth levels of callers up). ok is false
// when some piece is neither.
func (c *collector) evalCalls(fn *ast.FuncDecl, e ast.Expr, depth int) ([]evaluated, bool) {
	if v, ok := c.eval(e, nil, nil, 0); ok {
		return v, true
	}
	if fn == nil || depth == 0 {
		return nil, false
	}
	self := c.info.Defs[fn.Name]
	var out []evaluated
	for _, call := range c.calls {
		if c.callee(call) != self {
			continue
		}
		vals, ok := c.eval(e, fn, call, depth)
		if !ok {
			return nil, false
		}
		out = append(out, vals...)
	}
	return out, len(out) > 0
}

// eval gives the values of e with fn's parameters bound to call's
// arguments (none when call is nil).
func (c *collector) eval(e ast.Expr, fn *ast.FuncDecl, call *ast.CallExpr, depth int) ([]evaluated, bool) {
	if tv := c.info.Types[e]; tv.Value != nil && tv.Value.Kind() == constant.String {
		return []evaluated{{constant.StringVal(tv.Value), e.Pos(), false}}, true
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return c.eval(e.X, fn, call, depth)
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return nil, false
		}
		left, ok := c.eval(e.X, fn, call, depth)
		if !ok {
			return nil, false
		}
		right, ok := c.eval(e.Y, fn, call, depth)
		if !ok {
			return nil, false
		}
		var out []evaluated
		for _, l := range left {
			for _, r := range right {
				v := evaluated{l.SQL + r.SQL, l.at, l.caller || r.caller}
				if !l.caller && r.caller {
					v.at = r.at
				}
				out = append(out, v)
			}
		}
		return out, true
	case *ast.Ident:
		if call == nil {
			return nil, false
		}
		i := c.param(fn, c.info.Uses[e])
		if i < 0 || i >= len(call.Args) {
			return nil, false
		}
		vals, ok := c.evalCalls(c.enclosing(call), call.Args[i], depth-1)
		for j := range vals {
			vals[j].caller = true
		}
		return vals, ok
	}
	return nil, false
}

// param is the index of obj among fn's parameters, or -1.
func (c *collector) param(fn *ast.FuncDecl, obj types.Object) int {
	i := 0
	for _, field := range fn.Type.Params.List {
		for _, name := range field.Names {
			if c.info.Defs[name] == obj {
				return i
			}
			i++
		}
	}
	return -1
}

// constArgs gives the call's arguments when every one is a constant.
func (c *collector) constArgs(call *ast.CallExpr) ([]any, bool) {
	var out []any
	for _, a := range call.Args {
		v := c.info.Types[a].Value
		if v == nil {
			return nil, false
		}
		out = append(out, constant.Val(v))
	}
	return out, true
}

func (c *collector) callee(call *ast.CallExpr) types.Object {
	switch f := call.Fun.(type) {
	case *ast.Ident:
		return c.info.Uses[f]
	case *ast.SelectorExpr:
		return c.info.Uses[f.Sel]
	}
	return nil
}

func (c *collector) enclosing(call *ast.CallExpr) *ast.FuncDecl {
	for _, fd := range c.funcs {
		if fd.Pos() <= call.Pos() && call.End() <= fd.End() && c.fset.File(fd.Pos()) == c.fset.File(call.Pos()) {
			return fd
		}
	}
	return nil
}

// pieces splits the + chain e into its constant pieces and the rest.
func (c *collector) pieces(e ast.Expr) []sqlPiece {
	var out []sqlPiece
	var walk func(ast.Expr)
	walk = func(e ast.Expr) {
		if tv := c.info.Types[e]; tv.Value != nil && tv.Value.Kind() == constant.String {
			out = append(out, sqlPiece{Const: true, Text: constant.StringVal(tv.Value)})
			return
		}
		switch x := e.(type) {
		case *ast.CallExpr:
			if fn, ok := c.callee(x).(*types.Func); ok && fn.Pkg() != nil && fn.Pkg().Path() == "countersign/store" {
				if args, ok := c.constArgs(x); ok {
					out = append(out, sqlPiece{Text: types.ExprString(e), Func: fn.Name(), Args: args})
					return
				}
			}
		case *ast.ParenExpr:
			walk(x.X)
		case *ast.BinaryExpr:
			if x.Op == token.ADD {
				walk(x.X)
				walk(x.Y)
				return
			}
		}
		out = append(out, sqlPiece{Text: types.ExprString(e)})
	}
	walk(e)
	return out
}
