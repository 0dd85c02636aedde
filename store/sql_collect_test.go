package store_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sqlStatement is one SQL statement found in the store package's source,
// with where it is written.
type sqlStatement struct {
	SQL string
	Pos token.Position
}

// sqlSite is SQL built at run time: an argument of a pgx call that is not
// a constant, or a + of strings with a statement's start among its pieces.
// Its statements are not constants of the source, so the test gives values
// to its pieces that are not constants (keyed by their source text, e.g.
// `where`) and prepares what they make with its constant pieces.
type sqlSite struct {
	Key    string // file and function, e.g. "approval_queue.go:ApprovalQueue"
	Pos    token.Position
	Pieces []sqlPiece
}

// sqlPiece is a piece of a site's SQL: a constant, a call of one of the
// store's functions with constant arguments, or another expression's source
// text.
type sqlPiece struct {
	Const bool
	Text  string
	Func  string // the function called, when Args are its constant arguments
	Args  []any
}

// sqlKeyword is how a constant string that is a whole statement starts. The
// store writes SQL keywords in capitals, so prose never matches.
var sqlKeyword = regexp.MustCompile(`^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|DROP|LISTEN|LOCK|TRUNCATE|VALUES)\b`)

// sqlMethods are the pgx methods (on pools, connections, transactions and
// the store's dbtx) whose SQL argument is checked, with its index.
var sqlMethods = map[string]int{"Query": 1, "QueryRow": 1, "Exec": 1, "Prepare": 2, "Queue": 0}

// collectSQL type-checks the store package (the non-test files in the
// current directory) and returns its SQL: every constant string that is a
// whole statement, every statement a helper completes from its callers'
// constant arguments (task's lock, invocation's where), and the call sites
// whose SQL only exists at run time.
func collectSQL(t *testing.T) ([]sqlStatement, []sqlSite) {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{
		Types: map[ast.Expr]types.TypeAndValue{},
		Defs:  map[*ast.Ident]types.Object{},
		Uses:  map[*ast.Ident]types.Object{},
	}
	conf := types.Config{Importer: exportDataImporter(t, fset)}
	if _, err := conf.Check("countersign/store", fset, files, info); err != nil {
		t.Fatalf("type-checking store: %v", err)
	}
	c := &collector{fset: fset, info: info, funcs: map[types.Object]*ast.FuncDecl{}, seen: map[string]bool{}, sitesAt: map[token.Pos]bool{}}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				c.funcs[info.Defs[n.Name]] = n
			case *ast.CallExpr:
				c.calls = append(c.calls, n)
			}
			return true
		})
	}
	for _, f := range files {
		c.file(f)
	}
	return c.stmts, c.sites
}

type collector struct {
	fset  *token.FileSet
	info  *types.Info
	funcs map[types.Object]*ast.FuncDecl
	calls []*ast.CallExpr // every call in the package, for a helper's callers
	stmts []sqlStatement
	sites []sqlSite
	seen  map[string]bool
	// sitesAt holds the expressions already taken as dynamic SQL.
	sitesAt map[token.Pos]bool
}

func (c *collector) add(sql string, pos token.Pos) {
	if c.seen[sql] {
		return
	}
	c.seen[sql] = true
	c.stmts = append(c.stmts, sqlStatement{SQL: sql, Pos: c.fset.Position(pos)})
}

// file walks f's declarations for statements and sites.
func (c *collector) file(f *ast.File) {
	for _, d := range f.Decls {
		var fn *ast.FuncDecl
		if fd, ok := d.(*ast.FuncDecl); ok {
			fn = fd
		}
		var stack []ast.Node
		ast.Inspect(d, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			var parent ast.Node
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			stack = append(stack, n)
			if e, ok := n.(ast.Expr); ok {
				if tv := c.info.Types[e]; tv.Value != nil && tv.Value.Kind() == constant.String {
					if s := constant.StringVal(tv.Value); sqlKeyword.MatchString(s) && !c.fragment(parent) {
						c.add(s, e.Pos())
					}
					// A constant's pieces are not statements of their own.
					stack = stack[:len(stack)-1]
					return false
				}
			}
			if call, ok := n.(*ast.CallExpr); ok {
				c.call(fn, call)
			}
			if b, ok := n.(*ast.BinaryExpr); ok && b.Op == token.ADD && !c.fragment(parent) && c.isString(b) {
				for _, p := range c.pieces(b) {
					if p.Const && sqlKeyword.MatchString(p.Text) {
						c.dynamic(fn, b, false)
						break
					}
				}
			}
			return true
		})
	}
}

// fragment reports whether an expression (a constant, or a + of strings)
// under parent is not a statement of its own: an operand of a larger +, a const declaration's
// value (collected where it is used whole), or an argument of a strings or
// fmt function (a prefix compared, a format).
func (c *collector) fragment(parent ast.Node) bool {
	switch p := parent.(type) {
	case *ast.BinaryExpr:
		return p.Op == token.ADD
	case *ast.ParenExpr:
		return true
	case *ast.ValueSpec:
		return c.info.Defs[p.Names[0]] != nil && isConst(c.info.Defs[p.Names[0]])
	case *ast.CallExpr:
		if fn, ok := c.callee(p).(*types.Func); ok && fn.Pkg() != nil {
			return fn.Pkg().Path() == "strings" || fn.Pkg().Path() == "fmt"
		}
	}
	return false
}

func isConst(obj types.Object) bool {
	_, ok := obj.(*types.Const)
	return ok
}

// call records the SQL argument of a pgx call that is not a constant.
func (c *collector) call(fn *ast.FuncDecl, call *ast.CallExpr) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return
	}
	i, ok := sqlMethods[sel.Sel.Name]
	if !ok || i >= len(call.Args) {
		return
	}
	if arg := call.Args[i]; c.isString(arg) && c.info.Types[arg].Value == nil {
		c.dynamic(fn, arg, true)
	}
}

func (c *collector) isString(e ast.Expr) bool {
	b, ok := c.info.Types[e].Type.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

// dynamic records SQL that is not a constant: completed from the
// enclosing helper's callers when it is a whole statement sent by a pgx
// call (viaCallers) and can be, else as a site. A + outside a pgx call may
// be a builder's piece, so its function's callers are not asked.
func (c *collector) dynamic(fn *ast.FuncDecl, e ast.Expr, viaCallers bool) {
	if c.sitesAt[e.Pos()] {
		return
	}
	c.sitesAt[e.Pos()] = true
	depth := 0
	if viaCallers {
		depth = 2
	}
	if stmts, ok := c.evalCalls(fn, e, depth); ok {
		for _, s := range stmts {
			c.add(s.SQL, s.at)
		}
		return
	}
	name := "?"
	if fn != nil {
		name = fn.Name.Name
	}
	pos := c.fset.Position(e.Pos())
	c.sites = append(c.sites, sqlSite{Key: filepath.Base(pos.Filename) + ":" + name, Pos: pos, Pieces: c.pieces(e)})
}

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

// exportDataImporter imports the store's dependencies from the compiler's
// export data, as `go list -export` finds it in the build cache: much faster
// than type-checking them from source.
func exportDataImporter(t *testing.T, fset *token.FileSet) types.Importer {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %q", path)
		}
		return os.Open(file)
	})
}
